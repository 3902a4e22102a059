// Package learners defines what every online similarity learner of the
// pipeline offers, so the trainer, the model writer and the report can treat
// them alike.
//
// An online diagonal learner keeps a weight vector w ∈ R^d and scores a pair
// of bag-of-words vectors with the diagonal bilinear similarity
//
//	S_w(a, b) = Σ_i w_i a_i b_i.
//
// It learns from triplets (x, x⁺, x⁻), x being more similar to x⁺ than to x⁻,
// through the per-triplet feature
//
//	u = x ⊙ (x⁺ − x⁻),  so that  S_w(x, x⁺) − S_w(x, x⁻) = w·u,
//
// and the hinge loss L = max(0, 1 − w·u). Callers build u once per triplet
// with sparse.TripletFeature and hand it to Update.
//
// Learners that can be trained in shards implement Stateful: their State
// is plain data that Average combines and SetState restores (see "Sharded
// training" below). The packages that implement learners register them by
// name, so that New can make one from a flag:
//
//	import _ "github.com/bowline/bowline/learners/solis" // solis-tg, solis-da, solis-afb, solis-ada
//	import _ "github.com/bowline/bowline/learners/oasis" // oasis-diag
//
//	l, err := learners.New("solis-afb", dim, map[string]float64{"lambda": 1e-5})
//
// # Sharded training
//
// The trainer splits the triplets into S shards and trains in rounds with
// parameter averaging: in each round every shard runs the sequential learner
// over its own triplets, starting from the current global State; the
// shards' States are then averaged by Average — the weights and the
// accumulators that define them (running subgradient sums, squared sums,
// step counts) — and the average starts the next round. Averaging is what
// lets the shards run on different workers; how far the result drifts from
// sequential training as S grows is for the report's mAP and sparsity to
// show (compare runs with different numbers of shards).
// With S = 1 it must not drift at all: one shard, any number of rounds,
// gives bit for bit the weights of one learner run over all the triplets,
// which is why State and SetState carry everything that defines the
// weights and not merely the weights themselves.
package learners

import "github.com/bowline/bowline/learners/sparse"

// Online learns a diagonal bilinear similarity S_w(a,b) = Σ_i w_i a_i b_i from
// triplets, one at a time.
//
// Implementations are not safe for concurrent use; a sharded trainer gives
// each shard its own learner.
type Online interface {
	// Name identifies the algorithm, e.g. "solis-ada".
	Name() string
	// Dim is the number of weights, i.e. the vocabulary size.
	Dim() int
	// Update takes one triplet feature u = x ⊙ (x⁺ − x⁻) and returns the
	// hinge loss max(0, 1 − w·u) suffered before the update. Every index
	// of u must be below Dim(); implementations document what happens
	// otherwise.
	Update(u sparse.Vector) float64
	// Weights materialises the current weights into dst (grown if short)
	// and returns it; len = Dim().
	Weights(dst []float32) []float32
	// Params returns the hyper-parameters by name (for the model file and
	// the report).
	Params() map[string]float64
}

// Sparsity returns the share of exactly-zero weights in w, the measure of
// the SOLIS paper's Tables II and V. Negative
// zero counts as zero. An empty w has sparsity 0.
func Sparsity(w []float32) float64 {
	if len(w) == 0 {
		return 0
	}
	zeros := 0
	for _, v := range w {
		if v == 0 {
			zeros++
		}
	}
	return float64(zeros) / float64(len(w))
}
