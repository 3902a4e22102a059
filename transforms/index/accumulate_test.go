package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

// TestAccumulatorPaths checks that a query of few words (marked documents)
// and one reaching most documents (summed without marks) both give the
// brute-force scores bit for bit, that Docs holds every document of nonzero
// score once, that Reset leaves nothing behind, whatever came before, and
// that Index.Score gives each document's score alone, bit for bit.
func TestAccumulatorPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const vocab, ndocs = 100, 200
	docs := make([]sparse.Vector, ndocs)
	for d := range docs {
		docs[d] = randVec(rng, vocab, 0.05)
	}
	w := make([]float32, vocab)
	for i := range w {
		w[i] = float32(rng.Float64()*2 - 0.5) // some negative
	}
	w[3] = 0
	ix, err := Build(names(ndocs), docs, w, vocab)
	if err != nil {
		t.Fatal(err)
	}
	few := sparse.Vector{Idx: []uint32{3, 17, 42}, Val: []float32{1, 0.5, 2}} // word 3 has no weight
	many := randVec(rng, vocab, 0.6)
	a := ix.NewAccumulator()
	for _, c := range []struct {
		name  string
		q     sparse.Vector
		dense bool
	}{{"few", few, false}, {"many", many, true}, {"few again", few, false}} {
		a.Add(c.q)
		if a.dense != c.dense {
			t.Fatalf("%s: dense %v, want %v", c.name, a.dense, c.dense)
		}
		got := a.Scores()
		in := make([]int, ndocs)
		for _, d := range a.Docs() {
			in[d]++
		}
		for d := range docs {
			want := bruteScore(c.q, docs[d], w)
			if got[d] != want {
				t.Fatalf("%s: doc %d scores %v, want %v", c.name, d, got[d], want)
			}
			if s := ix.Score(c.q, d); s != want {
				t.Fatalf("%s: Score of doc %d is %v, want %v", c.name, d, s, want)
			}
			if in[d] > 1 || (want != 0 && in[d] == 0) {
				t.Fatalf("%s: doc %d (score %v) is %d times in Docs", c.name, d, want, in[d])
			}
		}
		a.Reset()
		if slices.ContainsFunc(a.Scores(), func(s float64) bool { return s != 0 }) || slices.Contains(a.seen, true) || len(a.Docs()) != 0 {
			t.Fatalf("%s: Reset left scores, marks or documents", c.name)
		}
	}
	// A dense query after a sparse one without a Reset between: the marked
	// documents are cleared with the rest.
	a.Add(few)
	a.Add(many)
	for d := range docs {
		if want := bruteScore(few, docs[d], w) + bruteScore(many, docs[d], w); math.Abs(a.Scores()[d]-want) > 1e-12 {
			t.Fatalf("two queries: doc %d scores %v, want %v", d, a.Scores()[d], want)
		}
	}
	a.Reset()
	if slices.ContainsFunc(a.Scores(), func(s float64) bool { return s != 0 }) || slices.Contains(a.seen, true) {
		t.Fatal("Reset after two queries left scores or marks")
	}
	// And the Searcher ranks a query of few words as brute force does.
	got := ix.NewSearcher().Search(few, 0, 5)
	want := bruteRanking(few, docs, w, 5)
	for r := range want {
		if got[r].Doc != want[r].Doc || got[r].Score != want[r].Score {
			t.Fatalf("rank %d: got %+v, want %+v", r, got[r], want[r])
		}
	}
}

// BenchmarkAccumulate times one query's scores over documents of many
// words each, as real photos' bags of words over 10K words are: nearly
// every document shares a word with the query.
func BenchmarkAccumulate(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	const vocab, ndocs = 10000, 5000
	docs := make([]sparse.Vector, ndocs)
	for d := range docs {
		docs[d] = randVec(rng, vocab, 0.1)
	}
	ix, err := Build(names(ndocs), docs, nil, vocab)
	if err != nil {
		b.Fatal(err)
	}
	a := ix.NewAccumulator()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		a.Add(docs[i%ndocs])
		for range a.Docs() {
		}
		a.Reset()
		i++
	}
}
