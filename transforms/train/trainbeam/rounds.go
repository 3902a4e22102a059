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
		(*learners.State)(nil), (*learners.Model)(nil), (*train.RoundState)(nil), (*train.ShardState)(nil),
		(*initFn)(nil), (*averageFn)(nil), (*modelFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// The round machinery of sharded training (ShardedDenseGroups, and
// TrainGroupsFrom's models): initFn makes the state of round 0, averageFn
// averages the shards' states of a round into the next round's state
// (train.Average), modelFn turns the last state into the model
// (train.Finish). averageFn and modelFn are driven by Impulse with the
// states as side inputs, so that a round with no shards passes the state
// on instead of ending the chain.
type initFn struct{ Opt train.ShardOptions }

func (f *initFn) ProcessElement(_ []byte) (train.RoundState, error) {
	l, err := train.NewTrainer(f.Opt)
	if err != nil {
		return train.RoundState{}, fmt.Errorf("train: %w", err)
	}
	return train.RoundState{State: l.State()}, nil
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
