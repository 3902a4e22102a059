package bowline

import (
	"reflect"
	"testing"

	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/nn"
)

// The settings a run records are the options the job ran with: its SIFT,
// its pixel limit, its vocabulary's indexes in force (kmeansbeam's), its
// quantisation and ranking, and each learner's hyper-parameters.
func TestRunSettings(t *testing.T) {
	c := DefaultConfig()
	c.Describe.SIFT.MaxSide, c.Describe.MaxPixels = 640, 1e6
	c.Vocab.K, c.Vocab.Approx, c.Vocab.Forest, c.Vocab.Seed = 300, true, nn.ForestOptions{Checks: 32}, 7
	c.BoW.Soft, c.BoW.TF = bow.SoftOptions{R: 3, Sigma: 40}, bow.TFLog
	c.Columns.Label, c.Learning.Eval.Cosine = "category", false
	c.Learning.Learners = []string{"solis-ada"}
	got := c.RunSettings()
	want := &rundir.Settings{
		SIFT:        rundir.SIFT{ScalesPerOctave: 3, Sigma: 1.6, ContrastThreshold: 0.04, EdgeThreshold: 10, DoubleImage: true, DoubleBelow: 512, MaxSide: 640},
		MaxPixels:   1e6,
		DCTScale:    true,
		DCTVersion:  1,
		Vocabulary:  rundir.Vocabulary{Words: 300, Forest: &rundir.Forest{Trees: 8, LeafSize: 8, Checks: 32, Seed: 7}, IVF: &rundir.IVF{Probes: 8, Seed: 7}},
		Soft:        rundir.Soft{Words: 3, Sigma: 40},
		TF:          "log",
		LabelColumn: "category",
		Seed:        7,
		Learners:    c.Learning.Effective(300),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	c.Vocab.Approx = false
	if v := c.RunSettings().Vocabulary; v.Forest != nil || v.IVF != nil {
		t.Errorf("an exact vocabulary records indexes: %+v", v)
	}
}
