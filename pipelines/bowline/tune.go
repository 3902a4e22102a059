package bowline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/evaluate/evaluatebeam"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/train/trainbeam"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	for _, t := range []any{(*validationSet)(nil), (*validationSetFn)(nil), (*validationMergeFn)(nil), (*validationShardsFn)(nil),
		(*validateFn)(nil), (*validated)(nil), (*pointSparsityFn)(nil), (*pointSparsity)(nil), (*chooseFn)(nil), (*report.Tuning)(nil),
		(*pickModelFn)(nil), (*pickStateFn)(nil), (*tuneStageFn)(nil), (*tuneTrainStageFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// Tuning configures validation tuning of the learners of bags of words,
// as the SOLIS paper chooses its parameters: on a validation set carved
// from the training images, never from the held-out ones.
//
// Share of each label's training images are validation images (the split
// of split.Nested(QueryFraction, Share) less the held-out queries, so
// that no held-out image is one). Every point of a learner's grid
// (Learning.grid) trains on the triplets of the other training images
// and is scored by the mAP of the validation images searching the
// training images — validation images included, held-out images not even
// as results. The point of best validation mAP is chosen and the learner
// reports the model of that point trained on every training triplet, as
// without tuning; every point is trained that way too, in the same pass
// over the groups as the other learners, so the choice needs no second
// training stage: it picks one of the models already trained.
//
// With TargetSparsity the λ axis of each learner with an L1 strength
// spans SparsityGrid, and only points whose model trained on every
// training triplet — the one reported — has at least that share of zero
// weights are candidates; if none has, the report says so and the
// sparsest point is chosen.
//
// Cost: each grid point trains twice (tuning triplets, every triplet),
// which is cheap beside the evaluation, and is evaluated once on the
// validation queries over the training images: TuneGrid's 68 points over
// the default learners evaluate about 68 × Share × (1 − QueryFraction)
// collections' worth of queries against the evaluation's one per learner.
type Tuning struct {
	// Tune chooses from TuneGrid.
	Tune bool
	// Share is the share of each label's training images held out for
	// validation (--tune_fraction).
	Share float64
	// TargetSparsity is the least share of zero weights of the chosen
	// models of the learners with an L1 strength (0: none).
	TargetSparsity float64
}

// Active reports whether any learner is tuned.
func (t Tuning) Active() bool { return t.Tune || t.TargetSparsity > 0 }

// DefaultTuneShare is --tune_fraction's default.
const DefaultTuneShare = 0.2

// TuneGrid multiplies each tuned hyper-parameter of a learner — its
// default (λ scaled to the vocabulary) — by these factors; a
// hyper-parameter the command line sets is not tuned. The product of a
// learner's axes is its grid: 16 points for each SOLIS learner (η or DA's
// γ, and λ), 4 for diagonal OASIS (C), 68 for the default learners; DA's
// ρ stays 0.
//
// Three factors an axis ({1/3, 1, 3} for η, {0.1, 1, 10} for the rest)
// chose a value at an edge of every axis on ETH-80 at 10K words (λ 0.1×,
// TG's η 3×, DA's γ 0.1×, C 10×, for category and object labels alike);
// a fourth on the side chosen raised held-out mAP by 0.011–0.019 for
// SOLIS-DA and -TG (category 0.2665 → 0.2824 and 0.2777 → 0.2887,
// object 0.0897 → 0.1087 and 0.1033 → 0.1165) and by at most 0.002 for
// the others, for 68 points instead of 39.
var TuneGrid = map[string][]float64{
	"eta":    {1.0 / 3, 1, 3, 10},
	"lambda": {0.01, 0.1, 1, 10},
	"gamma":  {0.01, 0.1, 1, 10},
	"c":      {0.1, 1, 10, 100},
}

// SparsityGrid is the λ axis under a sparsity target: quarter-decades
// from a tenth of the learner's λ to a thousand times it, 17 factors (on
// ETH-80 at 1K words 10× the default already zeroes 96% of the weights,
// 100× 99.6%). Half-decades were too coarse where it matters: on the
// shapes test set they stepped from 94.1% zeros at validation mAP 0.95
// to 99.6% at 0.43, leaving a target of 95% only the latter.
var SparsityGrid = quarterDecades(-1, 3)

// quarterDecades returns 10^(k/4) for k from 4·lo to 4·hi.
func quarterDecades(lo, hi int) []float64 {
	var out []float64
	for k := 4 * lo; k <= 4*hi; k++ {
		out = append(out, math.Pow(10, float64(k)/4))
	}
	return out
}

// gridPoint is one point of a learner's grid: a learner instance of its
// own (Name, named like a sweep's) and its hyper-parameters.
type gridPoint struct {
	Learner, Name string
	Axes          []string
	Opt           train.ShardOptions
}

// grid returns the points of every tuned learner over a vocabulary of dim
// words, learner by learner in l.Learners' order, each learner's axes in
// name order and values ascending: the learners of bags of words, and
// under a target without Tune only those with an L1 strength.
func (l Learning) grid(dim int) []gridPoint {
	if !l.Tune.Active() {
		return nil
	}
	var out []gridPoint
	for _, name := range l.Learners {
		if learners.IsDense(name) {
			continue
		}
		base := l.options(name, dim)
		axes := map[string][]float64{}
		for p, v := range base.Params {
			if _, given := l.Params[name][p]; given {
				continue
			}
			factors := TuneGrid[p]
			if p == "lambda" && l.Tune.TargetSparsity > 0 {
				factors = SparsityGrid
			} else if !l.Tune.Tune {
				continue
			}
			for _, f := range factors {
				axes[p] = append(axes[p], v*f)
			}
		}
		if len(axes) == 0 {
			continue
		}
		names := slices.Sorted(maps.Keys(axes))
		points := []map[string]float64{maps.Clone(base.Params)}
		for _, a := range names {
			var next []map[string]float64
			for _, p := range points {
				for _, v := range axes[a] {
					q := maps.Clone(p)
					q[a] = v
					next = append(next, q)
				}
			}
			points = next
		}
		for _, p := range points {
			o := base
			o.Params = p
			n := name
			for _, a := range names {
				n += "-" + a + "-" + strconv.FormatFloat(p[a], 'g', 4, 64)
			}
			out = append(out, gridPoint{Learner: name, Name: n, Axes: names, Opt: o})
		}
	}
	return out
}

// tuned is what tuning hands back to LearnFrom: the report's section
// (single-element PCollection<report.Tuning>), and for each tuned learner
// its chosen model (PCollection<learners.Model>) and final state's rows
// (PCollection<formats.ModelTensor>, trainbeam.StateRows), each holding
// the one of the chosen point.
type tuned struct {
	Report beam.PCollection
	Models map[string]beam.PCollection
	States map[string]beam.PCollection
	Units  beam.PCollection
}

// tune adds validation tuning over grid (Learning.grid) to s: final[i]
// and finalStates[i] are grid[i]'s model and state trained on every
// training triplet, among the job's learners. cut is the held-out split
// and checked the gate of training (LearnFrom).
func tune(s beam.Scope, bowParts, labels, cut, checked beam.PCollection, dim int, l Learning, trip triplets.Options, grid []gridPoint, final, finalStates []beam.PCollection) tuned {
	s = s.Scope("Tune")
	vopt := l.Eval
	vopt.QueryFraction = split.Nested(l.Eval.QueryFraction, l.Tune.Share)
	outer := evaluatebeam.Split(s, bowParts, labels, vopt)
	groups := trainbeam.Groups(s, bowParts, outer, checked, l.GroupImages, l.GroupPostings, l.Shards, l.GroupLoads)
	opts := make([]train.ShardOptions, len(grid))
	for i, p := range grid {
		opts[i] = p.Opt
	}
	models, _, _ := trainbeam.TrainGroupsFrom(s, groups, opts, trip, "", beam.PCollection{})
	set := beam.Combine(s, &validationMergeFn{},
		beam.ParDo(s, &validationSetFn{Seed: l.Eval.Seed, Cap: l.Eval.MaxQueries}, bowParts,
			beam.SideInput{Input: labels}, beam.SideInput{Input: cut}, beam.SideInput{Input: outer}))
	var results, sparsities, units []beam.PCollection
	// The baseline is validated too, as point len(grid): the grid's
	// validation mAPs are read against it.
	bs := s.Scope(string(learners.BaselineTFIDF))
	base := beam.ParDo(bs, &validateFn{Point: len(grid), Name: string(learners.BaselineTFIDF), Points: len(grid) + 1, Vocab: dim, Opt: l.Eval, Loads: l.PartLoads},
		beam.Reshuffle(bs, beam.ParDo(bs, &validationShardsFn{Opt: l.Eval}, beam.Impulse(bs), beam.SideInput{Input: set})),
		beam.SideInput{Input: set}, beam.SideInput{Input: beam.Create(bs, learners.BaselineModel(learners.BaselineTFIDF, nil))},
		beam.SideInput{Input: bowParts}, beam.SideInput{Input: cut})
	results = append(results, base)
	units = append(units, beam.ParDo(bs, &tuneStageFn{}, base))
	for i, p := range grid {
		ps := s.Scope(p.Name)
		shards := beam.ParDo(ps, &validationShardsFn{Opt: l.Eval}, beam.Impulse(ps), beam.SideInput{Input: set})
		r := beam.ParDo(ps, &validateFn{Point: i, Name: p.Name, Points: len(grid) + 1, Vocab: dim, Opt: l.Eval, Loads: l.PartLoads}, beam.Reshuffle(ps, shards),
			beam.SideInput{Input: set}, beam.SideInput{Input: models[i]}, beam.SideInput{Input: bowParts}, beam.SideInput{Input: cut})
		results = append(results, r)
		sparsities = append(sparsities, beam.ParDo(ps, &pointSparsityFn{Point: i}, final[i]))
		units = append(units, beam.ParDo(ps, &tuneStageFn{}, r), beam.ParDo(ps, &tuneTrainStageFn{Of: len(grid)}, models[i]))
	}
	choice := beam.ParDo(s, &chooseFn{Grid: grid, Share: l.Tune.Share, Target: l.Tune.TargetSparsity}, beam.Impulse(s),
		beam.SideInput{Input: set}, beam.SideInput{Input: beam.Flatten(s, results...)}, beam.SideInput{Input: beam.Flatten(s, sparsities...)})
	out := tuned{Report: choice, Models: map[string]beam.PCollection{}, States: map[string]beam.PCollection{}, Units: beam.Flatten(s, units...)}
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

// validationSet is the validation queries (at most the evaluation's cap,
// a sample stratified by label as the evaluation's: Quotas, then each
// label's of smallest evaluate.QueryKey) and the training images they
// search: Images of them, Counts[i] of label Names[i].
type validationSet struct {
	Images     int64
	Postings   int64
	Validation int64
	Names      []string
	Counts     []int64
	Keys       []uint64
	// Queries carry no bags of words (Vec), which a shard reads from the
	// parts that hold them, Parts[i] for Queries[i]
	// (evaluatebeam.Queries says why).
	Queries []evaluate.Query
	Parts   []int
	// Quotas apportion the cap among the labels: every partial set
	// carries them, so that merging two trims their union to the sample
	// of all the candidates (evaluate.Quotas.Pick).
	Quotas evaluate.Quotas
}

func (v validationSet) relevant() map[string]int {
	m := make(map[string]int, len(v.Names))
	for i, n := range v.Names {
		m[n] = int(v.Counts[i])
	}
	return m
}

// trim keeps the queries its quotas pick, in id order.
func (v validationSet) trim() validationSet {
	idx := v.Quotas.Pick(len(v.Queries), func(i int) (uint64, string, string) {
		return v.Keys[i], v.Queries[i].ID, v.Queries[i].Label
	})
	sort.Slice(idx, func(a, b int) bool { return v.Queries[idx[a]].ID < v.Queries[idx[b]].ID })
	out := v
	out.Keys, out.Queries, out.Parts = make([]uint64, len(idx)), make([]evaluate.Query, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		out.Keys[k], out.Queries[k], out.Parts[k] = v.Keys[i], v.Queries[i], v.Parts[i]
	}
	return out
}

// validationSetFn reads one part's share of the validation set: its
// training images (not held out by Cut) by label, and its validation
// images (held out by the outer split, not by Cut) as queries, trimmed to
// the sample of Cap (validationQuotas).
type validationSetFn struct {
	Seed uint64
	Cap  int
}

func (f *validationSetFn) ProcessElement(ctx context.Context, p formats.Part, labels evaluatebeam.Labels, cut, outer split.Cut) (validationSet, error) {
	var v validationSet
	var err error
	if v.Quotas, err = validationQuotas(f.Seed, f.Cap, labels.Relevant(), cut, outer); err != nil {
		return validationSet{}, err
	}
	counts := map[string]int64{}
	err = fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		if cut.IsQuery(b.ImageID, b.Label) {
			return nil
		}
		v.Images++
		v.Postings += int64(len(b.WordIDs))
		if b.Label == "" {
			return nil
		}
		counts[b.Label]++
		if outer.IsQuery(b.ImageID, b.Label) {
			v.Validation++
			v.Keys = append(v.Keys, evaluate.QueryKey(f.Seed, b.ImageID))
			v.Queries = append(v.Queries, evaluate.Query{ID: b.ImageID, Label: b.Label})
			v.Parts = append(v.Parts, p.Part)
		}
		return nil
	})
	if err != nil {
		return validationSet{}, fmt.Errorf("tune: %w", err)
	}
	for _, n := range slices.Sorted(maps.Keys(counts)) {
		v.Names, v.Counts = append(v.Names, n), append(v.Counts, counts[n])
	}
	return v.trim(), nil
}

// validationQuotas apportions the cap among the validation images of each
// label (evaluate.Apportion): those the outer split holds out less the
// queries cut holds out, which it holds out too (split.Nested), both
// derived from the label counts of the images the splits were made from
// (split.Cut.Held).
func validationQuotas(seed uint64, cap int, counts map[string]int, cut, outer split.Cut) (evaluate.Quotas, error) {
	inner, err := cut.Held(counts)
	if err != nil {
		return evaluate.Quotas{}, fmt.Errorf("tune: %w", err)
	}
	held, err := outer.Held(counts)
	if err != nil {
		return evaluate.Quotas{}, fmt.Errorf("tune: %w", err)
	}
	for l, n := range held {
		held[l] = n - inner[l]
	}
	return evaluate.Apportion(seed, cap, held), nil
}

type validationMergeFn struct{}

func (f *validationMergeFn) CreateAccumulator() validationSet { return validationSet{} }
func (f *validationMergeFn) AddInput(a, b validationSet) validationSet {
	return f.MergeAccumulators(a, b)
}
func (f *validationMergeFn) MergeAccumulators(a, b validationSet) validationSet {
	m := a.relevant()
	for i, n := range b.Names {
		m[n] += int(b.Counts[i])
	}
	out := validationSet{Images: a.Images + b.Images, Postings: a.Postings + b.Postings, Validation: a.Validation + b.Validation,
		Keys: append(a.Keys, b.Keys...), Queries: append(a.Queries, b.Queries...), Parts: append(a.Parts, b.Parts...),
		Quotas: a.Quotas.Or(b.Quotas)}
	for _, n := range slices.Sorted(maps.Keys(m)) {
		out.Names, out.Counts = append(out.Names, n), append(out.Counts, int64(m[n]))
	}
	return out.trim()
}
func (f *validationMergeFn) ExtractOutput(a validationSet) validationSet { return a }

// validationShards returns the number of shards of the validation
// queries, sized as the evaluation's over the training images.
func validationShards(opt evaluate.Options, v validationSet) int {
	return formats.Parts(int64(len(v.Queries)), opt.ShardQueriesFor(v.Images, v.Postings))
}

type validationShardsFn struct{ Opt evaluate.Options }

func (f *validationShardsFn) ProcessElement(_ []byte, v validationSet, emit func(int)) error {
	if len(v.Queries) == 0 {
		return fmt.Errorf("tune: no validation queries among %d training images: too few images a label to carve a validation set from", v.Images)
	}
	for i := range validationShards(f.Opt, v) {
		emit(i)
	}
	return nil
}

// validated is one shard of a grid point's validation: the sum of its
// queries' average precisions, and the sparsity of the model validated.
type validated struct {
	Point                  int
	Name                   string
	Points, Shards         int
	SumAP                  float64
	Queries                int64
	Sparsity               float64
	StartMillis, EndMillis int64
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

// ProcessElement takes the validation set as an iterator, read once the
// shard holds its slot, as the evaluation's shards take their queries: a
// waiting shard holds none of it.
func (f *validateFn) ProcessElement(ctx context.Context, shard int, set func(*validationSet) bool, model func(*learners.Model) bool, parts func(*formats.Part) bool, cut split.Cut) (validated, error) {
	release, err := evaluatebeam.AcquireShard(ctx, f.Loads)
	if err != nil {
		return validated{}, err
	}
	defer release()
	start := time.Now()
	var v validationSet
	if !set(&v) {
		return validated{}, fmt.Errorf("tune %s: no validation set", f.Name)
	}
	var m learners.Model
	if !model(&m) {
		return validated{}, fmt.Errorf("tune %s: no model", f.Name)
	}
	w, err := m.Diagonal()
	if err != nil {
		return validated{}, fmt.Errorf("tune %s: %w", f.Name, err)
	}
	n := validationShards(f.Opt, v)
	all := evaluatebeam.SortedParts(parts)
	mine, err := evaluatebeam.ReadShard(ctx, v.Queries, v.Parts, shard, n, all)
	if err != nil {
		return validated{}, fmt.Errorf("tune %s: shard %d: %w", f.Name, shard, err)
	}
	r := evaluate.NewRanking(mine, f.Opt.DepthFor(v.Images), v.Images, v.relevant())
	training := func(b *formats.BoW) bool { return !cut.IsQuery(b.ImageID, b.Label) }
	if err := evaluatebeam.RankParts(ctx, r, all, f.Opt, w, f.Vocab, training); err != nil {
		return validated{}, fmt.Errorf("tune %s: %w", f.Name, err)
	}
	scores, err := r.Scores()
	if err != nil {
		return validated{}, fmt.Errorf("tune %s: shard %d: %w", f.Name, shard, err)
	}
	out := validated{Point: f.Point, Name: f.Name, Points: f.Points, Shards: n, Queries: int64(len(scores)),
		StartMillis: start.UnixMilli(), EndMillis: time.Now().UnixMilli()}
	for _, q := range scores {
		out.SumAP += q.AP
	}
	if w != nil {
		out.Sparsity = learners.Sparsity(w)
	}
	return out, nil
}

type pointSparsity struct {
	Point    int
	Sparsity float64
}

type pointSparsityFn struct{ Point int }

func (f *pointSparsityFn) ProcessElement(m learners.Model) (pointSparsity, error) {
	w, err := m.Diagonal()
	if err != nil {
		return pointSparsity{}, fmt.Errorf("tune: %w", err)
	}
	return pointSparsity{Point: f.Point, Sparsity: learners.Sparsity(w)}, nil
}

// chooseFn sums the grid's validation and chooses each learner's point
// (choose).
type chooseFn struct {
	Grid          []gridPoint
	Share, Target float64
}

func (f *chooseFn) ProcessElement(_ []byte, v validationSet, results func(*validated) bool, sparsities func(*pointSparsity) bool) (report.Tuning, error) {
	points := make([]report.TunePoint, len(f.Grid))
	// The last slot is the baseline's (tune).
	queries := make([]int64, len(f.Grid)+1)
	sums := make([]float64, len(f.Grid)+1)
	for i, g := range f.Grid {
		points[i] = report.TunePoint{Method: g.Name, Params: g.Opt.Params}
	}
	var r validated
	for results(&r) {
		queries[r.Point] += r.Queries
		sums[r.Point] += r.SumAP
		if r.Point < len(points) {
			points[r.Point].TuneSparsity = r.Sparsity
		}
	}
	var sp pointSparsity
	for sparsities(&sp) {
		points[sp.Point].Sparsity = sp.Sparsity
	}
	for i := range queries {
		if queries[i] != int64(len(v.Queries)) {
			name := string(learners.BaselineTFIDF)
			if i < len(f.Grid) {
				name = f.Grid[i].Name
			}
			return report.Tuning{}, fmt.Errorf("tune %s: %d validation queries scored, want %d", name, queries[i], len(v.Queries))
		}
		if i < len(points) {
			points[i].ValidationMAP = sums[i] / float64(queries[i])
		}
	}
	t := report.Tuning{Share: f.Share, ValidationImages: v.Validation, Queries: int64(len(v.Queries)), TrainImages: v.Images, TargetSparsity: f.Target,
		Baseline: string(learners.BaselineTFIDF), BaselineMAP: sums[len(f.Grid)] / float64(len(v.Queries))}
	for i := 0; i < len(f.Grid); {
		j := i
		for j < len(f.Grid) && f.Grid[j].Learner == f.Grid[i].Learner {
			j++
		}
		tl := report.TunedLearner{Learner: f.Grid[i].Learner, Axes: f.Grid[i].Axes, Points: points[i:j]}
		tl.Chosen, tl.TargetMet, tl.Why = choose(tl.Points, f.Target, slices.Contains(tl.Axes, "lambda"))
		tl.Params = tl.ChosenPoint().Params
		t.Learners = append(t.Learners, tl)
		i = j
	}
	return t, nil
}

// choose returns the index of the point of best validation mAP (the first
// of equals), among those with at least target sparsity if target > 0
// and the grid has an L1 strength (l1), and whether the point chosen
// meets the target, and why it was chosen. If no point reaches the target
// it returns the sparsest (the best validation mAP of equals) and false.
func choose(points []report.TunePoint, target float64, l1 bool) (chosen int, met bool, why string) {
	best := func(ok func(report.TunePoint) bool, better func(a, b report.TunePoint) bool) int {
		at := -1
		for i, p := range points {
			if ok(p) && (at < 0 || better(p, points[at])) {
				at = i
			}
		}
		return at
	}
	byMAP := func(a, b report.TunePoint) bool { return a.ValidationMAP > b.ValidationMAP }
	all := func(report.TunePoint) bool { return true }
	switch {
	case target <= 0:
		return best(all, byMAP), true, fmt.Sprintf("the best validation mAP of %d points", len(points))
	case !l1:
		i := best(all, byMAP)
		return i, points[i].Sparsity >= target, fmt.Sprintf("no L1 strength, so no sparsity target: the best validation mAP of %d points", len(points))
	}
	reach := func(p report.TunePoint) bool { return p.Sparsity >= target }
	n := 0
	for _, p := range points {
		if reach(p) {
			n++
		}
	}
	if n > 0 {
		return best(reach, byMAP), true, fmt.Sprintf("the best validation mAP of the %d of %d points with at least %s zero weights", n, len(points), pct(target))
	}
	i := best(all, func(a, b report.TunePoint) bool {
		return a.Sparsity > b.Sparsity || a.Sparsity == b.Sparsity && a.ValidationMAP > b.ValidationMAP
	})
	return i, false, fmt.Sprintf("TARGET NOT MET: no point of the grid reached %s zero weights; the sparsest (%s) was chosen", pct(target), pct(points[i].Sparsity))
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'f', 1, 64) + "%" }

// pickModelFn passes on the model of the grid point Method if it is the
// point chosen for Learner, and nothing otherwise.
type pickModelFn struct{ Learner, Method string }

func (f *pickModelFn) ProcessElement(m learners.Model, t report.Tuning, emit func(learners.Model)) {
	if chosen(t, f.Learner) == f.Method {
		emit(m)
	}
}

// pickStateFn is pickModelFn for the point's final state.
type pickStateFn struct{ Learner, Method string }

func (f *pickStateFn) ProcessElement(st train.RoundState, t report.Tuning, emit func(train.RoundState)) {
	if chosen(t, f.Learner) == f.Method {
		emit(st)
	}
}

// chosen returns the method of the point chosen for learner.
func chosen(t report.Tuning, learner string) string {
	for _, l := range t.Learners {
		if l.Learner == learner {
			return l.ChosenPoint().Method
		}
	}
	return ""
}

// tuneStageFn records a validation shard as a unit of the stage "tune".
type tuneStageFn struct{}

func (tuneStageFn) ProcessElement(ctx context.Context, r validated) report.Stage {
	u := report.Unit("tune", r.Queries, r.Queries, r.StartMillis, r.EndMillis)
	logProgress(ctx, u.Progress("validation shards", r.Name, int64(r.Shards), r.Points))
	return u
}

// tuneTrainStageFn records a grid point's model trained on the tuning
// triplets as a unit of the stage "tune.train".
type tuneTrainStageFn struct{ Of int }

func (f *tuneTrainStageFn) ProcessElement(ctx context.Context, m learners.Model) report.Stage {
	end := time.Now()
	u := report.Unit("tune.train", m.Triplets, 1, end.Add(-seconds(m.Seconds)).UnixMilli(), end.UnixMilli())
	logProgress(ctx, u.Progress("models", "", int64(f.Of), 0))
	return u
}
