package evaluatebeam

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/split"
)

// TestQuerySampleIsBoWs checks that the capped query sets QuerySet draws
// part by part — each part trimmed to the sample (candidatesFn), the
// parts merged (queriesMergeFn) — are those evaluate.BoW draws from the
// whole collection: 17 labels of 80 images, ids grouped by label, a fifth
// held out, both sets capped.
func TestQuerySampleIsBoWs(t *testing.T) {
	const labels, per = 17, 80
	var docs []formats.BoW
	var ids, labs []string
	counts := map[string]int{}
	for l := range labels {
		for i := range per {
			id, label := fmt.Sprintf("image_%04d", l*per+i+1), fmt.Sprintf("class%02d", l)
			docs = append(docs, formats.BoW{ImageID: id, Label: label, WordIDs: []uint32{uint32(l)}, Weights: []float32{1}})
			ids, labs = append(ids, id), append(labs, label)
			counts[label]++
		}
	}
	opt := evaluate.Options{QueryFraction: 0.2, MaxQueries: 50, TrainQueries: 100, Seed: 7}
	sel, err := split.NewSelector(opt.Seed, opt.QueryFraction, counts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		if err := sel.Offer(ids[i], labs[i]); err != nil {
			t.Fatal(err)
		}
	}
	cut, err := sel.Cut()
	if err != nil {
		t.Fatal(err)
	}
	_, scores, err := evaluate.BoW(slices.Clone(docs), learners.BaselineModel(learners.BaselineTFIDF, nil), cut, opt)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range scores {
		want = append(want, s.ID)
	}
	slices.Sort(want)
	if len(want) != 150 {
		t.Fatalf("evaluate.BoW scored %d queries, want the caps' 50 + 100", len(want))
	}

	var lc Labels
	for l := range labels {
		lc.Names, lc.Counts = append(lc.Names, fmt.Sprintf("class%02d", l)), append(lc.Counts, per)
	}
	held, training, err := lc.quotas(opt, cut)
	if err != nil {
		t.Fatal(err)
	}
	merge := &queriesMergeFn{Opt: opt}
	acc := merge.CreateAccumulator()
	for p := range 5 {
		q := Queries{Held: held, Training: training}
		for i := p; i < len(ids); i += 5 {
			ok, h := evaluate.Classify(ids[i], labs[i], lc.Relevant(), cut)
			if ok {
				q.Keys = append(q.Keys, evaluate.QueryKey(opt.Seed, ids[i]))
				q.Queries = append(q.Queries, evaluate.Query{ID: ids[i], Label: labs[i], Held: h})
				q.Parts = append(q.Parts, p)
			}
		}
		acc = merge.AddInput(acc, q.trim())
	}
	var got []string
	for _, q := range merge.ExtractOutput(acc).Queries {
		got = append(got, q.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("queries drawn part by part\n%v\nevaluate.BoW's\n%v", got, want)
	}
}
