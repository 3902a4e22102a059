package trainbeam

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	for _, t := range []any{
		(*learners.State)(nil), (*learners.Model)(nil), (*train.RoundState)(nil), (*train.ShardState)(nil), (*train.Feature)(nil),
		(*initFn)(nil), (*roundKeyFn)(nil), (*shardFn)(nil), (*averageFn)(nil), (*modelFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// Sharded trains an online learner over features (PCollection<train.Feature>)
// in one pass with periodic parameter averaging, and returns a
// single-element PCollection<learners.Model>.
//
// The pass follows Seq order, as the sequential learner does. It is cut
// into opt.Rounds contiguous ranges of Seq; in round r the features of the
// r-th range are split over opt.Shards shards by a hash of Seq, every shard
// runs the sequential learner over its features (in Seq order) from the
// averaged state of round r−1 (train.TrainShard), and the shards' states —
// weights and every accumulator that defines them — are averaged in shard
// order into the state of round r (train.Average; see package train). With
// one shard the average of one state is that state, so any number of
// rounds gives exactly the sequential learner's model.
func Sharded(s beam.Scope, features beam.PCollection, opt train.ShardOptions) beam.PCollection {
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

type initFn struct{ Opt train.ShardOptions }

func (f *initFn) ProcessElement(_ []byte) (train.RoundState, error) {
	l, err := train.NewTrainer(f.Opt)
	if err != nil {
		return train.RoundState{}, fmt.Errorf("train: %w", err)
	}
	return train.RoundState{State: l.State()}, nil
}

type roundKeyFn struct{ Round, Rounds, Shards int }

func (f *roundKeyFn) ProcessElement(ft train.Feature, emit func(int, train.Feature)) {
	if train.RoundOf(ft.Seq, f.Rounds) == f.Round {
		emit(train.ShardOf(ft.Seq, f.Shards), ft)
	}
}

type shardFn struct{ Opt train.ShardOptions }

func (f *shardFn) ProcessElement(ctx context.Context, shard int, iter func(*train.Feature) bool, state func(*train.RoundState) bool) (train.ShardState, error) {
	var feats []train.Feature
	var ft train.Feature
	for iter(&ft) {
		feats = append(feats, ft)
		ft = train.Feature{}
	}
	var st train.RoundState
	if !state(&st) {
		return train.ShardState{}, fmt.Errorf("train: shard %d: no state", shard)
	}
	return train.TrainShard(f.Opt, shard, st, feats)
}

type averageFn struct{}

func (averageFn) ProcessElement(ctx context.Context, _ []byte, prev func(*train.RoundState) bool, shards func(*train.ShardState) bool) (train.RoundState, error) {
	var st train.RoundState
	if !prev(&st) {
		return train.RoundState{}, fmt.Errorf("train: no state to average into")
	}
	var all []train.ShardState
	var sh train.ShardState
	for shards(&sh) {
		all = append(all, sh)
		sh = train.ShardState{}
	}
	return train.Average(st, all)
}

type modelFn struct{ Opt train.ShardOptions }

func (f *modelFn) ProcessElement(ctx context.Context, _ []byte, state func(*train.RoundState) bool) (learners.Model, error) {
	var st train.RoundState
	if !state(&st) {
		return learners.Model{}, fmt.Errorf("train: no final state")
	}
	m, err := train.Finish(f.Opt, st)
	if err != nil {
		return learners.Model{}, err
	}
	log.Infof(ctx, "train: %s over %d triplets, %d shards × %d rounds, %.2fs: mean loss %.4f, sparsity %.3f",
		m.Learner, m.Triplets, f.Opt.Shards, f.Opt.Rounds, m.Seconds, m.MeanLoss, learners.Sparsity(m.Weights))
	return m, nil
}
