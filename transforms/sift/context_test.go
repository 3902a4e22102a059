package sift

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
)

// countdown is a context that is done from its n-th Err call on: it
// cancels an extraction at a chosen checkpoint, not at a chosen time.
type countdown struct {
	context.Context
	n, calls int
}

func (c *countdown) Err() error {
	c.calls++
	if c.n > 0 && c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// ExtractContext gives Extract's output while its context is live, and
// stops with the context's error at every checkpoint: in the blurs, the
// extremum scans and the descriptors alike.
func TestExtractContext(t *testing.T) {
	im := texture(300, 220, 3)
	e := mustExtractor(t, DefaultOptions())
	want, wantDesc := e.Extract(im)
	live := &countdown{Context: context.Background()}
	got, desc, err := e.ExtractContext(live, im)
	if err != nil || !slices.Equal(got, want) || !bytes.Equal(desc, wantDesc) {
		t.Fatalf("with a live context: %d keypoints, %v; want Extract's %d", len(got), err, len(want))
	}
	// The blurs of every octave, its scan's row blocks and the descriptor
	// batches each look once.
	if live.calls < 20 {
		t.Fatalf("the context was looked at %d times", live.calls)
	}
	for n := 1; n <= live.calls; n++ {
		c := &countdown{Context: context.Background(), n: n}
		kps, desc, err := e.ExtractContext(c, im)
		if !errors.Is(err, context.Canceled) || kps != nil || desc != nil {
			t.Fatalf("cancelled at check %d of %d: %d keypoints, %v", n, live.calls, len(kps), err)
		}
		// Each step returns at once: a scan to its octave's loop, which
		// looks again before its next blur, then Extract, then
		// ExtractContext.
		if c.calls > n+3 {
			t.Fatalf("cancelled at check %d, went on to check %d", n, c.calls)
		}
	}
	// A cancelled extraction leaves the Extractor as good as new.
	if got, desc := e.Extract(im); !slices.Equal(got, want) || !bytes.Equal(desc, wantDesc) {
		t.Fatal("Extract after a cancelled extraction differs")
	}
}
