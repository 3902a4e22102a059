// Package tunebeam is the Beam wrapper of package tune: it carves the
// validation set from the bags of words, trains and validates every
// point of the grid, chooses each learner's point and picks its model.
package tunebeam

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/evaluate/evaluatebeam"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/progress/progressbeam"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/train/trainbeam"
	"github.com/bowline/bowline/transforms/triplets"
	"github.com/bowline/bowline/transforms/tune"
)

func init() {
	for _, t := range []any{(*tune.ValidationSet)(nil), (*validationSetFn)(nil), (*validationMergeFn)(nil), (*validationShardsFn)(nil), (*validationShard)(nil),
		(*validateFn)(nil), (*tune.Validated)(nil), (*pointSparsityFn)(nil), (*tune.PointSparsity)(nil), (*chooseFn)(nil), (*report.Tuning)(nil),
		(*pickModelFn)(nil), (*pickStateFn)(nil), (*tuneStageFn)(nil), (*tuneTrainStageFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// Options configures Tune: what to tune, the evaluation the validation
// mirrors, and the training groups and loads of the job's learners
// (bowline.Learning's fields of the same names).
type Options struct {
	Tune tune.Options
	Eval evaluate.Options
	// GroupImages, GroupPostings, Shards and GroupLoads make the training
	// groups of the tuning triplets (trainbeam.Groups).
	GroupImages, GroupPostings, Shards, GroupLoads int
	// PartLoads is the most shards a worker process validates (and
	// evaluates: the slots are the evaluation's) at once.
	PartLoads int
}

// Tuned is what Tune hands back: the report's section (single-element
// PCollection<report.Tuning>), and for each tuned learner its chosen
// model (PCollection<learners.Model>) and final state's rows
// (PCollection<formats.ModelTensor>, trainbeam.StateRows), each holding
// the one of the chosen point, and the stages' units of work
// (PCollection<report.Stage>).
type Tuned struct {
	Report beam.PCollection
	Models map[string]beam.PCollection
	States map[string]beam.PCollection
	Units  beam.PCollection
}

// Tune adds validation tuning over grid (tune.Options.Points) to s, on
// the bags of words (PCollection<formats.Part>) and their labels
// (evaluatebeam.Labels): final[i] and finalStates[i] are grid[i]'s model
// and state trained on every training triplet, among the job's learners.
// cut is the held-out split and checked the gate of training (trainbeam.Groups).
func Tune(s beam.Scope, bowParts, labels, cut, checked beam.PCollection, dim int, o Options, trip triplets.Options, grid []tune.Point, final, finalStates []beam.PCollection) Tuned {
	s = s.Scope("Tune")
	vopt := o.Eval
	vopt.QueryFraction = split.Nested(o.Eval.QueryFraction, o.Tune.Share)
	outer := evaluatebeam.Split(s, bowParts, labels, vopt)
	groups := trainbeam.Groups(s, bowParts, outer, checked, o.GroupImages, o.GroupPostings, o.Shards, o.GroupLoads)
	opts := make([]train.ShardOptions, len(grid))
	for i, p := range grid {
		opts[i] = p.Opt
	}
	models, _, _ := trainbeam.TrainGroupsFrom(s, groups, opts, trip, "", beam.PCollection{})
	set := beam.Combine(s, &validationMergeFn{},
		beam.ParDo(s, &validationSetFn{Seed: o.Eval.Seed, Cap: o.Eval.MaxQueries}, bowParts,
			beam.SideInput{Input: labels}, beam.SideInput{Input: cut}, beam.SideInput{Input: outer}))
	var results, sparsities, units []beam.PCollection
	// The baseline is validated too, as point len(grid): the grid's
	// validation mAPs are read against it.
	bs := s.Scope(string(learners.BaselineTFIDF))
	base := beam.ParDo(bs, &validateFn{Point: len(grid), Name: string(learners.BaselineTFIDF), Points: len(grid) + 1, Vocab: dim, Opt: o.Eval, Loads: o.PartLoads},
		validationShards(bs, set, beam.Create(bs, learners.BaselineModel(learners.BaselineTFIDF, nil)), bowParts, cut, o.Eval))
	results = append(results, base)
	units = append(units, beam.ParDo(bs, &tuneStageFn{}, base))
	for i, p := range grid {
		ps := s.Scope(p.Name)
		r := beam.ParDo(ps, &validateFn{Point: i, Name: p.Name, Points: len(grid) + 1, Vocab: dim, Opt: o.Eval, Loads: o.PartLoads},
			validationShards(ps, set, models[i], bowParts, cut, o.Eval))
		results = append(results, r)
		sparsities = append(sparsities, beam.ParDo(ps, &pointSparsityFn{Point: i}, final[i]))
		units = append(units, beam.ParDo(ps, &tuneStageFn{}, r), beam.ParDo(ps, &tuneTrainStageFn{Of: len(grid)}, models[i]))
	}
	choice := beam.ParDo(s, &chooseFn{Grid: grid, Share: o.Tune.Share, Target: o.Tune.TargetSparsity}, beam.Impulse(s),
		beam.SideInput{Input: set}, beam.SideInput{Input: beam.Flatten(s, results...)}, beam.SideInput{Input: beam.Flatten(s, sparsities...)})
	out := Tuned{Report: choice, Models: map[string]beam.PCollection{}, States: map[string]beam.PCollection{}, Units: beam.Flatten(s, units...)}
	// Learner by learner in the grid's order, so that the graph is built
	// the same way every time.
	var order []string
	byLearner := map[string][]int{}
	for i, p := range grid {
		if byLearner[p.Learner] == nil {
			order = append(order, p.Learner)
		}
		byLearner[p.Learner] = append(byLearner[p.Learner], i)
	}
	for _, name := range order {
		idx := byLearner[name]
		ls := s.Scope("pick." + name)
		var ms, sts []beam.PCollection
		for _, i := range idx {
			ms = append(ms, beam.ParDo(ls, &pickModelFn{Learner: name, Method: grid[i].Name}, final[i], beam.SideInput{Input: choice}))
			st := beam.ParDo(ls, &pickStateFn{Learner: name, Method: grid[i].Name}, finalStates[i], beam.SideInput{Input: choice})
			sts = append(sts, trainbeam.StateRows(ls, st, name, grid[i].Opt))
		}
		out.Models[name], out.States[name] = beam.Flatten(ls, ms...), beam.Flatten(ls, sts...)
	}
	return out
}

// validationSetFn reads one part's share of the validation set
// (tune.Part): its training images (not held out by Cut) by label, and
// its validation images (held out by the outer split, not by Cut) as
// queries, trimmed to the sample of Cap.
type validationSetFn struct {
	Seed uint64
	Cap  int
}

func (f *validationSetFn) ProcessElement(ctx context.Context, p formats.Part, labels evaluatebeam.Labels, cut, outer split.Cut) (tune.ValidationSet, error) {
	return tune.Part(f.Seed, f.Cap, labels.Relevant(), cut, outer, p.Part, func(each func(*formats.BoW) error) error {
		return fileio.ReadEach(ctx, p.Path, each)
	})
}

type validationMergeFn struct{}

func (f *validationMergeFn) CreateAccumulator() tune.ValidationSet { return tune.ValidationSet{} }
func (f *validationMergeFn) AddInput(a, b tune.ValidationSet) tune.ValidationSet {
	return tune.Merge(a, b)
}
func (f *validationMergeFn) MergeAccumulators(a, b tune.ValidationSet) tune.ValidationSet {
	return tune.Merge(a, b)
}
func (f *validationMergeFn) ExtractOutput(a tune.ValidationSet) tune.ValidationSet { return a }

// validationShard is a shard of the validation queries of one grid point
// and what its DoFn (validateFn) reads besides the parts' files: the
// validation set (a few bytes a query), the point's model, the parts in
// part order (evaluatebeam.SortedParts) and the split.
type validationShard struct {
	Shard int
	Set   tune.ValidationSet
	Model learners.Model
	Parts []formats.Part
	Cut   split.Cut
}

// validationShards returns the shards of the validation set (single-element
// PCollection<tune.ValidationSet>) under model (single-element
// PCollection<learners.Model>) over the bags of words (PCollection<formats.Part>)
// and the split (single-element PCollection<split.Cut>):
// PCollection<validationShard>, spread over the workers. A shard
// validates for seconds, so it takes these paired with it, not as side
// inputs (onekeybeam).
func validationShards(s beam.Scope, set, model, bowParts, cut beam.PCollection, opt evaluate.Options) beam.PCollection {
	return beam.Reshuffle(s, beam.ParDo(s, &validationShardsFn{Opt: opt}, onekeybeam.Group(s, set, model, bowParts, cut)))
}

type validationShardsFn struct{ Opt evaluate.Options }

func (f *validationShardsFn) ProcessElement(_ int, sets func(*tune.ValidationSet) bool, models func(*learners.Model) bool, parts func(*formats.Part) bool,
	cuts func(*split.Cut) bool, emit func(validationShard)) error {
	v, err := onekeybeam.One(sets, "the validation set")
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	m, err := onekeybeam.One(models, "the model")
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	cut, err := onekeybeam.One(cuts, "the split")
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	if len(v.Queries) == 0 {
		return fmt.Errorf("tune: no validation queries among %d training images: too few images a label to carve a validation set from", v.Images)
	}
	all := evaluatebeam.SortedParts(parts)
	for i := range tune.Shards(f.Opt, v) {
		emit(validationShard{Shard: i, Set: v, Model: m, Parts: all, Cut: cut})
	}
	return nil
}

// validateFn searches the training images (those Cut does not hold out),
// part by part and chunk by chunk as the evaluation does (Ranking), with
// one shard of the validation queries under one grid point's model.
type validateFn struct {
	Point, Points int
	Name          string
	Vocab         int
	Opt           evaluate.Options
	// Loads is the most shards a worker process validates (and
	// evaluates: the slots are the evaluation's) at once.
	Loads int
}

func (f *validateFn) ProcessElement(ctx context.Context, in validationShard) (tune.Validated, error) {
	release, err := evaluatebeam.AcquireShard(ctx, f.Loads)
	if err != nil {
		return tune.Validated{}, err
	}
	defer release()
	start := time.Now()
	shard, v, m, all, cut := in.Shard, in.Set, in.Model, in.Parts, in.Cut
	w, err := m.Diagonal()
	if err != nil {
		return tune.Validated{}, fmt.Errorf("tune %s: %w", f.Name, err)
	}
	n := tune.Shards(f.Opt, v)
	mine, err := evaluatebeam.ReadShard(ctx, v.Queries, v.Parts, shard, n, all)
	if err != nil {
		return tune.Validated{}, fmt.Errorf("tune %s: shard %d: %w", f.Name, shard, err)
	}
	r := evaluate.NewRanking(mine, f.Opt.DepthFor(v.Images), v.Images, v.Relevant())
	training := func(b *formats.BoW) bool { return !cut.IsQuery(b.ImageID, b.Label) }
	if err := evaluatebeam.RankParts(ctx, r, all, f.Opt, w, f.Vocab, training); err != nil {
		return tune.Validated{}, fmt.Errorf("tune %s: %w", f.Name, err)
	}
	scores, err := r.Scores()
	if err != nil {
		return tune.Validated{}, fmt.Errorf("tune %s: shard %d: %w", f.Name, shard, err)
	}
	out := tune.Validated{Point: f.Point, Name: f.Name, Points: f.Points, Shards: n, Queries: int64(len(scores)),
		StartMillis: start.UnixMilli(), EndMillis: time.Now().UnixMilli()}
	for _, q := range scores {
		out.SumAP += q.AP
	}
	if w != nil {
		out.Sparsity = learners.Sparsity(w)
	}
	return out, nil
}

type pointSparsityFn struct{ Point int }

func (f *pointSparsityFn) ProcessElement(m learners.Model) (tune.PointSparsity, error) {
	w, err := m.Diagonal()
	if err != nil {
		return tune.PointSparsity{}, fmt.Errorf("tune: %w", err)
	}
	return tune.PointSparsity{Point: f.Point, Sparsity: learners.Sparsity(w)}, nil
}

// chooseFn sums the grid's validation and chooses each learner's point
// (tune.Report).
type chooseFn struct {
	Grid          []tune.Point
	Share, Target float64
}

func (f *chooseFn) ProcessElement(_ []byte, v tune.ValidationSet, results func(*tune.Validated) bool, sparsities func(*tune.PointSparsity) bool) (report.Tuning, error) {
	var rs []tune.Validated
	var r tune.Validated
	for results(&r) {
		rs = append(rs, r)
	}
	var sps []tune.PointSparsity
	var sp tune.PointSparsity
	for sparsities(&sp) {
		sps = append(sps, sp)
	}
	return tune.Report(f.Grid, f.Share, f.Target, v, rs, sps)
}

// pickModelFn passes on the model of the grid point Method if it is the
// point chosen for Learner, and nothing otherwise.
type pickModelFn struct{ Learner, Method string }

func (f *pickModelFn) ProcessElement(m learners.Model, t report.Tuning, emit func(learners.Model)) {
	if tune.Chosen(t, f.Learner) == f.Method {
		emit(m)
	}
}

// pickStateFn is pickModelFn for the point's final state.
type pickStateFn struct{ Learner, Method string }

func (f *pickStateFn) ProcessElement(st train.RoundState, t report.Tuning, emit func(train.RoundState)) {
	if tune.Chosen(t, f.Learner) == f.Method {
		emit(st)
	}
}

// tuneStageFn records a validation shard as a unit of the stage "tune".
type tuneStageFn struct{}

func (tuneStageFn) ProcessElement(ctx context.Context, r tune.Validated) report.Stage {
	u := report.Unit("tune", r.Queries, r.Queries, r.StartMillis, r.EndMillis)
	progressbeam.Log(ctx, u.Progress("validation shards", r.Name, int64(r.Shards), r.Points))
	return u
}

// tuneTrainStageFn records a grid point's model trained on the tuning
// triplets as a unit of the stage "tune.train": it ends when the model
// reaches it, which follows its training closely.
type tuneTrainStageFn struct{ Of int }

func (f *tuneTrainStageFn) ProcessElement(ctx context.Context, m learners.Model) report.Stage {
	end := time.Now()
	start := end.Add(-time.Duration(m.Seconds * float64(time.Second)))
	u := report.Unit("tune.train", m.Triplets, 1, start.UnixMilli(), end.UnixMilli())
	progressbeam.Log(ctx, u.Progress("models", "", int64(f.Of), 0))
	return u
}
