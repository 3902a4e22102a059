package train

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/internal/splitmix"
	"github.com/bowline/bowline/transforms/setting"
)

// ShardOptions configures sharded training.
type ShardOptions struct {
	// Learner names the algorithm (see learners.New); Params overrides its
	// defaults by name.
	Learner string
	Params  map[string]float64
	// Dim is the vocabulary size, for a bag-of-words learner.
	Dim int
	// Dims are the modality dimensions, for a learner of dense global
	// features (learners.DenseOnline).
	Dims []int
	// Shards is the number of workers a round's triplets are split over;
	// Rounds is the number of times their states are averaged.
	Shards, Rounds int
}

// Validate reports options a sharded pass cannot run with.
func (o ShardOptions) Validate() error {
	switch {
	case o.Shards < 1:
		return setting.Errorf("train", "Shards", o.Shards, "1 or more")
	case o.Rounds < 1:
		return setting.Errorf("train", "Rounds", o.Rounds, "1 or more")
	}
	_, err := NewTrainer(o)
	return err
}

// Trainer is an online learner of either kind, as a shard runs it.
type Trainer interface {
	Name() string
	Params() map[string]float64
	State() learners.State
	SetState(learners.State) error
	// Step learns from one triplet and returns the loss before the step.
	Step(Feature) (float64, error)
}

// NewTrainer returns the learner o names, fresh.
func NewTrainer(o ShardOptions) (Trainer, error) {
	if !learners.IsDense(o.Learner) {
		l, err := learners.New(o.Learner, o.Dim, o.Params)
		if err != nil {
			return nil, err
		}
		return bowTrainee{l}, nil
	}
	m, err := learners.NewDense(o.Learner, o.Dims, o.Params)
	if err != nil {
		return nil, err
	}
	l, ok := m.(learners.DenseOnline)
	if !ok {
		return nil, fmt.Errorf("train: %s is a batch learner, not an online one", o.Learner)
	}
	return &denseTrainee{DenseOnline: l}, nil
}

type bowTrainee struct{ learners.Stateful }

func (t bowTrainee) Step(ft Feature) (float64, error) {
	if err := ft.U.Validate(t.Dim()); err != nil {
		return 0, fmt.Errorf("train: triplet %d: %w", ft.Seq, err)
	}
	return t.Update(ft.U), nil
}

// denseTrainee converts each triplet's float32 features into reused
// float64 buffers for the learner.
type denseTrainee struct {
	learners.DenseOnline
	x, p, n []float64
}

func (t *denseTrainee) Step(ft Feature) (float64, error) {
	t.x, t.p, t.n = widen(t.x, ft.X), widen(t.p, ft.P), widen(t.n, ft.N)
	loss, err := t.Update(t.x, t.p, t.n)
	if err != nil {
		return 0, fmt.Errorf("train: triplet %d: %w", ft.Seq, err)
	}
	return loss, nil
}

func widen(dst []float64, x []float32) []float64 {
	dst = dst[:0]
	for _, v := range x {
		dst = append(dst, float64(v))
	}
	return dst
}

// RoundState is the global state between rounds, with the bookkeeping the
// report needs.
type RoundState struct {
	State      learners.State
	Triplets   int64
	Loss       float64
	Violations int64
	// Seconds is the critical path: the sum over rounds of the slowest
	// shard's time.
	Seconds float64
}

// ShardState is what one shard hands back at the end of a round.
type ShardState struct {
	Shard      int
	State      learners.State
	Triplets   int64
	Loss       float64
	Violations int64
	Seconds    float64
}

// TrainShard runs one shard of a round: a learner restored from the
// round's state st learns from feats in Seq order (feats is sorted in
// place), and the shard's state and bookkeeping come back.
func TrainShard(o ShardOptions, shard int, st RoundState, feats []Feature) (ShardState, error) {
	sort.Slice(feats, func(i, j int) bool { return feats[i].Seq < feats[j].Seq })
	return trainEach(o, shard, st, len(feats), func(i int) (Feature, error) { return feats[i], nil })
}

// trainEach is TrainShard over n features made one at a time, in order,
// by feature; a feature need not outlive the step that consumes it.
func trainEach(o ShardOptions, shard int, st RoundState, n int, feature func(i int) (Feature, error)) (ShardState, error) {
	l, err := NewTrainer(o)
	if err != nil {
		return ShardState{}, fmt.Errorf("train: %w", err)
	}
	if err := l.SetState(st.State); err != nil {
		return ShardState{}, fmt.Errorf("train: shard %d: %w", shard, err)
	}
	start := time.Now()
	out := ShardState{Shard: shard, Triplets: int64(n)}
	for i := range n {
		ft, err := feature(i)
		if err != nil {
			return ShardState{}, err
		}
		ls, err := l.Step(ft)
		if err != nil {
			return ShardState{}, err
		}
		if ls > 0 {
			out.Loss += ls
			out.Violations++
		}
	}
	out.Seconds = time.Since(start).Seconds()
	out.State = l.State()
	return out, nil
}

// Average folds the states of a round's shards into st: the parameters
// are averaged (learners.Average), the bookkeeping summed, and the round's
// time is its slowest shard's. Shards are taken in shard order, so the
// float sums, and so the model, do not depend on the order they arrived
// in. No shards (a round without triplets) leave st as it is.
func Average(st RoundState, shards []ShardState) (RoundState, error) {
	if len(shards) == 0 {
		return st, nil
	}
	sort.Slice(shards, func(i, j int) bool { return shards[i].Shard < shards[j].Shard })
	states := make([]learners.State, len(shards))
	slowest := 0.0
	for i, a := range shards {
		states[i] = a.State
		st.Triplets += a.Triplets
		st.Loss += a.Loss
		st.Violations += a.Violations
		slowest = math.Max(slowest, a.Seconds)
	}
	avg, err := learners.Average(states)
	if err != nil {
		return RoundState{}, fmt.Errorf("train: %w", err)
	}
	st.State = avg
	st.Seconds += slowest
	return st, nil
}

// Finish turns the state after the last round into the model.
func Finish(o ShardOptions, st RoundState) (learners.Model, error) {
	l, err := NewTrainer(o)
	if err != nil {
		return learners.Model{}, fmt.Errorf("train: %w", err)
	}
	if err := l.SetState(st.State); err != nil {
		return learners.Model{}, fmt.Errorf("train: %w", err)
	}
	params, err := json.Marshal(withSharding(l.Params(), o))
	if err != nil {
		return learners.Model{}, fmt.Errorf("train: %w", err)
	}
	m := learners.Model{
		Learner:    l.Name(),
		Params:     string(params),
		Triplets:   st.Triplets,
		Violations: st.Violations,
		Seconds:    st.Seconds,
	}
	if b, ok := l.(bowTrainee); ok {
		m.Weights = b.Weights(nil)
	} else {
		m.Dims, m.State = slices.Clone(o.Dims), st.State
	}
	if st.Triplets > 0 {
		m.MeanLoss = st.Loss / float64(st.Triplets)
	}
	return m, nil
}

// RoundOf returns the round of the pass that the triplet with this Seq
// belongs to: Seq is a non-negative 63-bit hash, so equal ranges of it hold
// equal shares of the triplets in expectation.
func RoundOf(seq int64, rounds int) int {
	width := uint64(math.MaxInt64)/uint64(rounds) + 1
	return int(uint64(seq) / width)
}

// ShardOf returns the shard of a triplet: a hash of Seq, independent of
// its round.
func ShardOf(seq int64, shards int) int {
	return int(splitmix.Mix64(uint64(seq)) % uint64(shards))
}

func withSharding(p map[string]float64, o ShardOptions) map[string]float64 {
	out := make(map[string]float64, len(p)+2)
	for k, v := range p {
		out[k] = v
	}
	out["shards"], out["rounds"] = float64(o.Shards), float64(o.Rounds)
	return out
}
