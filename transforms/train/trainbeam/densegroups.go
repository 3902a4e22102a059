package trainbeam

import (
	"context"
	"fmt"
	"reflect"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*global.Moments)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*denseGroupShardFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*denseGroupInput)(nil)).Elem())
	beam.RegisterFunction(denseGroupInputsFn)
	beam.RegisterType(reflect.TypeOf((*partMomentsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeMomentsFn)(nil)).Elem())
}

// ShardedDenseGroups trains an online learner of dense global features
// (opt.Dims = global.Dims) group by group, as TrainGroupsFrom trains the
// learners of bags of words: the training groups are the triplets parts
// (tripParts, PCollection<formats.Part> of the triplets-g-of-G files
// WriteTriplets writes), and group g is the shard g of every round. In
// round r the DoFn of group g reads its triplets of round r (RoundOf(Seq,
// opt.Rounds) = r), reads the features parts (featParts,
// PCollection<formats.Part> of the features-p-of-P files) that hold their
// images (formats.ShardOf(id, P)) and no other, keeps the global features
// of those images, concatenated and scaled by the scaler of moments (the
// single-element PCollection<global.Moments> of DenseMoments, ReadDense), and learns from the triplets in Seq order,
// starting from the averaged state of round r−1 (train.TrainShard); the
// groups' states are then averaged in group order (train.Average). A
// worker holds one group's triplets of one round and the dense rows of
// the images they name, never the corpus's. It returns a single-element
// PCollection<learners.Model>.
//
// A triplet naming an image without global features (no row in the
// features parts, or a modality of the wrong length) is dropped and
// counted in train/triplets_without_bow; a group with no triplet left in
// a round hands back no state and is left out of that round's average
// (TrainGroupsFrom instead averages in such a group's unchanged state).
// An image found twice in the features parts fails the group, as a bag of
// words twice in a group does.
//
// opt.Shards splits nothing here; it is only recorded in the model's
// parameters, as in TrainGroupsFrom. With one group it is the sequential
// learner over the triplets that have features, in Seq order, for any
// number of rounds.
func ShardedDenseGroups(s beam.Scope, tripParts, featParts, moments beam.PCollection, opt train.ShardOptions) beam.PCollection {
	s = s.Scope("train.Sharded." + opt.Learner)
	state := beam.ParDo(s, &initFn{Opt: opt}, beam.Impulse(s))
	for r := 0; r < opt.Rounds; r++ {
		rs := s.Scope(fmt.Sprintf("round%d", r))
		// A group trains for seconds: it takes what it reads paired with
		// it (denseGroupInput), not as side inputs (onekeybeam).
		in := beam.ParDo(rs, denseGroupInputsFn, onekeybeam.Group(rs, tripParts, featParts, moments, state))
		shards := beam.ParDo(rs, &denseGroupShardFn{Opt: opt, Round: r}, beam.Reshuffle(rs, in))
		state = beam.ParDo(rs, &averageFn{}, beam.Impulse(rs), beam.SideInput{Input: state}, beam.SideInput{Input: shards})
	}
	return beam.ParDo(s, &modelFn{Opt: opt}, beam.Impulse(s), beam.SideInput{Input: state})
}

// denseGroupInput is a triplets part of ShardedDenseGroups (a training
// group) and what its round's DoFn reads besides the parts' files: the
// features parts, the moments of the global features and the state of
// the round before.
type denseGroupInput struct {
	Group     formats.Part
	FeatParts []formats.Part
	Moments   global.Moments
	State     train.RoundState
}

// denseGroupInputsFn emits a denseGroupInput for each triplets part of
// the triplets parts, the features parts, the moments and the state
// grouped under one key (onekeybeam.Group).
func denseGroupInputsFn(_ int, groups, featParts func(*formats.Part) bool, moments func(*global.Moments) bool, states func(*train.RoundState) bool,
	emit func(denseGroupInput)) error {
	mo, err := onekeybeam.One(moments, "the moments of the global features")
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	st, err := onekeybeam.One(states, "the state of the round before")
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	var fs []formats.Part
	var p formats.Part
	for featParts(&p) {
		fs = append(fs, p)
	}
	for groups(&p) {
		emit(denseGroupInput{Group: p, FeatParts: fs, Moments: mo, State: st})
	}
	return nil
}

type denseGroupShardFn struct {
	Opt   train.ShardOptions
	Round int

	// scaler is derived from the moments on the first element, as
	// scaleFn's.
	scaler  *global.Scaler
	missing beam.Counter
}

func (f *denseGroupShardFn) Setup() { f.missing = beam.NewCounter("train", "triplets_without_bow") }

func (f *denseGroupShardFn) ProcessElement(ctx context.Context, in denseGroupInput, emit func(train.ShardState)) error {
	g := in.Group
	trips, err := f.roundTriplets(ctx, g)
	if err != nil || len(trips) == 0 {
		return err
	}
	if f.scaler == nil {
		sc, err := global.NewScaler(in.Moments, global.Dims)
		if err != nil {
			return fmt.Errorf("train: group %d: %w", g.Part, err)
		}
		f.scaler = &sc
	}
	paths, parts, err := featurePaths(iter(in.FeatParts...))
	if err != nil {
		return fmt.Errorf("train: group %d: %w", g.Part, err)
	}
	rows, err := f.readRows(ctx, g, trips, paths, parts)
	if err != nil {
		return err
	}
	feats := make([]train.Feature, 0, len(trips))
	for _, t := range trips {
		if ft, ok := f.feature(ctx, rows, t); ok {
			feats = append(feats, ft)
		}
	}
	if len(feats) == 0 {
		return nil // an empty shard: no state to average in
	}
	sh, err := train.TrainShard(f.Opt, g.Part, in.State, feats)
	if err != nil {
		return fmt.Errorf("train: group %d: %w", g.Part, err)
	}
	log.Infof(ctx, "train: %s round %d, group %d: %d of %d triplets over %d images, %.2fs",
		f.Opt.Learner, f.Round, g.Part, len(feats), len(trips), len(rows), sh.Seconds)
	emit(sh)
	return nil
}

// roundTriplets reads the triplets of group g that belong to this round.
func (f *denseGroupShardFn) roundTriplets(ctx context.Context, g formats.Part) ([]formats.Triplet, error) {
	var trips []formats.Triplet
	err := fileio.ReadEach(ctx, g.Path, func(t *formats.Triplet) error {
		if train.RoundOf(t.Seq, f.Opt.Rounds) == f.Round {
			trips = append(trips, *t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("train: group %d: %w", g.Part, err)
	}
	return trips, nil
}

// featurePaths returns the features parts' paths by part and their number.
func featurePaths(featParts func(*formats.Part) bool) (map[int]string, int, error) {
	paths := map[int]string{}
	parts := 0
	var p formats.Part
	for featParts(&p) {
		if parts != 0 && p.Parts != parts {
			return nil, 0, fmt.Errorf("features parts of %d and of %d parts", parts, p.Parts)
		}
		if p.Parts < 1 || p.Part < 0 || p.Part >= p.Parts {
			return nil, 0, fmt.Errorf("features part %d of %d (%s)", p.Part, p.Parts, p.Path)
		}
		if q, dup := paths[p.Part]; dup {
			return nil, 0, fmt.Errorf("features part %d twice: %s and %s", p.Part, q, p.Path)
		}
		parts, paths[p.Part] = p.Parts, p.Path
	}
	return paths, parts, nil
}

// readRows reads, from the features parts that hold them and no other, the
// global features of the images trips name, concatenated and scaled. An
// image without them (in no part, or with a modality of the wrong length)
// has no row.
func (f *denseGroupShardFn) readRows(ctx context.Context, g formats.Part, trips []formats.Triplet, paths map[int]string, parts int) (map[string][]float32, error) {
	need := map[string]bool{}
	for _, t := range trips {
		need[t.Query], need[t.Positive], need[t.Negative] = true, true, true
	}
	if parts == 0 {
		return nil, nil // no features at all: every triplet is dropped
	}
	wanted := map[int]bool{}
	for id := range need {
		wanted[formats.ShardOf(id, parts)] = true
	}
	order := make([]int, 0, len(wanted))
	for p := range wanted {
		order = append(order, p)
	}
	sort.Ints(order)
	rows := make(map[string][]float32, len(need))
	for _, p := range order {
		path, ok := paths[p]
		if !ok {
			log.Warnf(ctx, "train: group %d: features part %d of %d is missing; its images have no global features", g.Part, p, parts)
			continue
		}
		_, err := ReadDense(ctx, path, f.scaler, func(r train.DenseRow) error {
			if !need[r.ImageID] {
				return nil
			}
			if _, dup := rows[r.ImageID]; dup {
				return fmt.Errorf("image %s twice in the features", r.ImageID)
			}
			rows[r.ImageID] = r.X
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("train: group %d: %w", g.Part, err)
		}
	}
	return rows, nil
}

// feature returns t's feature over rows, or drops and counts t, naming
// the first of its images without a row, as the join does.
func (f *denseGroupShardFn) feature(ctx context.Context, rows map[string][]float32, t formats.Triplet) (train.Feature, bool) {
	var v [3][]float32
	for i, id := range [3]string{t.Query, t.Positive, t.Negative} {
		r, ok := rows[id]
		if !ok {
			drop(ctx, f.missing, t, [3]string{"query", "positive", "negative"}[i], id)
			return train.Feature{}, false
		}
		v[i] = r
	}
	return train.Feature{Seq: t.Seq, X: v[0], P: v[1], N: v[2]}, true
}

// DenseMoments combines the per-dimension moments of the global features
// of every image of the features parts (PCollection<formats.Part>) into
// the single-element PCollection<global.Moments> the dense learners and
// their evaluation scale by. Each part's DoFn reads only the global
// columns of its file, so no image's features travel.
func DenseMoments(s beam.Scope, featParts beam.PCollection) beam.PCollection {
	s = s.Scope("train.DenseMoments")
	return beam.Combine(s, &mergeMomentsFn{}, beam.ParDo(s, &partMomentsFn{}, featParts))
}

type partMomentsFn struct{ missing beam.Counter }

func (f *partMomentsFn) Setup() {
	f.missing = beam.NewCounter("train", "images_without_global_features")
}

func (f *partMomentsFn) ProcessElement(ctx context.Context, p formats.Part) (global.Moments, error) {
	var m global.Moments
	missing, err := ReadDense(ctx, p.Path, nil, func(r train.DenseRow) error {
		m.Add(r.X)
		return nil
	})
	f.missing.Inc(ctx, int64(missing))
	if err != nil {
		return global.Moments{}, fmt.Errorf("train: features part %d: %w", p.Part, err)
	}
	return m, nil
}

type mergeMomentsFn struct{}

func (mergeMomentsFn) MergeAccumulators(a, b global.Moments) global.Moments {
	a.Merge(b)
	return a
}
