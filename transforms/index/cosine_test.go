package index

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/learners/sparse"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct {
		name     string
		w        []float32
		idx      []uint32
		val, out []float32
		norm     float64
	}{
		// ‖x‖² = 4·1² + 1·2² = 8, the negative weight left out.
		{"positive part", []float32{4, 1, -9}, []uint32{0, 1, 2}, []float32{1, 2, 3},
			[]float32{1 / float32(math.Sqrt(8)), 2 / float32(math.Sqrt(8)), 3 / float32(math.Sqrt(8))}, math.Sqrt(8)},
		{"word outside the weights", []float32{1}, []uint32{0, 5}, []float32{3, 4},
			[]float32{1, 4.0 / 3}, 3},
		{"no positive weight", []float32{0, -1}, []uint32{0, 1}, []float32{3, 4},
			[]float32{3, 4}, 0},
		{"TF-IDF", nil, []uint32{0, 1}, []float32{3, 4}, []float32{3, 4}, 5},
		{"empty", []float32{1}, nil, nil, nil, 0},
	} {
		val := slices.Clone(c.val)
		n := Normalize(c.w, sparse.Vector{Idx: c.idx, Val: val})
		if math.Abs(n-c.norm) > 1e-12 {
			t.Errorf("%s: length %v, want %v", c.name, n, c.norm)
		}
		for k := range val {
			if math.Abs(float64(val[k]-c.out[k])) > 1e-6 {
				t.Errorf("%s: values %v, want %v", c.name, val, c.out)
				break
			}
		}
	}
}

// An index of normalised documents ranks as the cosine in the metric of
// the positive weights, q·W·x/(‖q‖_w‖x‖_w), and not as the bilinear score:
// a document with most of its mass on a heavy word wins every query under
// the bilinear score.
func TestNormalizeRanksByCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const vocab, n = 40, 60
	w := make([]float32, vocab)
	for i := range w {
		w[i] = float32(rng.Float64()*2 - 0.3)
	}
	const heavy = 7
	w[heavy] = 10
	docs := make([]sparse.Vector, n) // unit vectors, as bags of words are
	for d := range docs {
		docs[d] = randVec(rng, vocab, 0.3)
		sparse.Normalize(docs[d])
	}
	docs[0] = sparse.Vector{Idx: []uint32{heavy}, Val: []float32{1}} // the hub
	metricNorm := func(x sparse.Vector) float64 {
		var s float64
		for k, i := range x.Idx {
			s += max(float64(w[i]), 0) * float64(x.Val[k]) * float64(x.Val[k])
		}
		return math.Sqrt(s)
	}
	scaled := make([]sparse.Vector, n)
	for d, x := range docs {
		scaled[d] = sparse.Vector{Idx: x.Idx, Val: slices.Clone(x.Val)}
		Normalize(w, scaled[d])
	}
	ix, err := Build(names(n), scaled, w, vocab)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Build(names(n), docs, w, vocab)
	if err != nil {
		t.Fatal(err)
	}
	hubFirst := 0
	for qi := 1; qi < n; qi++ {
		q := docs[qi]
		if !slices.Contains(q.Idx, heavy) {
			continue
		}
		got := ix.NewSearcher().Search(q, n, qi)
		for r := 1; r < len(got); r++ {
			a, b := got[r-1], got[r]
			ca := bruteScore(q, docs[a.Doc], w) / metricNorm(docs[a.Doc])
			cb := bruteScore(q, docs[b.Doc], w) / metricNorm(docs[b.Doc])
			if ca < cb-1e-6 {
				t.Fatalf("query %d: %s (cosine %v) ranked above %s (cosine %v)", qi, ix.ID(int(a.Doc)), ca, ix.ID(int(b.Doc)), cb)
			}
		}
		if p := plain.NewSearcher().Search(q, 1, qi); len(p) == 1 && p[0].Doc == 0 {
			hubFirst++
		}
	}
	if hubFirst == 0 {
		t.Fatal("the hub never came first under the bilinear score: the test shows nothing")
	}
}
