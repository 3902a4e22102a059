package index

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

func randVec(rng *rand.Rand, vocab int, p float64) sparse.Vector {
	var v sparse.Vector
	for i := range vocab {
		if rng.Float64() < p {
			v.Idx = append(v.Idx, uint32(i))
			v.Val = append(v.Val, float32(rng.Float64()))
		}
	}
	return v
}

func names(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("img%04d", i)
	}
	return ids
}

// bruteScore is Σ_i w_i q_i x_i by merging q and x, adding (w_i q_i)·x_i in
// ascending word order as Search does.
func bruteScore(q, x sparse.Vector, w []float32) float64 {
	var s float64
	for a, i := range q.Idx {
		for b, j := range x.Idx {
			if i == j {
				wi := float32(1)
				if w != nil {
					wi = w[i]
				}
				s += float64(wi) * float64(q.Val[a]) * float64(x.Val[b])
			}
		}
	}
	return s
}

// bruteRanking ranks every document but exclude by brute-force score,
// descending, ties by ordinal.
func bruteRanking(q sparse.Vector, docs []sparse.Vector, w []float32, exclude int) []Hit {
	var hits []Hit
	for d, x := range docs {
		if d != exclude {
			s := bruteScore(q, x, w)
			if s == 0 {
				s = 0 // −0 ranks as 0
			}
			hits = append(hits, Hit{Doc: d, Score: s})
		}
	}
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits
}

func TestSearchMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const vocab, ndocs = 60, 150
	docs := make([]sparse.Vector, ndocs)
	for d := range docs {
		docs[d] = randVec(rng, vocab, 0.15)
	}
	docs[7] = sparse.Vector{} // an empty image
	w := make([]float32, vocab)
	for i := range w {
		switch rng.IntN(4) {
		case 0: // zero
		case 1:
			w[i] = -float32(rng.Float64()) // negative
		default:
			w[i] = float32(rng.Float64() * 2)
		}
	}
	ids := names(ndocs)
	for _, weights := range []struct {
		name string
		w    []float32
	}{{"nil weights", nil}, {"learned weights", w}} {
		ix, err := Build(ids, docs, weights.w, vocab)
		if err != nil {
			t.Fatal(err)
		}
		// Force each ranking strategy in turn, and the automatic choice.
		heap, radix, auto := ix.NewSearcher(), ix.NewSearcher(), ix.NewSearcher()
		heap.radixMin, radix.radixMin = math.MaxInt, 1
		for trial := range 60 {
			s := []*Searcher{heap, radix, auto}[trial%3]
			q := randVec(rng, vocab, 0.2)
			exclude := rng.IntN(ndocs+1) - 1
			want := bruteRanking(q, docs, weights.w, exclude)
			for _, k := range []int{1, 3, 10, 60, ndocs - 2, ndocs - 1, ndocs, ndocs + 3, 0, -1} {
				got := s.Search(q, k, exclude)
				n := len(want)
				if k > 0 && k < n {
					n = k
				}
				if len(got) != n {
					t.Fatalf("%s trial %d k=%d: %d hits, want %d", weights.name, trial, k, len(got), n)
				}
				for r, h := range got {
					if h.Doc != want[r].Doc || math.Abs(h.Score-want[r].Score) > 1e-12 || h.ID != ids[h.Doc] {
						t.Fatalf("%s trial %d k=%d rank %d: got %+v, want doc %d score %v",
							weights.name, trial, k, r, h, want[r].Doc, want[r].Score)
					}
				}
			}
		}
	}
}

func TestZeroWeightsDropPostings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const vocab, ndocs = 40, 100
	docs := make([]sparse.Vector, ndocs)
	for d := range docs {
		docs[d] = randVec(rng, vocab, 0.3)
	}
	// An explicit zero coordinate adds nothing and must not be indexed.
	docs[0] = sparse.Vector{Idx: []uint32{1, 2}, Val: []float32{0, 0.5}}
	w := make([]float32, vocab)
	for i := range w {
		if i%3 != 0 {
			w[i] = 1
		}
	}
	full, err := Build(names(ndocs), docs, nil, vocab)
	if err != nil {
		t.Fatal(err)
	}
	sparseIx, err := Build(names(ndocs), docs, w, vocab)
	if err != nil {
		t.Fatal(err)
	}
	var wantFull, wantSparse int
	for _, v := range docs {
		for k, i := range v.Idx {
			if v.Val[k] != 0 {
				wantFull++
				if w[i] != 0 {
					wantSparse++
				}
			}
		}
	}
	if full.NNZ() != wantFull || sparseIx.NNZ() != wantSparse || wantSparse >= wantFull {
		t.Errorf("NNZ full %d sparse %d, want %d and %d (< full)", full.NNZ(), sparseIx.NNZ(), wantFull, wantSparse)
	}
	total := 0
	for i := range vocab {
		d, v := sparseIx.Postings(uint32(i))
		if len(d) != len(v) {
			t.Fatalf("word %d: %d docs, %d values", i, len(d), len(v))
		}
		if w[i] == 0 && len(d) != 0 {
			t.Errorf("zero-weight word %d has %d postings", i, len(d))
		}
		if !slices.IsSorted(d) {
			t.Errorf("word %d: postings not in ordinal order: %v", i, d)
		}
		for p := range d {
			x := docs[d[p]]
			k, ok := slices.BinarySearch(x.Idx, uint32(i))
			if !ok || x.Val[k] != v[p] || v[p] == 0 {
				t.Errorf("word %d doc %d: posting value %v does not match the document", i, d[p], v[p])
			}
		}
		total += len(d)
	}
	if total != sparseIx.NNZ() {
		t.Errorf("postings sum to %d, NNZ %d", total, sparseIx.NNZ())
	}
	if d, _ := full.Postings(1); slices.Contains(d, 0) {
		t.Errorf("explicit zero coordinate of doc 0 was indexed")
	}
	if sparseIx.Words() != vocab || sparseIx.Docs() != ndocs || sparseIx.Weight(3) != 0 || sparseIx.Weight(4) != 1 {
		t.Errorf("Words %d Docs %d Weight(3) %v Weight(4) %v", sparseIx.Words(), sparseIx.Docs(), sparseIx.Weight(3), sparseIx.Weight(4))
	}
}

func v(idx []uint32, val []float32) sparse.Vector { return sparse.Vector{Idx: idx, Val: val} }

func docsOf(hits []Hit) []int {
	d := make([]int, len(hits))
	for i, h := range hits {
		d[i] = h.Doc
	}
	return d
}

func TestSearchHand(t *testing.T) {
	docs := []sparse.Vector{
		v([]uint32{0}, []float32{1}),         // 0: score 1
		v([]uint32{1}, []float32{1}),         // 1: score −1 (negative weight)
		v(nil, nil),                          // 2: untouched, 0
		v([]uint32{0}, []float32{0.5}),       // 3: 0.5
		v([]uint32{0}, []float32{1}),         // 4: 1, ties with 0
		v([]uint32{0, 1}, []float32{1, 1}),   // 5: 1 − 1 = 0, touched
		v([]uint32{2}, []float32{3}),         // 6: word 2 not in query, 0
		v([]uint32{1}, []float32{2}),         // 7: −2
		v([]uint32{0, 2}, []float32{0.5, 1}), // 8: 0.5, ties with 3
	}
	w := []float32{1, -1, 1}
	ix, err := Build(names(len(docs)), docs, w, 3)
	if err != nil {
		t.Fatal(err)
	}
	heap, radix := ix.NewSearcher(), ix.NewSearcher()
	heap.radixMin, radix.radixMin = math.MaxInt, 1
	q := v([]uint32{0, 1}, []float32{1, 1})
	for _, s := range []*Searcher{heap, radix} {
		for _, tc := range []struct {
			name       string
			k, exclude int
			want       []int
		}{
			{"full", 0, -1, []int{0, 4, 3, 8, 2, 5, 6, 1, 7}},
			{"top 1", 1, -1, []int{0}},
			{"top 3", 3, -1, []int{0, 4, 3}},
			{"into zeros", 6, -1, []int{0, 4, 3, 8, 2, 5}},
			{"into negatives", 8, -1, []int{0, 4, 3, 8, 2, 5, 6, 1}},
			{"exclude best", 2, 0, []int{4, 3}},
			{"exclude zero", 0, 5, []int{0, 4, 3, 8, 2, 6, 1, 7}},
			{"exclude negative", -1, 7, []int{0, 4, 3, 8, 2, 5, 6, 1}},
			{"k = Docs with exclude", 9, 2, []int{0, 4, 3, 8, 5, 6, 1, 7}},
		} {
			got := s.Search(q, tc.k, tc.exclude)
			if !slices.Equal(docsOf(got), tc.want) {
				t.Errorf("%s (radixMin %d): ranking %v, want %v", tc.name, s.radixMin, docsOf(got), tc.want)
			}
		}
		full := s.Search(q, 0, -1)
		wantScores := []float64{1, 1, 0.5, 0.5, 0, 0, 0, -1, -2}
		for r, h := range full {
			if h.Score != wantScores[r] || (h.Score == 0 && math.Signbit(h.Score)) {
				t.Errorf("radixMin %d rank %d: score %v, want %v", s.radixMin, r, h.Score, wantScores[r])
			}
		}
	}
}

func TestSearcherReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	docs := make([]sparse.Vector, 50)
	for d := range docs {
		docs[d] = randVec(rng, 30, 0.3)
	}
	ix, err := Build(names(50), docs, nil, 30)
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	qa, qb := randVec(rng, 30, 0.3), randVec(rng, 30, 0.3)
	s.Search(qa, 5, -1)
	got := s.Search(qb, 0, 3)
	want := ix.NewSearcher().Search(qb, 0, 3)
	if !slices.Equal(got, want) {
		t.Errorf("a used Searcher ranks differently from a fresh one")
	}
	if a := testing.AllocsPerRun(50, func() { s.Search(qa, 10, -1) }); a > 1 {
		t.Errorf("Search allocates %v times, want only the result", a)
	}
}

func TestBuildErrors(t *testing.T) {
	good := []sparse.Vector{v([]uint32{0}, []float32{1}), v([]uint32{1}, []float32{1})}
	for _, tc := range []struct {
		name  string
		ids   []string
		vecs  []sparse.Vector
		w     []float32
		vocab int
		want  string
	}{
		{"lengths", []string{"a"}, good, nil, 2, "1 ids but 2 vectors"},
		{"weights", []string{"a", "b"}, good, []float32{1}, 2, "1 weights for a vocabulary of 2"},
		{"NaN weight", []string{"a", "b"}, good, []float32{1, float32(math.NaN())}, 2, "weight of word 1"},
		{"duplicate id", []string{"a", "a"}, good, nil, 2, `share the id "a"`},
		{"out of vocab", []string{"a", "b"}, good, nil, 1, `document 1 ("b")`},
		{"unsorted", []string{"a", "b"}, []sparse.Vector{good[0], v([]uint32{1, 0}, []float32{1, 1})}, nil, 2, "ascending"},
		{"negative vocab", nil, nil, nil, -1, "vocabulary size"},
	} {
		_, err := Build(tc.ids, tc.vecs, tc.w, tc.vocab)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	ix, err := Build(nil, nil, nil, 0)
	if err != nil || ix.Docs() != 0 || len(ix.NewSearcher().Search(sparse.Vector{}, 5, -1)) != 0 {
		t.Errorf("empty index: %v", err)
	}
}

func TestSearchPanics(t *testing.T) {
	ix, err := Build([]string{"a"}, []sparse.Vector{v([]uint32{0}, []float32{1})}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := ix.NewSearcher()
	for _, tc := range []struct {
		name    string
		q       sparse.Vector
		exclude int
		want    string
	}{
		{"exclude", v(nil, nil), 1, "exclude 1"},
		{"exclude negative", v(nil, nil), -2, "exclude -2"},
		{"word", v([]uint32{2}, []float32{1}), -1, "query word 2"},
		{"ragged", v([]uint32{0}, nil), -1, "1 indices and 0 values"},
		{"NaN", v([]uint32{0}, []float32{float32(math.NaN())}), -1, "not finite"},
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("%s: panic %v, want one mentioning %q", tc.name, r, tc.want)
				}
			}()
			s.Search(tc.q, 1, tc.exclude)
		}()
	}
}

func benchIndex(b *testing.B) (*Index, []sparse.Vector) {
	const vocab, ndocs, nnz = 10000, 10000, 200
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([]sparse.Vector, ndocs)
	for d := range docs {
		set := make(map[uint32]bool, nnz)
		for len(set) < nnz {
			set[uint32(rng.IntN(vocab))] = true
		}
		var x sparse.Vector
		for i := range set {
			x.Idx = append(x.Idx, i)
		}
		slices.Sort(x.Idx)
		for range x.Idx {
			x.Val = append(x.Val, float32(rng.Float64()))
		}
		sparse.Normalize(x)
		docs[d] = x
	}
	ix, err := Build(names(ndocs), docs, nil, vocab)
	if err != nil {
		b.Fatal(err)
	}
	return ix, docs
}

func BenchmarkSearch(b *testing.B) {
	ix, docs := benchIndex(b)
	for _, k := range []int{10, 100, 1000, 0} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			s := ix.NewSearcher()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s.Search(docs[i%len(docs)], k, i%len(docs))
				i++
			}
		})
	}
}

func TestDescKey(t *testing.T) {
	// Strictly descending, so keys must be strictly ascending.
	desc := []float64{math.MaxFloat64, 2, 1, 0.5, math.SmallestNonzeroFloat64, 0,
		-math.SmallestNonzeroFloat64, -0.5, -1, -2, -math.MaxFloat64}
	for i := 1; i < len(desc); i++ {
		if a, b := descKey(desc[i-1]), descKey(desc[i]); a >= b {
			t.Errorf("descKey(%v) = %#x not below descKey(%v) = %#x", desc[i-1], a, desc[i], b)
		}
	}
	if descKey(math.Copysign(0, -1)) != descKey(0) {
		t.Errorf("−0 and +0 have different keys")
	}
}

// TestPostingList: the rules the distributed index writes posting lists
// by are Build's — no posting for a zero coordinate or a word of weight
// zero or outside the weights, images in id order, the word's weight (one
// without weights).
func TestPostingList(t *testing.T) {
	w := []float32{0, 0.5}
	for _, c := range []struct {
		w    []float32
		word uint32
		x    float32
		want bool
	}{
		{nil, 7, 0.3, true}, {nil, 7, 0, false}, {w, 0, 0.3, false}, {w, 1, 0.3, true}, {w, 2, 0.3, false},
	} {
		if got := Posts(c.w, c.word, c.x); got != c.want {
			t.Errorf("Posts(%v, %d, %v) = %v, want %v", c.w, c.word, c.x, got, c.want)
		}
	}
	p := PostingList("m", w, 1, []Entry{{"b", 0.2}, {"a", 0.1}})
	if p.Learner != "m" || p.WordID != 1 || p.Weight != 0.5 ||
		!slices.Equal(p.Images, []string{"a", "b"}) || !slices.Equal(p.Values, []float32{0.1, 0.2}) {
		t.Errorf("PostingList = %+v", p)
	}
	if p := PostingList("tfidf", nil, 9, []Entry{{"a", 1}}); p.Weight != 1 {
		t.Errorf("without weights the word's weight is %v, want 1", p.Weight)
	}
}
