package evaluate

import (
	"math"
	"runtime"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/split"
)

// Four images over three words; under unit weights the scores are dot
// products. Worked by hand (relevant = same label, the query excluded):
//
//	a (x): b 0.6, c 0.48, d 0     → b✓ c✗ d✓  AP = (1/1 + 2/3)/2
//	b (x): c 0.8, a 0.6, d 0      → c✗ a✓ d✓  AP = (1/2 + 2/3)/2
//	c (y): no other y             → not a query
//	d (x): c 0.48, a 0, b 0       → c✗ a✓ b✓  AP = (1/2 + 2/3)/2 (a and b tie, both relevant)
func docs() []formats.BoW {
	return []formats.BoW{
		{ImageID: "a", Label: "x", WordIDs: []uint32{0}, Weights: []float32{1}},
		{ImageID: "b", Label: "x", WordIDs: []uint32{0, 1}, Weights: []float32{0.6, 0.8}},
		{ImageID: "c", Label: "y", WordIDs: []uint32{0, 1, 2}, Weights: []float32{0.48, 0.64, 0.6}},
		{ImageID: "d", Label: "x", WordIDs: []uint32{2}, Weights: []float32{0.8}},
	}
}

func TestRunHandComputed(t *testing.T) {
	want := ((1+2.0/3)/2 + (1.0/2+2.0/3)/2 + (1.0/2+2.0/3)/2) / 3
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		rows, _, err := BoW(docs(), learners.BaselineModel(learners.BaselineTFIDF, nil), split.Cut{}, Options{})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Split != Training {
			t.Fatalf("rows %+v: want one, of training queries (none held out)", rows)
		}
		row := rows[0]
		if row.Queries != 3 {
			t.Fatalf("queries = %d, want 3 (c has no other relevant image)", row.Queries)
		}
		if math.Abs(row.MAP-want) > 1e-12 {
			t.Errorf("GOMAXPROCS=%d: mAP = %v, want %v", procs, row.MAP, want)
		}
		if row.IndexPostings != 7 || row.Vocabulary != 3 {
			t.Errorf("postings %d vocabulary %d, want 7 and 3", row.IndexPostings, row.Vocabulary)
		}
	}
}

func TestRunWeightsDropWords(t *testing.T) {
	// Weight 0 on word 0 removes its three postings and zeroes a third of
	// the weights.
	rows, _, err := BoW(docs(), learners.Model{Learner: "m", Weights: []float32{0, 1, 1}}, split.Cut{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	row := rows[0]
	if row.IndexPostings != 4 || math.Abs(row.Sparsity-1.0/3) > 1e-12 {
		t.Errorf("postings %d sparsity %v, want 4 and 1/3", row.IndexPostings, row.Sparsity)
	}
}

func TestSelectQueriesCap(t *testing.T) {
	d := docs()
	counts := map[string]int{"x": 3, "y": 1}
	var ids, labels []string
	for _, x := range d {
		ids, labels = append(ids, x.ImageID), append(labels, x.Label)
	}
	a := selectQueries(ids, labels, counts, split.Cut{}, Options{MaxQueries: 2, Seed: 1})
	b := selectQueries(ids, labels, counts, split.Cut{}, Options{MaxQueries: 2, Seed: 1})
	if len(a) != 2 || a[0].ID != b[0].ID || a[1].ID != b[1].ID {
		t.Fatalf("capped queries %v and %v: want the same two", a, b)
	}
	for _, q := range a {
		if q.Label != "x" || q.Held {
			t.Errorf("query %+v: has no other relevant image, or is held out with no split", q)
		}
	}
}

// Under w = (4, 1) the image h, all on the heavy word 0, outscores a's
// relevant b for the query a under the bilinear score (4·0.28 = 1.12
// against 0.96) but not under the cosine in w's metric (1.12/‖h‖_w = 0.56,
// ‖h‖_w = 2, against 0.96/1): mAP over the queries a and b is
// (1/2 + 1)/2 by the bilinear score and 1 by the cosine. TF-IDF's ranking
// (a: b 0.96, h 0.28) is the same either way.
func TestRunCosine(t *testing.T) {
	docs := func() []formats.BoW {
		return []formats.BoW{
			{ImageID: "a", Label: "x", WordIDs: []uint32{0, 1}, Weights: []float32{0.28, 0.96}},
			{ImageID: "b", Label: "x", WordIDs: []uint32{1}, Weights: []float32{1}},
			{ImageID: "h", Label: "y", WordIDs: []uint32{0}, Weights: []float32{1}},
		}
	}
	learned := learners.Model{Learner: "m", Weights: []float32{4, 1}}
	tfidf := learners.BaselineModel(learners.BaselineTFIDF, nil)
	for _, c := range []struct {
		m      learners.Model
		cosine bool
		want   float64
	}{
		{learned, false, 0.75},
		{learned, true, 1},
		{tfidf, false, 1},
		{tfidf, true, 1},
	} {
		d := docs()
		rows, _, err := BoW(d, c.m, split.Cut{}, Options{Cosine: c.cosine})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].Queries != 2 || math.Abs(rows[0].MAP-c.want) > 1e-6 {
			t.Errorf("%s, cosine %v: rows %+v, want mAP %v over 2 queries", c.m.Learner, c.cosine, rows, c.want)
		}
	}
}
