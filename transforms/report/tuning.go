package report

import (
	"fmt"
	"io"
)

// Tuning is what validation tuning chose (the job's --tune and
// --target_sparsity): a validation set carved from the training images
// (ValidationImages of them; no held-out image is one, or is searched),
// each learner's grid of hyper-parameters trained on the triplets of the
// other training images and scored by the mAP of the validation images
// searching the training images, and the point chosen, which the learner
// then trained with on every training triplet.
type Tuning struct {
	// Share is the share of each label's training images that are
	// validation images (--tune_fraction).
	Share float64 `json:"validation_fraction"`
	// ValidationImages counts the validation images; Queries the
	// validation queries, at most the evaluation's cap of them.
	ValidationImages int64 `json:"validation_images"`
	Queries          int64 `json:"validation_queries"`
	// TrainImages counts the training images the validation queries
	// search (the validation images among them).
	TrainImages int64 `json:"validation_searched_images"`
	// TargetSparsity is the least share of zero weights asked of the
	// learners with an L1 strength (--target_sparsity; 0: none).
	TargetSparsity float64 `json:"target_sparsity,omitempty"`
	// BaselineMAP is the validation mAP of the learners' baseline
	// (Baseline, TF-IDF), the same queries over the same images, for
	// reading the grid's figures against.
	Baseline    string         `json:"validation_baseline"`
	BaselineMAP float64        `json:"validation_baseline_map"`
	Learners    []TunedLearner `json:"learners"`
}

// TunedLearner is one learner's grid and choice. Points[Chosen] is the
// point the learner trained with on every training triplet, and Params
// its hyper-parameters.
type TunedLearner struct {
	Learner string `json:"learner"`
	// Axes name the hyper-parameters the grid varies.
	Axes   []string    `json:"axes"`
	Points []TunePoint `json:"points"`
	Chosen int         `json:"chosen"`
	// Params are the chosen hyper-parameters, every one of the learner's.
	Params map[string]float64 `json:"params"`
	// TargetMet says the chosen point has at least the target sparsity;
	// false with a target means no point of the grid reached it, and the
	// sparsest was chosen instead. Without a target it is true.
	TargetMet bool `json:"target_met"`
	// Why says how the point was chosen, for people.
	Why string `json:"why"`
}

// TunePoint is one point of a learner's grid.
type TunePoint struct {
	// Method names the point's learner instance in the job (like a sweep's).
	Method string             `json:"method"`
	Params map[string]float64 `json:"params"`
	// ValidationMAP is the mAP of the validation queries under the point's
	// model trained on the tuning triplets (validation images excluded).
	ValidationMAP float64 `json:"validation_map"`
	// Sparsity is the share of zero weights of the point's model trained
	// on every training triplet: the model the learner would report.
	Sparsity float64 `json:"sparsity"`
	// TuneSparsity is the share of zero weights of the model trained on
	// the tuning triplets, the one validated.
	TuneSparsity float64 `json:"tune_sparsity"`
}

// ChosenPoint returns the chosen point of t.
func (t TunedLearner) ChosenPoint() TunePoint {
	if t.Chosen < 0 || t.Chosen >= len(t.Points) {
		return TunePoint{}
	}
	return t.Points[t.Chosen]
}

// AxisValues formats the values of p's axes: "eta=3.33, lambda=1e-06".
func (t TunedLearner) AxisValues(p TunePoint) string {
	sub := map[string]float64{}
	for _, a := range t.Axes {
		sub[a] = p.Params[a]
	}
	return formatParams(sub)
}

// writeTuning writes the tuning section of the printed report: each
// learner's chosen hyper-parameters and why; report.html has the grids.
func writeTuning(w io.Writer, t *Tuning) error {
	if t == nil || len(t.Learners) == 0 {
		return nil
	}
	target := ""
	if t.TargetSparsity > 0 {
		target = fmt.Sprintf("; target sparsity %s", sparsity(t.TargetSparsity))
	}
	fmt.Fprintf(w, "\ntuning: %d validation queries (%.0f%% of each label's training images) searching the %d training images, no held-out image among them%s; validation mAP of %s %.4f\n",
		t.Queries, 100*t.Share, t.TrainImages, target, t.Baseline, t.BaselineMAP)
	for _, l := range t.Learners {
		fmt.Fprintf(w, "  %s: %s (%s)\n", l.Learner, formatParams(l.Params), l.Why)
	}
	fmt.Fprintln(w, "  (report.html: every grid point's validation mAP and sparsity)")
	return nil
}
