package bowline

import (
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/train/trainbeam"
)

// TestNonNegIsALearnerParam: "nonneg" passes the job's validation for
// every diagonal learner, through --learner_params and --sweep (which no
// default sets), and reaches the options each learner trains with, so
// that its state file records it (trainbeam.ParamsJSON): an incremental
// night with the other setting then starts afresh instead of continuing
// from a state trained under it (trainbeam.ReadWarm compares the two).
func TestNonNegIsALearnerParam(t *testing.T) {
	const vocab = 10_000
	l := DefaultLearning()
	l.Params = map[string]map[string]float64{}
	for _, name := range l.Learners {
		l.Params[name] = map[string]float64{"nonneg": 1}
	}
	if err := l.Validate(vocab, false); err != nil {
		t.Fatalf("nonneg=1 for %v: %v", l.Learners, err)
	}
	plain := DefaultLearning()
	for _, name := range l.Learners {
		on, off := trainbeam.ParamsJSON(l.options(name, vocab)), trainbeam.ParamsJSON(plain.options(name, vocab))
		if !strings.Contains(on, `"nonneg":1`) || on == off {
			t.Errorf("%s: the state records %s with nonneg=1 and %s without", name, on, off)
		}
	}

	w := DefaultLearning()
	w.Sweep = Sweep{Learner: "solis-ada", Param: "nonneg", Values: []float64{0, 1}}
	if err := w.Validate(vocab, false); err != nil {
		t.Fatalf("sweep over nonneg: %v", err)
	}
	runs := w.bowRuns(vocab)
	last := runs[len(runs)-1]
	if last.Name != "solis-ada-nonneg-1" || !strings.Contains(trainbeam.ParamsJSON(last.Opt), `"nonneg":1`) {
		t.Errorf("the sweep's last run: %s with %v", last.Name, last.Opt.Params)
	}
	w.Sweep.Values = []float64{0, 0.5}
	if err := w.Validate(vocab, false); err == nil || !strings.Contains(err.Error(), "nonneg must be 0 (off) or 1 (on)") {
		t.Errorf("sweep over nonneg=0.5: %v", err)
	}
}
