package describe

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/cpuclock"
	"github.com/bowline/bowline/transforms/internal/testkit"
)

// BenchmarkDoubling measures what SIFT's doubling costs description on the
// photos of $BOWLINE_BENCH_PHOTOS (a glob; the first $BOWLINE_BENCH_N of
// them, sorted, if set): each photo is read into memory, then decoded and
// described by a Describer with the job's defaults (DefaultOptions:
// doubled below 512) and by one that doubles every image, in alternating
// order from photo to photo. It reports, for each, the thread CPU time of
// a photo's description (mean, milliseconds) and its keypoints (mean):
//
//	BOWLINE_BENCH_PHOTOS='/tmp/sizes-cam/images/*/*.jpg' go test -run '^$' -bench Doubling -benchtime 1x -cpu 1 ./transforms/describe/
func BenchmarkDoubling(b *testing.B) {
	paths, data := testkit.BenchFiles(b, "BOWLINE_BENCH_PHOTOS")
	files := map[string][]byte{}
	for i, p := range paths {
		files[p] = data[i]
	}
	read := func(_ context.Context, uri string) ([]byte, error) { return files[uri], nil }
	every := DefaultOptions()
	every.SIFT.DoubleBelow = 0
	var sides [2]struct {
		name      string
		d         *Describer
		cpu       time.Duration
		keypoints int
	}
	for i, o := range []Options{DefaultOptions(), every} {
		d, err := NewDescriber(o, read)
		if err != nil {
			b.Fatal(err)
		}
		sides[i].name, sides[i].d = []string{"default", "every"}[i], d
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, ok := cpuclock.Thread(); !ok {
		b.Skip("no thread CPU clock here")
	}
	ctx := context.Background()
	photos := 0
	for range b.N {
		for i, p := range paths {
			for k := range 2 {
				s := &sides[(i+k)%2]
				c0, _ := cpuclock.Thread()
				f, dead := s.d.Describe(ctx, formats.Image{ImageID: p, URI: p})
				c1, _ := cpuclock.Thread()
				if dead != nil {
					b.Fatalf("%s: %s", p, dead.Reason)
				}
				s.cpu += c1 - c0
				s.keypoints += len(f.X)
			}
			photos++
		}
	}
	for _, s := range sides {
		b.ReportMetric(float64(s.cpu)/float64(time.Millisecond)/float64(photos), s.name+"-cpu-ms/photo")
		b.ReportMetric(float64(s.keypoints)/float64(photos), s.name+"-keypoints/photo")
	}
	fmt.Fprintf(os.Stderr, "doubling: %d photos of %s\n", len(paths), os.Getenv("BOWLINE_BENCH_PHOTOS"))
}
