package learners

import (
	"encoding/json"
	"fmt"
)

// Baseline names an untrained ranking that learned models are compared
// with.
type Baseline string

// The baselines: the TF-IDF cosine ranking of bags of words (every weight
// one), and the Euclidean ranking of the scaled global features.
const (
	BaselineTFIDF     Baseline = "tfidf"
	BaselineEuclidean Baseline = "euclidean"
)

// Model is a similarity a stage can rank with: a learned one, or one of the
// baselines. For a bag-of-words learner it is diagonal, Weights holding one
// weight per visual word; for a learner of dense global features
// (DenseModel) Dims is non-nil and State restores it (RestoreDense). A
// baseline model has Baseline set and nothing learned.
type Model struct {
	Learner string
	// Baseline is set, and equals Learner, for an untrained baseline.
	Baseline Baseline
	// Params is the learner's hyper-parameters as JSON.
	Params   string
	Weights  []float32
	Dims     []int
	State    State
	Triplets int64
	// MeanLoss is the mean hinge loss suffered over the pass; Violations
	// counts the triplets with a positive loss.
	MeanLoss   float64
	Violations int64
	Seconds    float64
}

// BaselineModel returns the model of baseline b; dims are the modality
// dimensions for the Euclidean baseline (nil for TF-IDF).
func BaselineModel(b Baseline, dims []int) Model {
	m := Model{Learner: string(b), Baseline: b, Dims: dims}
	if b == BaselineEuclidean {
		m.State = State{Learner: string(b)}
	}
	return m
}

// Diagonal returns the per-word weights a bag-of-words model scores with:
// nil, meaning every weight one, for the TF-IDF baseline. It is an error
// for a model of another kind, or a learned model without weights.
func (m Model) Diagonal() ([]float32, error) {
	switch {
	case m.Baseline == BaselineTFIDF:
		return nil, nil
	case m.Baseline != "" || m.Dims != nil:
		return nil, fmt.Errorf("learners: %s is not a model of bags of words", m.Learner)
	case m.Weights == nil:
		return nil, fmt.Errorf("learners: model %s has no weights", m.Learner)
	}
	return m.Weights, nil
}

// RestoreDense returns the dense model m describes, made with its
// hyper-parameters (which fix the shapes of its state, e.g. the code
// length) and set to its state.
func RestoreDense(m Model) (DenseModel, error) {
	if m.Dims == nil {
		return nil, fmt.Errorf("learners: %s is not a model of global features", m.Learner)
	}
	var params map[string]float64
	if m.Params != "" {
		if err := json.Unmarshal([]byte(m.Params), &params); err != nil {
			return nil, fmt.Errorf("learners: %s params %q: %w", m.Learner, m.Params, err)
		}
	}
	// Sharded training records its layout beside the learner's own params.
	delete(params, "shards")
	delete(params, "rounds")
	d, err := NewDense(m.Learner, m.Dims, params)
	if err != nil {
		return nil, fmt.Errorf("learners: %w", err)
	}
	if err := d.SetState(m.State); err != nil {
		return nil, fmt.Errorf("learners: %w", err)
	}
	return d, nil
}
