package tripletsbeam

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/transforms/triplets"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

// bows makes per images of each label, with one word each, plus an
// unlabelled image and a labelled image without words (neither is used).
func bows(labels, per int) []formats.BoW {
	var out []formats.BoW
	for l := 0; l < labels; l++ {
		for i := 0; i < per; i++ {
			out = append(out, formats.BoW{ImageID: fmt.Sprintf("l%d-%d", l, i), Label: fmt.Sprintf("L%d", l), WordIDs: []uint32{1}, Weights: []float32{1}})
		}
	}
	return append(out,
		formats.BoW{ImageID: "unlabelled", WordIDs: []uint32{1}, Weights: []float32{1}},
		formats.BoW{ImageID: "empty", Label: "L0"})
}

// TestSampleIsTheSequentialSample: drawn in parallel against the combined
// pool, the triplets are those of triplets.Sample over the usable images.
func TestSampleIsTheSequentialSample(t *testing.T) {
	in := bows(3, 4)
	var items []triplets.Item
	for _, b := range in {
		if b.Label != "" && len(b.WordIDs) > 0 {
			items = append(items, triplets.Item{ID: b.ImageID, Label: b.Label})
		}
	}
	opt := triplets.Options{PerQuery: 5, Seed: 9}
	want, err := triplets.Sample(items, opt)
	if err != nil || len(want) != 3*4*5 {
		t.Fatalf("the sequential sample has %d triplets (%v)", len(want), err)
	}
	wantAny := make([]any, len(want))
	for i, tr := range want {
		wantAny[i] = tr
	}
	p, s := beam.NewPipelineWithRoot()
	passert.Equals(s, Sample(s, beam.CreateList(s, in), opt), wantAny...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestNothingToLearnFails: one label only, or no labels, fails the
// pipeline with the reason instead of training on no triplets.
func TestNothingToLearnFails(t *testing.T) {
	for _, c := range []struct {
		in   []formats.BoW
		want string
	}{
		{bows(1, 6), `all carry one label ("L0")`},
		{[]formats.BoW{{ImageID: "a", WordIDs: []uint32{1}, Weights: []float32{1}}, {ImageID: "b", WordIDs: []uint32{2}, Weights: []float32{1}}}, "no labelled images"},
	} {
		p, s := beam.NewPipelineWithRoot()
		Sample(s, beam.CreateList(s, c.in), triplets.Options{PerQuery: 2, Seed: 1})
		err := ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want one saying %q", err, c.want)
		}
	}
}
