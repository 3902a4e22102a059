package trainbeam

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

// TestBatchParts: the model sampled part by part from the features parts
// is, bit for bit, the fit on the bottom-MaxImages sample of the training
// rows computed here; the sample is smaller than the training rows, and
// the split holds images out, so both the trimming and the cut count.
func TestBatchParts(t *testing.T) {
	c := newDenseCorpus(t, corpusOptions{Groups: 1, Images: 48, Trips: 1, Parts: 3, Drops: true})
	counts := map[string]int{}
	for _, f := range c.features {
		counts[f.Label]++
	}
	sel, err := split.NewSelector(5, 0.25, counts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range c.features {
		if err := sel.Offer(f.ImageID, f.Label); err != nil {
			t.Fatal(err)
		}
	}
	cut, err := sel.Cut()
	if err != nil {
		t.Fatal(err)
	}

	opt := train.BatchOptions{Learner: "itq", Params: map[string]float64{"bits": 8}, Dims: global.Dims, MaxImages: 15, Seed: 7}
	// The values are multiples of 1/256, so the pipeline's moments are
	// c.moments and its rows c.rows, bit for bit.
	var smp train.Sample
	training, held := 0, 0
	for _, f := range c.features {
		x, ok := c.rows[f.ImageID]
		switch {
		case !ok:
			continue
		case cut.IsQuery(f.ImageID, f.Label):
			held++
			continue
		}
		training++
		smp = smp.Add(train.DenseRow{ImageID: f.ImageID, Label: f.Label, Tags: f.Tags, X: x}, opt.MaxImages, opt.Seed)
	}
	smp = smp.Trim(opt.MaxImages)
	if held == 0 || training <= opt.MaxImages || len(smp.Rows) != opt.MaxImages {
		t.Fatalf("%d held out, %d training rows, a sample of %d: the test would prove little", held, training, len(smp.Rows))
	}
	m, err := train.Fit(opt, smp.Rows)
	if err != nil {
		t.Fatal(err)
	}
	want := digestOf(m)

	p, s := beam.NewPipelineWithRoot()
	featParts := beam.CreateList(s, c.featParts)
	beam.ParDo0(s, &checkDigestFn{Want: want}, BatchParts(s, featParts, DenseMoments(s, featParts), beam.Create(s, cut), opt))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}
