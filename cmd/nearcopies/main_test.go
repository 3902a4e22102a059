package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bowline/bowline/cmd/internal/cmdtest"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/search"
)

// gradient returns a w×h image whose pixel (x, y) is (x, y, x+y, 255):
// every pixel says where it was.
func gradient(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	return img
}

// A quarter turn clockwise takes pixel (x, y) of a w×h image to (h−1−y,
// x): the top-left corner to the top-right, not to the bottom-left where a
// transpose (a mirror) would put it. Two turns are a half turn, four none.
func TestRotate(t *testing.T) {
	const w, h = 7, 4
	src := gradient(w, h)
	// From an offset origin: the result starts at (0, 0) all the same.
	shifted := src.SubImage(image.Rect(0, 0, w, h)).(*image.RGBA)
	shifted.Rect = shifted.Rect.Add(image.Pt(3, 5))
	for _, tc := range []struct {
		quarters int
		size     image.Point
		to       func(x, y int) (int, int)
	}{
		{0, image.Pt(w, h), func(x, y int) (int, int) { return x, y }},
		{1, image.Pt(h, w), func(x, y int) (int, int) { return h - 1 - y, x }},
		{2, image.Pt(w, h), func(x, y int) (int, int) { return w - 1 - x, h - 1 - y }},
		{3, image.Pt(h, w), func(x, y int) (int, int) { return y, w - 1 - x }},
		{4, image.Pt(w, h), func(x, y int) (int, int) { return x, y }},
		{-1, image.Pt(h, w), func(x, y int) (int, int) { return y, w - 1 - x }},
	} {
		got := rotate(shifted, tc.quarters)
		if got.Bounds() != (image.Rectangle{Max: tc.size}) {
			t.Fatalf("%d quarter turns: bounds %v, want %v", tc.quarters, got.Bounds(), tc.size)
		}
		for y := range h {
			for x := range w {
				u, v := tc.to(x, y)
				if got.RGBAAt(u, v) != src.RGBAAt(x, y) {
					t.Fatalf("%d quarter turns: pixel (%d, %d) is %v at (%d, %d), want %v", tc.quarters, x, y, got.RGBAAt(u, v), u, v, src.RGBAAt(x, y))
				}
			}
		}
	}
	if got := rotate(src, 1); got.RGBAAt(h-1, 0) != src.RGBAAt(0, 0) || got.RGBAAt(0, 0) == src.RGBAAt(0, 0) {
		t.Errorf("a quarter turn clockwise should take the top-left pixel to the top-right")
	}
}

// The crop keeps the fraction of each side, rounded, inside the image; its
// place is the same for a seed and an image, differs with the seed and
// between images, and is not always the centre.
func TestCropRect(t *testing.T) {
	size := image.Pt(256, 192)
	places := map[image.Point]bool{}
	differ := 0
	for i := range 20 {
		id := fmt.Sprintf("img-%02d", i)
		r := cropRect(size, 0.8, copyRNG(1, id))
		if r.Dx() != 205 || r.Dy() != 154 || !r.In(image.Rectangle{Max: size}) {
			t.Fatalf("%s: crop %v of %v, want 205×154 inside", id, r, size)
		}
		if again := cropRect(size, 0.8, copyRNG(1, id)); again != r {
			t.Fatalf("%s: seed 1 crops %v, then %v", id, r, again)
		}
		if cropRect(size, 0.8, copyRNG(2, id)) != r {
			differ++
		}
		places[r.Min] = true
	}
	if differ < 18 || len(places) < 15 {
		t.Errorf("20 images: %d crops moved with the seed, %d places of 20; want nearly all", differ, len(places))
	}
	if r := cropRect(image.Pt(3, 3), 0.1, copyRNG(1, "x")); r.Dx() != 1 || r.Dy() != 1 {
		t.Errorf("a tenth of 3 pixels crops %v, want one pixel", r)
	}
	if r := cropRect(size, 1, copyRNG(1, "x")); r != (image.Rectangle{Max: size}) {
		t.Errorf("crop 1 is %v, want the whole image", r)
	}
}

// A near-copy is the turned photo's crop, re-encoded: the same JPEG bytes
// for a seed, others for another seed; decoded, it is the crop's size and
// near the turned pixels (JPEG at quality 95 of a smooth gradient).
func TestNearCopy(t *testing.T) {
	src := gradient(64, 48)
	tr := transform{Rotate: 90, Crop: 0.8, Quality: 95}
	a, cut, err := nearCopy(src, tr, copyRNG(7, "a"))
	if err != nil {
		t.Fatal(err)
	}
	b, cut2, err := nearCopy(src, tr, copyRNG(7, "a"))
	if err != nil || !bytes.Equal(a, b) || cut != cut2 {
		t.Fatalf("the same seed made two copies (%v, %v): %v", cut, cut2, err)
	}
	if c, _, _ := nearCopy(src, tr, copyRNG(8, "a")); bytes.Equal(a, c) {
		t.Errorf("seeds 7 and 8 made the same copy")
	}
	img, format, err := ingest.Decode(a, 0)
	if err != nil || format != "jpeg" {
		t.Fatalf("the copy decodes as %q: %v", format, err)
	}
	if got := img.Bounds().Size(); got != image.Pt(38, 51) || cut.Size() != got || !cut.In(image.Rect(0, 0, 48, 64)) {
		t.Fatalf("copy of %v at %v, want 38×51 (80%% of the turned 48×64) inside it", got, cut)
	}
	turned := rotate(src, 1)
	for _, p := range []image.Point{{0, 0}, {37, 0}, {0, 50}, {37, 50}, {19, 25}} {
		want := turned.RGBAAt(cut.Min.X+p.X, cut.Min.Y+p.Y)
		r, g, _, _ := img.At(img.Bounds().Min.X+p.X, img.Bounds().Min.Y+p.Y).RGBA()
		if d := max(absDiff(int(r>>8), int(want.R)), absDiff(int(g>>8), int(want.G))); d > 12 {
			t.Errorf("copy pixel %v is (%d, %d), the turned photo's (%d, %d)", p, r>>8, g>>8, want.R, want.G)
		}
	}
}

func absDiff(a, b int) int { return max(a-b, b-a) }

// The images drawn are distinct, ascending and in range, the same for a
// seed, others for another, all of a run smaller than n.
func TestSample(t *testing.T) {
	a := sample(1000, 100, 1)
	if len(a) != 100 || !slices.IsSorted(a) || a[0] < 0 || a[99] >= 1000 || len(slices.Compact(slices.Clone(a))) != 100 {
		t.Fatalf("sample(1000, 100, 1) = %v", a)
	}
	if !slices.Equal(a, sample(1000, 100, 1)) {
		t.Errorf("seed 1 drew twice differently")
	}
	if slices.Equal(a, sample(1000, 100, 2)) {
		t.Errorf("seeds 1 and 2 drew the same images")
	}
	if got := sample(5, 100, 1); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
		t.Errorf("100 of 5 images: %v, want all of them", got)
	}
}

// A tie never flatters the source: it ranks at the worst place of its tie,
// whatever order the search left the tie in; re-ranked, the verified come
// first by inliers, and ties are those of equal inliers and score among
// the verified, or of equal score among the others.
func TestRankOf(t *testing.T) {
	h := func(id string, score float64) search.Hit { return search.Hit{ImageID: id, Score: score} }
	v := func(id string, score float64, inliers int) search.Hit {
		return search.Hit{ImageID: id, Score: score, Inliers: inliers, Verified: true}
	}
	for _, tc := range []struct {
		name     string
		hits     []search.Hit
		reranked bool
		want     int
	}{
		{"alone first", []search.Hit{h("s", .9), h("a", .5)}, false, 1},
		{"second", []search.Hit{h("a", .9), h("s", .5), h("b", .4)}, false, 2},
		{"tied first of three", []search.Hit{h("s", .9), h("a", .9), h("b", .9), h("c", .1)}, false, 3},
		{"tied, listed last", []search.Hit{h("a", .9), h("b", .9), h("s", .9)}, false, 3},
		{"tied for second", []search.Hit{h("a", .95), h("s", .9), h("b", .9), h("c", .5)}, false, 3},
		{"not matched", []search.Hit{h("a", .9), h("b", .5)}, false, 50},
		{"verified first", []search.Hit{v("s", .2, 30), v("a", .9, 12), h("b", .95)}, true, 1},
		{"verified by inliers", []search.Hit{v("a", .1, 31), v("s", .9, 30), h("b", .95)}, true, 2},
		{"verified tie of inliers and score", []search.Hit{v("s", .5, 30), v("a", .5, 30), v("b", .4, 30)}, true, 2},
		{"verified equal inliers, higher score wins", []search.Hit{v("s", .6, 30), v("a", .5, 30)}, true, 1},
		{"unverified after every verified", []search.Hit{v("a", .1, 5), h("s", .9), h("b", .8)}, true, 2},
		{"unverified tie of score", []search.Hit{v("a", .1, 5), h("s", .9), h("b", .9), h("c", .8)}, true, 3},
		{"inliers below the least do not count", []search.Hit{h("s", .9), {ImageID: "a", Score: .95, Inliers: 4}}, true, 2},
		{"plain ignores inliers", []search.Hit{v("a", .5, 3), v("s", .5, 40), h("b", .9)}, false, 3},
	} {
		got, hit, ok := rankOf(tc.hits, "s", tc.reranked, 50)
		if got != tc.want {
			t.Errorf("%s: rank %d, want %d", tc.name, got, tc.want)
		}
		if ok != (tc.want != 50) || (ok && hit.ImageID != "s") {
			t.Errorf("%s: the source's hit %v, %v", tc.name, hit, ok)
		}
	}
}

func TestMedianPercentile(t *testing.T) {
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("median of 5, 1, 3 = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4, 1, 3, 2 = %v", m)
	}
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = float64(20 - i) // 20 … 1
	}
	if p := percentile(xs, 95); p != 19 {
		t.Errorf("95th percentile of 1…20 = %v, want 19", p)
	}
	if p := percentile(xs, 50); p != 10 {
		t.Errorf("50th percentile of 1…20 = %v, want 10", p)
	}
}

// shapesRun runs the job on the project's shapes, once for the package's
// tests, as cmd/serve's tests do (by cmd/bowline, so that this test binary
// stays free of Beam); it returns the run's directory. The input is
// relative, so the run's image locations are relative to this directory.
var shapesRun = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "nearcopies-test-")
	if err != nil {
		return "", err
	}
	jobDir = dir
	return dir, cmdtest.ShapesJob(filepath.Join("..", "..", "testdata", "shapes", "labels.csv"), dir, "--max_side", "128")
})

// jobDir is shapesRun's directory, once it has made one: TestMain removes
// it.
var jobDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if jobDir != "" {
		os.RemoveAll(jobDir)
	}
	os.Exit(code)
}

// The driver's ranks are those of the copy searched directly: each copy,
// made again from its seed, searched with the search package, finds its
// source at the place the driver reports, ties counted against it (the
// source's place in the hits plus the later hits it ties with); the table
// sums the copies.
func TestRanksAreTheSearchs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the job")
	}
	dir, err := shapesRun()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, stdout, _ := runOut(t, "--run", dir, "--n", "12", "--seed", "5", "--methods", "tfidf,solis-ada", "--rerank", "20", "--near", "4", "--expand", "3")
	ix, err := search.Open(ctx, dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Copies) != 12 || len(res.Rows) != 8 {
		t.Fatalf("%d copies, %d rows; want 12 and 8", len(res.Copies), len(res.Rows))
	}
	refines := map[string]search.Refine{"": {}, "+sv": {Rerank: 20}, "+sv+nc": {Rerank: 20, NearCopies: 4}, "+sv+qe": {Rerank: 20, Expand: 3}}
	first := map[string]int{}
	for _, c := range res.Copies {
		if c.Error != "" || len(c.Queries) != 8 {
			t.Fatalf("%s: %q, %d queries", c.ImageID, c.Error, len(c.Queries))
		}
		uri, _ := ix.URI(c.ImageID)
		data, err := os.ReadFile(uri)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := ingest.Decode(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		photo, cut, err := nearCopy(img, transform{Rotate: 90, Crop: 0.8, Quality: 75}, copyRNG(5, c.ImageID))
		if err != nil {
			t.Fatal(err)
		}
		if [4]int{cut.Min.X, cut.Min.Y, cut.Max.X, cut.Max.Y} != c.Crop {
			t.Fatalf("%s: crop %v, the driver's %v", c.ImageID, cut, c.Crop)
		}
		for _, q := range c.Queries {
			method, suffix, _ := strings.Cut(q.Method, "+")
			if suffix != "" {
				suffix = "+" + suffix
			}
			r := refines[suffix]
			direct, err := ix.SearchImageRefined(ctx, method, photo, 0, r)
			if err != nil {
				t.Fatalf("%s, %s: %v", c.ImageID, q.Method, err)
			}
			want := res.Images // not matched: last
			at := slices.IndexFunc(direct.Hits, func(h search.Hit) bool { return h.ImageID == c.ImageID })
			if at >= 0 {
				src := direct.Hits[at]
				want = at + 1
				for _, h := range direct.Hits[at+1:] {
					if h.Score == src.Score && (r.Rerank == 0 || h.Verified == src.Verified && (!src.Verified || h.Inliers == src.Inliers)) {
						want++
					}
				}
			}
			var top string
			if len(direct.Hits) > 0 {
				top = direct.Hits[0].ImageID
			}
			if q.Rank != want || q.Matched != direct.Matched || q.Top != top {
				t.Errorf("%s, %s: the driver ranks the source %d of %d matched (top %s); searched directly, %d of %d (top %s)",
					c.ImageID, q.Method, q.Rank, q.Matched, q.Top, want, direct.Matched, top)
			}
			if want == 1 {
				first[q.Method]++
			}
		}
	}
	for _, rw := range res.Rows {
		if rw.Copies != 12 || rw.First != first[rw.Method] || rw.Failed != 0 {
			t.Errorf("row %+v: want 12 copies, %d first", rw, first[rw.Method])
		}
		if !strings.Contains(stdout, "\n"+rw.Method+" ") {
			t.Errorf("the table has no row %s:\n%s", rw.Method, stdout)
		}
	}
	t.Logf("\n%s", stdout)
}

// A source that cannot be read is a miss at the last rank, told with its
// reason on stderr, never skipped: the table counts it.
func TestUnreadableSourcesAreMisses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the job")
	}
	dir, err := shapesRun()
	if err != nil {
		t.Fatal(err)
	}
	res, _, stderr := runOut(t, "--run", dir, "--n", "3", "--methods", "tfidf", "--rerank", "0", "--image_root", t.TempDir())
	if n := strings.Count(stderr, "(a miss)"); n != 3 || !strings.Contains(stderr, "no such file") {
		t.Errorf("%d misses told, want 3 with their reason:\n%s", n, stderr)
	}
	if len(res.Rows) != 1 || res.Rows[0].Copies != 3 || res.Rows[0].Failed != 3 || res.Rows[0].First != 0 || res.Rows[0].MedianRank != float64(res.Images) {
		t.Errorf("rows %+v, want 3 copies, 3 failed at rank %d", res.Rows, res.Images)
	}
}

// runOut runs the driver with args and --out, and returns what it wrote
// there, its stdout and its stderr; it fails the test unless the driver
// exits 0.
func runOut(t *testing.T, args ...string) (res output, stdout, stderr string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "copies.json")
	var o, e bytes.Buffer
	if code := run(context.Background(), append(args, "--out", out), &o, &e); code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	js, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &res); err != nil {
		t.Fatal(err)
	}
	return res, o.String(), e.String()
}

// A bad command line is refused in one line, exit 2, before the run is
// read.
func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--run", "/nonexistent", "--n", "0"},
		{"--run", "/nonexistent", "--rotate", "45"},
		{"--run", "/nonexistent", "--crop", "0"},
		{"--run", "/nonexistent", "--crop", "1.2"},
		{"--run", "/nonexistent", "--quality", "0"},
		{"--run", "/nonexistent", "--rerank", "-1"},
		{"--run", "/nonexistent", "--rerank", "0", "--expand", "5"},
		{"--run", "/nonexistent", "--rerank", "0", "--near", "5"},
		{"--run", "/nonexistent", "--near", "-1"},
		{"--run", "/nonexistent", "--near_words", "0"},
		{"--run", "/nonexistent", "--methods", ","},
		{"--run", "/nonexistent", "extra"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "nearcopies: ") {
			t.Errorf("%q: exit %d, stderr:\n%s", args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--run", "/nonexistent/run"}, &stdout, &stderr); code != 1 || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("a missing run: exit %d, stderr:\n%s", code, stderr.String())
	}
}
