package trainbeam

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	for _, t := range []any{(*learnerStates)(nil), (*groupShards)(nil), (*initAllFn)(nil), (*trainGroupFn)(nil), (*averageAllFn)(nil), (*pickStateFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// TrainGroupsFrom trains several online learners of bags of words over
// the training groups (PCollection<Group>, from Groups) and writes the
// groups' triplets, loading each group once per round for all of them.
//
// Loading a group (reading its bags of words and drawing its triplets) is
// what costs memory, and on a runner that runs stages side by side as
// many loads can be alive at once as there are stages that load. Here, in
// round r, one DoFn per group loads it once and trains from it a shard of
// every learner, from that learner's averaged state of round r−1
// (train.Group.TrainShard); the shards' states are averaged in group
// order (train.Average). In round 0 the same DoFn writes the group's
// triplets, as WriteTriplets writes them. A worker holds one group and
// the learners' states. With one group and one round a learner is the
// sequential learner.
//
// It returns, for each opts[i], a single-element PCollection<learners.Model>
// models[i]; each learner's final state (PCollection<train.RoundState>),
// for StateRows; and tripParts, the parts written
// (PCollection<formats.Part>), the same files dir/triplets-g-of-G.parquet,
// byte for byte, the same records and the same triplets/sampled counter as
//
//	WriteTriplets(s, groups, trip, dir)
//
// but for its timings. Each load counts one in train/group_loads: groups ×
// rounds in all.
//
// The learners share the rounds, so every opts[i].Rounds must be the same
// and positive (round 0 writes the triplets): TrainGroupsFrom panics
// otherwise, as beam.ParDo panics on a malformed pipeline, since such
// options are a mistake in the code that builds the job, not in the data.
// With no opts it is WriteTriplets and trains nothing.
//
// warm, if valid, is a PCollection<Warm> of at most one state per learner
// (by its index in opts), read from an earlier run (ReadWarm); a learner
// with one starts from it and trains on the triplets whose query is not
// among the group's carried images (Group.Carried: the images new or
// changed since that run) and on WarmReplay times as many of the others'
// (train.Group.WarmKeep); the others start fresh and train on every
// triplet. The triplets written are all of them either way. With dir ""
// it writes no triplets (tripParts is empty): validation tuning trains on
// groups that leave out its validation images, whose triplets are not the
// run's.
func TrainGroupsFrom(s beam.Scope, groups beam.PCollection, opts []train.ShardOptions, trip triplets.Options, dir string, warm beam.PCollection) (models, states []beam.PCollection, tripParts beam.PCollection) {
	if len(opts) == 0 {
		return nil, nil, WriteTriplets(s, groups, trip, dir)
	}
	rounds := opts[0].Rounds
	for _, o := range opts {
		if o.Rounds != rounds {
			panic(fmt.Sprintf("trainbeam: TrainGroupsFrom: %s trains %d rounds, %s %d: the learners must share their rounds", opts[0].Learner, rounds, o.Learner, o.Rounds))
		}
	}
	if rounds < 1 {
		panic(fmt.Sprintf("trainbeam: TrainGroupsFrom: %d rounds, want at least 1", rounds))
	}
	s = s.Scope("train.TrainGroups")
	if !warm.IsValid() {
		warm = beam.CreateList(s, []Warm{})
	}
	all := beam.ParDo(s, &initAllFn{Opts: opts}, beam.Impulse(s), beam.SideInput{Input: warm})
	for r := range rounds {
		rs := s.Scope(fmt.Sprintf("round%d", r))
		// A group trains for seconds: it takes the states paired with
		// it, not as a side input (onekeybeam).
		shards, parts := beam.ParDo2(rs, &trainGroupFn{Opts: opts, Trip: trip, Round: r, Dir: dir, Replay: WarmReplay}, onekeybeam.Pair(rs, groups, all, "the learners' states"))
		if r == 0 {
			tripParts = parts
		}
		// Driven by Impulse, not by the shards' output, so that a round
		// with no groups at all passes the states on.
		all = beam.ParDo(rs, &averageAllFn{}, beam.Impulse(rs), beam.SideInput{Input: all}, beam.SideInput{Input: shards})
	}
	for i, o := range opts {
		ms := s.Scope(fmt.Sprintf("model%d.%s", i, o.Learner))
		st := beam.ParDo(ms, &pickStateFn{Learner: i}, all)
		models = append(models, beam.ParDo(ms, &modelFn{Opt: o}, beam.Impulse(ms), beam.SideInput{Input: st}))
		states = append(states, st)
	}
	return models, states, tripParts
}

// WarmReplay is the replay (train.Group.WarmKeep) of the learners that
// TrainGroupsFrom warm-starts: how many triplets of queries carried over
// from the earlier run a learner continued from that run's state trains
// on for each triplet of a new query.
//
// On ETH-80 (1,000 words, a tenth of the images new, 656 held-out
// queries) the new queries' triplets alone left the warm-started learners
// 0.02–0.24 points of held-out mAP from the same learners trained afresh
// on every triplet of the same bags of words, four of five below; one
// replayed triplet per new one put all five at −0.03 to +0.16 points of
// it, for twice the new triplets' training (a fifth of a full pass),
// while three per new one or a whole pass gained at most another 0.4
// points for two and five times as much training. None closes the
// distance to a full rebuild (0.4–0.5 points with one replayed, 0.5–0.8
// with none), which is mostly the vocabulary's (the run keeps the earlier
// run's, the rebuild draws its own) and within its noise: a full rebuild
// with its vocabulary drawn from another sample of descriptors moved by
// 0.6–1.4 points itself. On 22,000 synthetic images every choice was
// within 0.1 points of the full rebuild.
const WarmReplay float64 = 1

// learnerStates is the round state of every learner of TrainGroupsFrom, in
// the order of its opts: one element, so that a group's DoFn takes one
// value paired with it whatever the number of learners. Warm[i] reports that
// learner i started from an earlier run's state.
type learnerStates struct {
	States []train.RoundState
	Warm   []bool
}

// groupShards is what one group hands back at the end of a round: every
// learner's shard state, in the order of the opts.
type groupShards struct {
	Group  int
	Shards []train.ShardState
}

// iter returns a side-input iterator over xs, so that the round DoFns
// (averageFn, modelFn) run on values in hand.
func iter[T any](xs ...T) func(*T) bool {
	return func(x *T) bool {
		if len(xs) == 0 {
			return false
		}
		*x, xs = xs[0], xs[1:]
		return true
	}
}

type initAllFn struct{ Opts []train.ShardOptions }

func (f *initAllFn) ProcessElement(ctx context.Context, _ []byte, warm func(*Warm) bool) (learnerStates, error) {
	out := learnerStates{States: make([]train.RoundState, len(f.Opts)), Warm: make([]bool, len(f.Opts))}
	for i, o := range f.Opts {
		st, err := (&initFn{Opt: o}).ProcessElement(nil)
		if err != nil {
			return learnerStates{}, err
		}
		out.States[i] = st
	}
	var w Warm
	for warm(&w) {
		if w.Index < 0 || w.Index >= len(f.Opts) || out.Warm[w.Index] {
			return learnerStates{}, fmt.Errorf("train: a warm start for learner %d of %d, or two", w.Index, len(f.Opts))
		}
		// The state is checked by restoring it, as every shard will.
		l, err := train.NewTrainer(f.Opts[w.Index])
		if err != nil {
			return learnerStates{}, fmt.Errorf("train: %w", err)
		}
		if err := l.SetState(w.State); err != nil {
			return learnerStates{}, fmt.Errorf("train: the warm start of %s: %w", f.Opts[w.Index].Learner, err)
		}
		out.States[w.Index] = train.RoundState{State: w.State}
		out.Warm[w.Index] = true
		log.Infof(ctx, "train: %s starts from the previous run's state (%d steps)", f.Opts[w.Index].Learner, w.State.Steps)
	}
	return out, nil
}

type trainGroupFn struct {
	Opts  []train.ShardOptions
	Trip  triplets.Options
	Round int
	// Dir is where round 0 writes the triplets; "" writes none.
	Dir string
	// Replay is the replay of train.Group.WarmKeep for the warm-started
	// learners.
	Replay float64

	loads, sampled beam.Counter
}

func (f *trainGroupFn) Setup() {
	f.loads = beam.NewCounter("train", "group_loads")
	f.sampled = beam.NewCounter("triplets", "sampled")
}

func (f *trainGroupFn) ProcessElement(ctx context.Context, g Group, st learnerStates, emit func(groupShards), emitPart func(formats.Part)) error {
	if len(st.States) != len(f.Opts) {
		return fmt.Errorf("train: group %d: %d learners' states, want %d", g.Index, len(st.States), len(f.Opts))
	}
	start := time.Now()
	tg, release, err := g.load(ctx, f.Trip)
	defer release()
	if err != nil {
		return err
	}
	f.loads.Inc(ctx, 1)
	if f.Round == 0 && f.Dir != "" {
		part, err := writeGroupTriplets(ctx, f.Dir, g, tg, f.sampled, start)
		if err != nil {
			return err
		}
		emitPart(part)
	}
	out := groupShards{Group: g.Index, Shards: make([]train.ShardState, len(f.Opts))}
	var warmKeep func(formats.Triplet) bool
	if slices.Contains(st.Warm, true) {
		warmKeep = tg.WarmKeep(g.Carried, f.Replay)
	}
	for i, o := range f.Opts {
		var keep func(formats.Triplet) bool
		if i < len(st.Warm) && st.Warm[i] {
			keep = warmKeep
		}
		if out.Shards[i], err = tg.TrainShardOf(o, g.Index, st.States[i], f.Round, o.Rounds, keep); err != nil {
			return err
		}
	}
	emit(out)
	return nil
}

// writeGroupTriplets writes the triplets of the loaded group g and
// returns the part written, timed from start.
func writeGroupTriplets(ctx context.Context, dir string, g Group, tg *train.Group, sampled beam.Counter, start time.Time) (formats.Part, error) {
	path := fileio.Join(dir, formats.ShardName(TripletsName, g.Index, g.Groups))
	if err := fileio.WriteFile(ctx, path, tg.Triplets); err != nil {
		return formats.Part{}, fmt.Errorf("triplets: group %d: %w", g.Index, err)
	}
	sampled.Inc(ctx, int64(len(tg.Triplets)))
	return formats.Part{Name: TripletsName, Part: g.Index, Parts: g.Groups, Path: path, Rows: int64(len(tg.Triplets)), Inputs: int64(tg.Images())}.Timed(start), nil
}

type averageAllFn struct{}

// ProcessElement averages learner by learner, re-reading the groups'
// shards for each, so that it holds one learner's shards at a time, as
// averageFn does for its one learner.
func (averageAllFn) ProcessElement(ctx context.Context, _ []byte, prev func(*learnerStates) bool, shards func() func(*groupShards) bool) (learnerStates, error) {
	var st learnerStates
	if !prev(&st) {
		return learnerStates{}, fmt.Errorf("train: no state to average into")
	}
	for i := range st.States {
		next := shards()
		var bad error
		learner := func(sh *train.ShardState) bool {
			var gs groupShards
			if bad != nil || !next(&gs) {
				return false
			}
			if len(gs.Shards) != len(st.States) {
				bad = fmt.Errorf("train: group %d: %d learners' shards, want %d", gs.Group, len(gs.Shards), len(st.States))
				return false
			}
			*sh = gs.Shards[i]
			return true
		}
		avg, err := averageFn{}.ProcessElement(ctx, nil, iter(st.States[i]), learner)
		if bad != nil {
			return learnerStates{}, bad
		}
		if err != nil {
			return learnerStates{}, err
		}
		st.States[i] = avg
	}
	return st, nil
}

type pickStateFn struct{ Learner int }

func (f *pickStateFn) ProcessElement(st learnerStates) (train.RoundState, error) {
	if f.Learner >= len(st.States) {
		return train.RoundState{}, fmt.Errorf("train: no state of learner %d among %d", f.Learner, len(st.States))
	}
	return st.States[f.Learner], nil
}
