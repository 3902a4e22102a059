package search

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/describe"
)

// countdown is a context that is done from its n-th Err call on, so that
// a search is cancelled at a chosen point of its work, not at a chosen
// time.
type countdown struct {
	context.Context
	n, calls int
}

func (c *countdown) Err() error {
	c.calls++
	if c.calls >= c.n {
		return context.DeadlineExceeded
	}
	return nil
}

// describedPhoto returns a 160×120 texture photo, its features as the
// job describes them, and its descriptors end to end, for quantising.
func describedPhoto(t *testing.T) (photo []byte, feat formats.Features, flat []byte) {
	t.Helper()
	photo = texturePNG(t, 160, 120)
	d, err := describe.NewDescriber(describe.DefaultOptions(), func(context.Context, string) ([]byte, error) { return photo, nil })
	if err != nil {
		t.Fatal(err)
	}
	feat, dead := d.Describe(context.Background(), formats.Image{ImageID: "photo", URI: "photo.png"})
	if dead != nil {
		t.Fatal(dead.Reason)
	}
	for _, desc := range feat.Descriptors {
		flat = append(flat, desc...)
	}
	return photo, feat, flat
}

// texturePNG returns a w×h PNG of texture.
func texturePNG(t testing.TB, w, h int) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, texture(w, h)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// texture returns a w×h image of random grey 4×4 blocks: keypoints
// everywhere.
func texture(w, h int) *image.Gray {
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y += 4 {
		for x := 0; x < w; x += 4 {
			v := uint8(rng.IntN(256))
			for dy := y; dy < min(y+4, h); dy++ {
				for dx := x; dx < min(x+4, w); dx++ {
					img.Pix[dy*w+dx] = v
				}
			}
		}
	}
	return img
}

// A photo search past its deadline stops inside the description, not
// after it: the service's --timeout holds for photos (issue 21: a noise
// photo ran 50 s past a 1 s timeout).
func TestSearchImageStopsWhenCancelled(t *testing.T) {
	c := randomCorpus(30, 10, 3)
	dir := t.TempDir()
	writeRun(t, dir, c, 1, nil)
	ix := openRun(t, dir, Options{})
	photo := texturePNG(t, 200, 200)
	live := &countdown{Context: context.Background(), n: 1 << 30}
	if _, err := ix.SearchImage(live, "dense", photo, 3); err != nil {
		t.Fatal(err)
	}
	// Before decoding and after it, then in SIFT and quantisation.
	if live.calls < 5 {
		t.Fatalf("the context was looked at %d times in a photo search", live.calls)
	}
	for n := 3; n <= live.calls; n++ {
		ctx := &countdown{Context: context.Background(), n: n}
		res, err := ix.SearchImage(ctx, "dense", photo, 3)
		if !errors.Is(err, context.DeadlineExceeded) || res.Hits != nil {
			t.Fatalf("done at look %d of %d: %v, %v", n, live.calls, res, err)
		}
	}
	// The worker a cancelled search used serves the next one as if new.
	a, err1 := ix.SearchImage(context.Background(), "dense", photo, 3)
	b, err2 := openRun(t, dir, Options{}).SearchImage(context.Background(), "dense", photo, 3)
	if err1 != nil || err2 != nil || len(a.Hits) == 0 || !slices.Equal(a.Hits, b.Hits) || a.Matched != b.Matched {
		t.Fatalf("after cancelled searches: %v %v, a fresh index: %v %v", a, err1, b, err2)
	}
}

// A photo without features (a single pixel, a uniform square) is refused
// with ErrNoFeatures, not answered with every image at score 0.
func TestNoFeatures(t *testing.T) {
	c := randomCorpus(30, 10, 3)
	dir := t.TempDir()
	writeRun(t, dir, c, 1, nil)
	ix := openRun(t, dir, Options{})
	uniform := func(w, h int) []byte {
		img := image.NewGray(image.Rect(0, 0, w, h))
		for i := range img.Pix {
			img.Pix[i] = 128
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	dot := image.NewGray(image.Rect(0, 0, 1, 1))
	dot.Set(0, 0, color.White)
	var one bytes.Buffer
	png.Encode(&one, dot)
	for name, data := range map[string][]byte{"1x1": one.Bytes(), "uniform 300x200": uniform(300, 200)} {
		res, err := ix.SearchImage(context.Background(), "dense", data, 3)
		if !errors.Is(err, ErrNoFeatures) || res.Hits != nil {
			t.Errorf("%s: %v, %v; want ErrNoFeatures", name, res, err)
		}
	}
}

// Quantised in batches, a photo's descriptors get the counts they get all
// at once: the words of the job's bag of words.
func TestQuantizeBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const vocab, dim = 20, formats.DescriptorSize
	cents := make([]float32, vocab*dim)
	for i := range cents {
		cents[i] = float32(rng.IntN(256))
	}
	q, err := bow.NewQuantizer(cents, dim)
	if err != nil {
		t.Fatal(err)
	}
	desc := make([]byte, 101*dim)
	for i := range desc {
		desc[i] = byte(rng.IntN(256))
	}
	want := q.Quantize(desc)
	for _, batch := range []int{1, 7, 100, 101, 1000} {
		got, err := quantizeBatches(context.Background(), q, desc, batch, nil)
		if err != nil || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) {
			t.Fatalf("batches of %d: %v %v, want %v", batch, got, err, want)
		}
		// With the hard words too (for the photo's keypoints): the same
		// counts, from the same search, and every descriptor's word.
		var words []uint32
		_, wantWords := q.QuantizeWords(desc, nil)
		got, err = quantizeBatches(context.Background(), q, desc, batch, &words)
		if err != nil || !slices.Equal(got.Idx, want.Idx) || !slices.Equal(got.Val, want.Val) || !slices.Equal(words, wantWords) {
			t.Fatalf("batches of %d with words: %v %v %v, want %v %v", batch, got, words, err, want, wantWords)
		}
	}
	ctx := &countdown{Context: context.Background(), n: 3}
	if _, err := quantizeBatches(ctx, q, desc, 7, nil); !errors.Is(err, context.DeadlineExceeded) || ctx.calls != 3 {
		t.Fatalf("done before the third batch: %v after %d looks", err, ctx.calls)
	}
}

// Options.MaxPixels lowers the run's pixel limit and never raises it.
func TestMaxPixelsOnlyLowers(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, randomCorpus(30, 10, 3), 1, map[string]string{"max_pixels": "10000"})
	ix := openRun(t, dir, Options{MaxPixels: 16_000_000})
	if _, err := ix.SearchImage(context.Background(), "dense", pngOf(t, 101, 100), 3); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a photo over the run's limit, under Options.MaxPixels: %v", err)
	}
}

// A photo over the pixel limit says "image too large" once, not twice.
func TestTooLargeSaysItOnce(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, randomCorpus(30, 10, 3), 1, map[string]string{"max_pixels": "10000"})
	_, err := openRun(t, dir, Options{}).SearchImage(context.Background(), "dense", pngOf(t, 101, 100), 3)
	if !errors.Is(err, ErrTooLarge) || strings.Count(err.Error(), "too large") != 1 {
		t.Fatalf("%v", err)
	}
}
