package indexbeam

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

func init() { beam.RegisterFunction(postingStringFn) }

// postingStringFn renders a posting list for comparison.
func postingStringFn(p formats.Posting) string {
	return fmt.Sprintf("%s/%d w=%v %v %v", p.Learner, p.WordID, p.Weight, p.Images, p.Values)
}

// randomBoWs makes n bags of words over vocab words, some with explicit
// zero coordinates (which index nothing).
func randomBoWs(n, vocab int) []formats.BoW {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]formats.BoW, n)
	for i := range out {
		b := formats.BoW{ImageID: fmt.Sprintf("img%02d", (i*7)%n), Label: "x"}
		for w := 0; w < vocab; w++ {
			if r.Float64() < 0.4 {
				v := float32(r.Float64())
				if r.Float64() < 0.1 {
					v = 0
				}
				b.WordIDs, b.Weights = append(b.WordIDs, uint32(w)), append(b.Weights, v)
			}
		}
		out[i] = b
	}
	return out
}

// wantPostings is the index of bows under m as index.Build keeps it,
// written out word by word.
func wantPostings(t *testing.T, bows []formats.BoW, m learners.Model, vocab int) []any {
	t.Helper()
	sorted := append([]formats.BoW(nil), bows...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ImageID < sorted[j].ImageID })
	ids := make([]string, len(sorted))
	vecs := make([]sparse.Vector, len(sorted))
	for i, b := range sorted {
		ids[i], vecs[i] = b.ImageID, sparse.Vector{Idx: b.WordIDs, Val: b.Weights}
	}
	w, err := m.Diagonal()
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Build(ids, vecs, w, vocab)
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	for word := 0; word < vocab; word++ {
		docs, vals := ix.Postings(uint32(word))
		if len(docs) == 0 {
			continue
		}
		p := formats.Posting{Learner: m.Learner, WordID: uint32(word), Weight: ix.Weight(uint32(word))}
		for k, d := range docs {
			p.Images, p.Values = append(p.Images, ix.ID(int(d))), append(p.Values, vals[k])
		}
		want = append(want, postingStringFn(p))
	}
	return want
}

// TestPostingsAreTheIndex: the distributed index holds exactly the
// postings of index.Build — no list for a word of weight zero, no posting
// for a zero coordinate, images in id order — for a learned model and for
// the TF-IDF baseline.
func TestPostingsAreTheIndex(t *testing.T) {
	const vocab = 12
	bows := randomBoWs(30, vocab)
	learned := learners.Model{Learner: "solis-ada", Weights: make([]float32, vocab)}
	for w := range learned.Weights {
		if w%3 != 0 {
			learned.Weights[w] = float32(w) / 10
		}
	}
	for _, m := range []learners.Model{learned, learners.BaselineModel(learners.BaselineTFIDF, nil)} {
		want := wantPostings(t, bows, m, vocab)
		if m.Baseline == "" && len(want) != vocab-vocab/3 {
			t.Fatalf("%s: %d lists expected, want %d: the fixture drops no word", m.Learner, len(want), vocab-vocab/3)
		}
		p, s := beam.NewPipelineWithRoot()
		got := Postings(s, beam.CreateList(s, bows), beam.Create(s, m))
		passert.Equals(s, beam.ParDo(s, postingStringFn, got), want...)
		if err := ptest.Run(p); err != nil {
			t.Errorf("%s: %v", m.Learner, err)
		}
	}
}

// TestPostingsRefuseADenseModel: a model of global features has no
// inverted index; the transform fails instead of indexing with nil weights
// (which would silently be TF-IDF's).
func TestPostingsRefuseADenseModel(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	m := learners.Model{Learner: "lomdml", Dims: []int{3, 4}}
	Postings(s, beam.CreateList(s, randomBoWs(3, 4)), beam.Create(s, m))
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "not a model of bags of words") {
		t.Errorf("err = %v, want a refusal of the dense model", err)
	}
}
