package ingest

import (
	"bytes"
	"image/jpeg"
	"runtime"
	"testing"
	"time"

	"github.com/bowline/bowline/transforms/cpuclock"
	"github.com/bowline/bowline/transforms/internal/testkit"
)

// BenchmarkDecodeLuma times DecodeLuma (full size, and reduced for
// describe's --max_side 1024) against image/jpeg on the JPEGs of $BOWLINE_BENCH_JPEGS
// (a glob, e.g. a cmd/mkcorpus --size 4000x3000 corpus's images/*/*.jpg;
// the first $BOWLINE_BENCH_N of them, sorted, if set),
// reporting the thread CPU time a decode takes beside the wall time (on a
// busy machine the wall time includes waiting for a core). DecodeLuma's
// images are released, as describe releases them:
//
//	BOWLINE_BENCH_JPEGS='/tmp/camera/images/*/*.jpg' go test -run '^$' -bench DecodeLuma -cpu 1 ./transforms/ingest/
func BenchmarkDecodeLuma(b *testing.B) {
	_, files := testkit.BenchFiles(b, "BOWLINE_BENCH_JPEGS")
	b.Run("image-jpeg", func(b *testing.B) {
		defer cpuPerOp(b)()
		for i := range b.N {
			if _, err := jpeg.Decode(bytes.NewReader(files[i%len(files)])); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, minSide := range []int{0, 1024} {
		b.Run("luma-"+map[int]string{0: "full", 1024: "max1024"}[minSide], func(b *testing.B) {
			var d Decoder
			defer cpuPerOp(b)()
			for i := range b.N {
				l, err := d.DecodeLuma(files[i%len(files)], minSide)
				if err != nil {
					b.Fatal(err)
				}
				l.Release()
			}
		})
	}
}

// cpuPerOp locks the benchmark to its thread and returns a function that
// reports the thread's CPU time per operation as cpu-ms/op.
func cpuPerOp(b *testing.B) func() {
	runtime.LockOSThread()
	c0, ok := cpuclock.Thread()
	return func() {
		c1, _ := cpuclock.Thread()
		runtime.UnlockOSThread()
		if ok {
			b.ReportMetric(float64(c1-c0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		}
	}
}
