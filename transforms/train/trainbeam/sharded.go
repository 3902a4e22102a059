package trainbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/learners"
	// Learners register themselves with learners.New and learners.NewDense
	// by name.
	_ "github.com/bowline/bowline/learners/oasis"
	_ "github.com/bowline/bowline/learners/solis"
)

func init() {
	for _, t := range []any{
		(*learners.State)(nil), (*roundState)(nil), (*shardState)(nil),
		(*initFn)(nil), (*roundKeyFn)(nil), (*shardFn)(nil), (*averageFn)(nil), (*modelFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

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

// Validate reports options Sharded cannot run with.
func (o ShardOptions) Validate() error {
	if o.Shards < 1 || o.Rounds < 1 {
		return fmt.Errorf("train: shards and rounds must be positive, got %d and %d", o.Shards, o.Rounds)
	}
	_, err := newTrainee(o)
	return err
}

// trainee is an online learner of either kind, as a shard runs it.
type trainee interface {
	Name() string
	Params() map[string]float64
	State() learners.State
	SetState(learners.State) error
	// step learns from one triplet and returns the loss before the step.
	step(Feature) (float64, error)
}

func newTrainee(o ShardOptions) (trainee, error) {
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

func (t bowTrainee) step(ft Feature) (float64, error) {
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

func (t *denseTrainee) step(ft Feature) (float64, error) {
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

// roundState is the global state between rounds, with the bookkeeping the
// report needs.
type roundState struct {
	State      learners.State
	Triplets   int64
	Loss       float64
	Violations int64
	// Seconds is the critical path: the sum over rounds of the slowest
	// shard's time.
	Seconds float64
}

// shardState is what one shard hands back at the end of a round.
type shardState struct {
	Shard      int
	State      learners.State
	Triplets   int64
	Loss       float64
	Violations int64
	Seconds    float64
}

// Sharded trains an online learner over features (PCollection<Feature>) in
// one pass with periodic parameter averaging, and returns a single-element
// PCollection<Model>.
//
// The pass follows Seq order, as the sequential learner does. It is cut
// into opt.Rounds contiguous ranges of Seq; in round r the features of the
// r-th range are split over opt.Shards shards by a hash of Seq, every shard
// runs the sequential learner over its features (in Seq order) from the
// averaged state of round r−1, and the shards' states — weights and every
// accumulator that defines them — are averaged in shard order into the state
// of round r (ALGORITHMS.md, "Sharded training"). With one shard the
// average of one state is that state, so any number of rounds gives exactly
// the sequential learner's model.
func Sharded(s beam.Scope, features beam.PCollection, opt ShardOptions) beam.PCollection {
	s = s.Scope("train.Sharded." + opt.Learner)
	state := beam.ParDo(s, &initFn{Opt: opt}, beam.Impulse(s))
	for r := 0; r < opt.Rounds; r++ {
		rs := s.Scope(fmt.Sprintf("round%d", r))
		keyed := beam.ParDo(rs, &roundKeyFn{Round: r, Rounds: opt.Rounds, Shards: opt.Shards}, features)
		shards := beam.ParDo(rs, &shardFn{Opt: opt}, beam.GroupByKey(rs, keyed), beam.SideInput{Input: state})
		// Driven by Impulse, not by the shards' output, so that a round with
		// no features passes the state on instead of ending the chain.
		state = beam.ParDo(rs, &averageFn{}, beam.Impulse(rs), beam.SideInput{Input: state}, beam.SideInput{Input: shards})
	}
	return beam.ParDo(s, &modelFn{Opt: opt}, beam.Impulse(s), beam.SideInput{Input: state})
}

type initFn struct{ Opt ShardOptions }

func (f *initFn) ProcessElement(_ []byte) (roundState, error) {
	l, err := newTrainee(f.Opt)
	if err != nil {
		return roundState{}, fmt.Errorf("train: %w", err)
	}
	return roundState{State: l.State()}, nil
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
	z := uint64(seq) + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return int((z ^ (z >> 31)) % uint64(shards))
}

type roundKeyFn struct{ Round, Rounds, Shards int }

func (f *roundKeyFn) ProcessElement(ft Feature, emit func(int, Feature)) {
	if RoundOf(ft.Seq, f.Rounds) == f.Round {
		emit(ShardOf(ft.Seq, f.Shards), ft)
	}
}

type shardFn struct{ Opt ShardOptions }

func (f *shardFn) ProcessElement(ctx context.Context, shard int, iter func(*Feature) bool, state func(*roundState) bool) (shardState, error) {
	var feats []Feature
	var ft Feature
	for iter(&ft) {
		feats = append(feats, ft)
		ft = Feature{}
	}
	sort.Slice(feats, func(i, j int) bool { return feats[i].Seq < feats[j].Seq })
	var st roundState
	if !state(&st) {
		return shardState{}, fmt.Errorf("train: shard %d: no state", shard)
	}
	l, err := newTrainee(f.Opt)
	if err != nil {
		return shardState{}, fmt.Errorf("train: %w", err)
	}
	if err := l.SetState(st.State); err != nil {
		return shardState{}, fmt.Errorf("train: shard %d: %w", shard, err)
	}
	start := time.Now()
	out := shardState{Shard: shard, Triplets: int64(len(feats))}
	for _, ft := range feats {
		ls, err := l.step(ft)
		if err != nil {
			return shardState{}, err
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

type averageFn struct{}

func (averageFn) ProcessElement(ctx context.Context, _ []byte, prev func(*roundState) bool, shards func(*shardState) bool) (roundState, error) {
	var st roundState
	if !prev(&st) {
		return roundState{}, fmt.Errorf("train: no state to average into")
	}
	var all []shardState
	var sh shardState
	for shards(&sh) {
		all = append(all, sh)
		sh = shardState{}
	}
	if len(all) == 0 {
		return st, nil
	}
	// Averaging in shard order makes the float sums, and so the model, the
	// same however the runner delivered the states.
	sort.Slice(all, func(i, j int) bool { return all[i].Shard < all[j].Shard })
	states := make([]learners.State, len(all))
	slowest := 0.0
	for i, a := range all {
		states[i] = a.State
		st.Triplets += a.Triplets
		st.Loss += a.Loss
		st.Violations += a.Violations
		slowest = math.Max(slowest, a.Seconds)
	}
	avg, err := learners.Average(states)
	if err != nil {
		return roundState{}, fmt.Errorf("train: %w", err)
	}
	st.State = avg
	st.Seconds += slowest
	return st, nil
}

type modelFn struct{ Opt ShardOptions }

func (f *modelFn) ProcessElement(ctx context.Context, _ []byte, state func(*roundState) bool) (Model, error) {
	var st roundState
	if !state(&st) {
		return Model{}, fmt.Errorf("train: no final state")
	}
	l, err := newTrainee(f.Opt)
	if err != nil {
		return Model{}, fmt.Errorf("train: %w", err)
	}
	if err := l.SetState(st.State); err != nil {
		return Model{}, fmt.Errorf("train: %w", err)
	}
	params, err := json.Marshal(withSharding(l.Params(), f.Opt))
	if err != nil {
		return Model{}, fmt.Errorf("train: %w", err)
	}
	m := Model{
		Learner:    l.Name(),
		Params:     string(params),
		Triplets:   st.Triplets,
		Violations: st.Violations,
		Seconds:    st.Seconds,
	}
	if b, ok := l.(bowTrainee); ok {
		m.Weights = b.Weights(nil)
	} else {
		m.Dims, m.State = slices.Clone(f.Opt.Dims), st.State
	}
	if st.Triplets > 0 {
		m.MeanLoss = st.Loss / float64(st.Triplets)
	}
	log.Infof(ctx, "train: %s over %d triplets, %d shards × %d rounds, %.2fs: mean loss %.4f, sparsity %.3f",
		m.Learner, m.Triplets, f.Opt.Shards, f.Opt.Rounds, m.Seconds, m.MeanLoss, learners.Sparsity(m.Weights))
	return m, nil
}

func withSharding(p map[string]float64, o ShardOptions) map[string]float64 {
	out := make(map[string]float64, len(p)+2)
	for k, v := range p {
		out[k] = v
	}
	out["shards"], out["rounds"] = float64(o.Shards), float64(o.Rounds)
	return out
}
