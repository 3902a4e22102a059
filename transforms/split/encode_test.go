package split

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCutAndEncoding selects over random datasets the way the job does:
// each worker offers its share to a selector, encodes it, and the decoded
// selectors are merged. The merged Cut must classify every image exactly
// as Queries does, and count the split.
func TestCutAndEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		d := build(randomSizes(r), r.IntN(5)).shuffled(r)
		seed, fraction := r.Uint64(), []float64{0, 0.1, 0.2, 0.5, 1}[r.IntN(5)]
		want, err := Queries(d.ids, d.labels, seed, fraction)
		if err != nil {
			t.Fatal(err)
		}
		workers := 1 + r.IntN(4)
		var merged *Selector
		for w := range workers {
			s, err := NewSelector(seed, fraction, d.counts())
			if err != nil {
				t.Fatal(err)
			}
			for i := w; i < len(d.ids); i += workers {
				if err := s.Offer(d.ids[i], d.labels[i]); err != nil {
					t.Fatal(err)
				}
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			again, _ := s.MarshalBinary()
			if !bytes.Equal(b, again) {
				t.Fatalf("trial %d: two encodings of one selector differ", trial)
			}
			var dec Selector
			if err := dec.UnmarshalBinary(b); err != nil {
				t.Fatalf("trial %d: %v", trial, err)
			}
			if merged == nil {
				merged = &dec
			} else if err := merged.Merge(&dec); err != nil {
				t.Fatal(err)
			}
		}
		cut, err := merged.Cut()
		if err != nil {
			t.Fatal(err)
		}
		labelled := 0
		for i, id := range d.ids {
			if got := cut.IsQuery(id, d.labels[i]); got != want[id] {
				t.Fatalf("trial %d: image %s (label %q): IsQuery %v, Queries says %v", trial, id, d.labels[i], got, want[id])
			}
			if d.labels[i] != "" {
				labelled++
			}
		}
		if cut.Queries != int64(len(want)) || cut.Images != int64(labelled) {
			t.Errorf("trial %d: cut counts %d queries of %d images, want %d of %d", trial, cut.Queries, cut.Images, len(want), labelled)
		}
		if len(cut.Labels) > len(d.counts()) {
			t.Errorf("trial %d: cut holds %d labels, more than the %d there are", trial, len(cut.Labels), len(d.counts()))
		}
	}
}

func TestCutIncomplete(t *testing.T) {
	s, err := NewSelector(1, 0.5, map[string]int{"a": 3})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Offer("x", "a")
	if _, err := s.Cut(); err == nil {
		t.Error("Cut of a selector offered 1 of 3 images: no error")
	}
}

func TestZeroCutHoldsOutNothing(t *testing.T) {
	if (Cut{}).IsQuery("img", "label") {
		t.Error("the zero Cut holds out an image")
	}
}

func TestUnmarshalRejects(t *testing.T) {
	s, _ := NewSelector(7, 0.3, map[string]int{"a": 10, "b": 4})
	for i, l := range []string{"a", "a", "b", "a"} {
		_ = s.Offer(string(rune('p'+i)), l)
	}
	b, _ := s.MarshalBinary()
	for n := range len(b) {
		var d Selector
		if err := d.UnmarshalBinary(b[:n]); err == nil {
			t.Errorf("decoding %d of %d bytes: no error", n, len(b))
		}
	}
	var d Selector
	if err := d.UnmarshalBinary(append(b, 0)); err == nil {
		t.Error("decoding with a byte left over: no error")
	}
}
