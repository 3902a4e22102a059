package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// fakeIndex is an Index over a fixed list of ids whose scores are a hash of
// the query and the hit. It checks what the real index checks — learner,
// id, decodable image, pixel limit — so that the handler's statuses can be
// tested without a run. Hooks make searches block or panic.
type fakeIndex struct {
	run       string
	ids       []string
	learners  []string
	serving   string
	uris      map[string]string
	maxPixels int64
	// entered, if not nil, receives a value when a search starts; then the
	// search waits for release (or its context, for SearchImage).
	entered chan<- struct{}
	release <-chan struct{}
	// panicID makes SearchID panic for that id.
	panicID string
	// photosOnly makes only photo searches wait for release.
	photosOnly bool
	// noGeometry makes a search with rerank or expand fail as a run
	// without geometry files does.
	noGeometry bool
	// refined receives each search's Refine, if not nil.
	refined chan Refine
}

func newFake(run string, n int) *fakeIndex {
	f := &fakeIndex{run: run, learners: []string{"solis-ada", "tfidf"}, uris: map[string]string{}, maxPixels: 1 << 20}
	for i := range n {
		f.ids = append(f.ids, fmt.Sprintf("class%d/img%02d.png", i%3, i))
	}
	return f
}

func (f *fakeIndex) Run() string        { return f.run }
func (f *fakeIndex) Learners() []string { return f.learners }

func (f *fakeIndex) ServingLearner() string {
	if f.serving != "" {
		return f.serving
	}
	return f.learners[0]
}
func (f *fakeIndex) Images() int        { return len(f.ids) }
func (f *fakeIndex) MemoryBytes() int64 { return int64(len(f.ids)) * 100 }

func (f *fakeIndex) URI(id string) (string, bool) {
	u, ok := f.uris[id]
	return u, ok
}

func (f *fakeIndex) wait(ctx context.Context) error {
	if f.entered == nil {
		return nil
	}
	f.entered <- struct{}{}
	select {
	case <-f.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Label is the class the fake's ids start with.
func (f *fakeIndex) Label(id string) (string, bool) {
	if !slices.Contains(f.ids, id) {
		return "", false
	}
	label, _, _ := strings.Cut(id, "/")
	return label, true
}

func (f *fakeIndex) SearchID(learner, id string, k int, r Refine) (Found, error) {
	if !slices.Contains(f.learners, learner) {
		return Found{}, fmt.Errorf("%w %q", errUnknownLearner, learner)
	}
	if err := f.refine(r); err != nil {
		return Found{}, err
	}
	if !slices.Contains(f.ids, id) {
		return Found{}, fmt.Errorf("%w %q", errUnknownImage, id)
	}
	if id == f.panicID {
		panic("fake index: " + id)
	}
	if f.photosOnly {
		return f.found(learner+id, k, r), nil
	}
	if err := f.wait(context.Background()); err != nil {
		return Found{}, err
	}
	return f.found(learner+id, k, r), nil
}

// refine records r, and refuses it as a run without geometry does.
func (f *fakeIndex) refine(r Refine) error {
	if f.refined != nil {
		f.refined <- r
	}
	if f.noGeometry && r != (Refine{}) {
		return fmt.Errorf("%w: no keypoint geometry loaded", errCannotRefine)
	}
	return nil
}

func (f *fakeIndex) SearchImage(ctx context.Context, learner string, data []byte, k int, r Refine) (Found, error) {
	if !slices.Contains(f.learners, learner) {
		return Found{}, fmt.Errorf("%w %q", errUnknownLearner, learner)
	}
	if err := f.refine(r); err != nil {
		return Found{}, err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Found{}, fmt.Errorf("%w: %v", errBadImage, err)
	}
	if int64(cfg.Width)*int64(cfg.Height) > f.maxPixels {
		return Found{}, fmt.Errorf("%w: %d×%d", errTooLarge, cfg.Width, cfg.Height)
	}
	if err := f.wait(ctx); err != nil {
		return Found{}, err
	}
	return f.found(learner+string(data), k, r), nil
}

// found is rank's answer: every fake score is positive, so every image
// matches. With r.Rerank, the fake's verification finds 100 + rank
// inliers in the best Rerank.
func (f *fakeIndex) found(q string, k int, r Refine) Found {
	hits := f.rank(q, k)
	for i := range hits[:min(r.Rerank, len(hits))] {
		hits[i].Inliers = 100 + i
	}
	return Found{Hits: hits, Matched: len(f.ids)}
}

// rank scores every id by a hash of the query and returns the top k.
func (f *fakeIndex) rank(q string, k int) []Hit {
	hits := make([]Hit, len(f.ids))
	for i, id := range f.ids {
		h := fnv.New64a()
		io.WriteString(h, q+"\x00"+id)
		label, _ := f.Label(id)
		hits[i] = Hit{ImageID: id, Label: label, Score: float64(h.Sum64()%1e6+1) / 1e6}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(k, len(hits))]
}

// testConfig is a server configuration with small limits.
func testConfig() Config {
	return Config{MaxBody: 64 << 10, MaxPixels: 1 << 20, Timeout: 5 * time.Second, MaxInflight: 4, QueueWait: 50 * time.Millisecond, MaxK: 100}
}

// quietLog drops the server's log, unless the test is verbose.
func quietLog(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(string(bytes.TrimSpace(b)))
	return len(b), nil
}

// pngBytes returns a w×h PNG with a gradient.
func pngBytes(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x * 255 / max(1, w-1)), uint8(y * 255 / max(1, h-1)), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
