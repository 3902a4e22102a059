package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

// csr returns the postings of docs under w (nil: every weight one) in the
// arrays FromPostings takes, built without Build: word by word, scanning
// every document.
func csr(docs []sparse.Vector, w []float32, vocab int) (weight []float32, start []int, ords []int32, vals []float32) {
	weight = make([]float32, vocab)
	start = make([]int, 1, vocab+1)
	for i := range vocab {
		weight[i] = 1
		if w != nil {
			weight[i] = w[i]
		}
		for d, x := range docs {
			if k, ok := slices.BinarySearch(x.Idx, uint32(i)); ok && weight[i] != 0 && x.Val[k] != 0 {
				ords, vals = append(ords, int32(d)), append(vals, x.Val[k])
			}
		}
		start = append(start, len(ords))
	}
	return weight, start, ords, vals
}

// An index from postings laid out as Build lays them out is Build's index:
// the same postings, and the same rankings — scores, order, ties — for
// every k, whether or not a query excludes its own document.
func TestFromPostingsIsBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 5 {
		vocab, ndocs := 10+rng.IntN(50), 1+rng.IntN(200)
		docs := make([]sparse.Vector, ndocs)
		for d := range docs {
			docs[d] = randVec(rng, vocab, 0.2)
			for k := range docs[d].Val {
				if rng.IntN(10) == 0 {
					docs[d].Val[k] = 0 // not a posting
				}
			}
		}
		var w []float32
		if trial%2 == 1 {
			w = make([]float32, vocab)
			for i := range w {
				w[i] = float32(rng.IntN(3)) - 0.5*float32(rng.IntN(2)) // zeros, negatives
			}
		}
		ids := names(ndocs)
		want, err := Build(ids, docs, w, vocab)
		if err != nil {
			t.Fatal(err)
		}
		weight, start, ords, vals := csr(docs, w, vocab)
		got, err := FromPostings(ids, weight, start, ords, vals)
		if err != nil {
			t.Fatal(err)
		}
		if got.Words() != want.Words() || got.Docs() != want.Docs() || got.NNZ() != want.NNZ() {
			t.Fatalf("trial %d: %d words, %d docs, %d postings; Build has %d, %d, %d",
				trial, got.Words(), got.Docs(), got.NNZ(), want.Words(), want.Docs(), want.NNZ())
		}
		for i := range uint32(vocab) {
			gd, gv := got.Postings(i)
			wd, wv := want.Postings(i)
			if got.Weight(i) != want.Weight(i) || !slices.Equal(gd, wd) || !slices.Equal(gv, wv) {
				t.Fatalf("trial %d, word %d: weight %v, postings %v %v; Build: %v, %v %v", trial, i, got.Weight(i), gd, gv, want.Weight(i), wd, wv)
			}
		}
		gs, ws := got.NewSearcher(), want.NewSearcher()
		for q := range docs {
			for _, k := range []int{1, 5, ndocs / 2, 0} {
				exclude := q
				if q%3 == 0 {
					exclude = -1
				}
				g, w := gs.Search(docs[q], k, exclude), ws.Search(docs[q], k, exclude)
				if !slices.Equal(g, w) {
					t.Fatalf("trial %d, query %d, k=%d: %v, Build's index ranks %v", trial, q, k, g, w)
				}
			}
		}
	}
}

// FromPostings keeps the arrays it is given, and ids may be shared.
func TestFromPostingsShares(t *testing.T) {
	ids := []string{"a", "b", "c"}
	weight, start, docs, vals := []float32{2, 1}, []int{0, 2, 3}, []int32{0, 2, 1}, []float32{0.5, 0.25, 1}
	x, err := FromPostings(ids, weight, start, docs, vals)
	if err != nil {
		t.Fatal(err)
	}
	y, err := FromPostings(ids, []float32{0, 3}, []int{0, 0, 1}, []int32{2}, []float32{4})
	if err != nil {
		t.Fatal(err)
	}
	if d, v := x.Postings(0); &d[0] != &docs[0] || &v[0] != &vals[0] {
		t.Error("FromPostings copied the postings")
	}
	hits := x.NewSearcher().Search(sparse.Vector{Idx: []uint32{0, 1}, Val: []float32{1, 1}}, 0, -1)
	want := []Hit{{0, "a", 1}, {1, "b", 1}, {2, "c", 0.5}}
	if !slices.Equal(hits, want) {
		t.Errorf("x ranks %v, want %v", hits, want)
	}
	hits = y.NewSearcher().Search(sparse.Vector{Idx: []uint32{1}, Val: []float32{1}}, 1, -1)
	if !slices.Equal(hits, []Hit{{2, "c", 12}}) {
		t.Errorf("y ranks %v, want c at 12", hits)
	}
}

func TestFromPostingsErrors(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	ids := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name   string
		ids    []string
		weight []float32
		start  []int
		docs   []int32
		vals   []float32
		want   string
	}{
		{"offsets", ids, []float32{1, 1}, []int{0, 1}, []int32{0}, []float32{1}, "2 offsets for a vocabulary of 2 words, want 3"},
		{"values", ids, []float32{1}, []int{0, 1}, []int32{0}, nil, "1 ordinals but 0 values"},
		{"first offset", ids, []float32{1}, []int{1, 1}, []int32{0}, []float32{1}, "offsets from 1 to 1"},
		{"last offset", ids, []float32{1}, []int{0, 1}, []int32{0, 1}, []float32{1, 1}, "offsets from 0 to 1, want from 0 to the 2"},
		{"descending offsets", ids, []float32{1, 1, 1}, []int{0, 2, 1, 2}, []int32{0, 1}, []float32{1, 1}, "offsets of word 1, [2, 1)"},
		{"offset beyond", ids, []float32{1, 1, 1}, []int{0, 3, 1, 2}, []int32{0, 1}, []float32{1, 1}, "offsets of word 0, [0, 3)"},
		{"NaN weight", ids, []float32{1, nan}, []int{0, 1, 1}, []int32{0}, []float32{1}, "weight of word 1 is NaN"},
		{"infinite weight", ids, []float32{inf}, []int{0, 0}, nil, nil, "weight of word 0 is +Inf"},
		{"ordinal beyond", ids, []float32{1}, []int{0, 2}, []int32{1, 3}, []float32{1, 1}, "ordinal 3 after 1, want ascending within [0, 3)"},
		{"negative ordinal", ids, []float32{1}, []int{0, 1}, []int32{-1}, []float32{1}, "ordinal -1"},
		{"unsorted", ids, []float32{1, 1}, []int{0, 1, 3}, []int32{2, 2, 0}, []float32{1, 1, 1}, "word 1: ordinal 0 after 2"},
		{"repeated", ids, []float32{1}, []int{0, 2}, []int32{1, 1}, []float32{1, 1}, "ordinal 1 after 1"},
		{"NaN value", ids, []float32{1}, []int{0, 2}, []int32{0, 2}, []float32{1, nan}, "document 2: value NaN"},
		{"no documents", nil, []float32{1}, []int{0, 1}, []int32{0}, []float32{1}, "within [0, 0)"},
		{"no offsets", ids, nil, nil, nil, nil, "0 offsets for a vocabulary of 0 words, want 1"},
	} {
		_, err := FromPostings(tc.ids, tc.weight, tc.start, tc.docs, tc.vals)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	ix, err := FromPostings(nil, nil, []int{0}, nil, nil)
	if err != nil || ix.Docs() != 0 || ix.Words() != 0 || len(ix.NewSearcher().Search(sparse.Vector{}, 5, -1)) != 0 {
		t.Errorf("empty index: %v", err)
	}
}
