// Package tune chooses the hyper-parameters of the learners of bags of
// words as the SOLIS paper chooses its parameters: on a validation set
// carved from the training images, never from the held-out ones.
//
// Share of each label's training images are validation images (the split
// of split.Nested(QueryFraction, Share) less the held-out queries, so
// that no held-out image is one). Every point of a learner's grid
// (Options.Grid) trains on the triplets of the other training images
// and is scored by the mAP of the validation images searching the
// training images — validation images included, held-out images not even
// as results. The point of best validation mAP is chosen (Choose) and the
// learner reports the model of that point trained on every training
// triplet, as without tuning; every point is trained that way too, in the
// same pass over the groups as the other learners, so the choice needs no
// second training stage: it picks one of the models already trained
// (package tunebeam).
//
// With TargetSparsity the λ axis of each learner with an L1 strength
// spans SparsityGrid, and only points whose model trained on every
// training triplet — the one reported — has at least that share of zero
// weights are candidates; if none has, the report says so and the
// sparsest point is chosen.
//
// Cost: each grid point trains twice (tuning triplets, every triplet),
// which is cheap beside the evaluation, and is evaluated once on the
// validation queries over the training images: Grid's 68 points over
// the default learners evaluate about 68 × Share × (1 − QueryFraction)
// collections' worth of queries against the evaluation's one per learner.
package tune

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

// Options configures validation tuning of the learners of bags of words.
type Options struct {
	// Tune chooses from Grid.
	Tune bool
	// Share is the share of each label's training images held out for
	// validation (--tune_fraction).
	Share float64
	// TargetSparsity is the least share of zero weights of the chosen
	// models of the learners with an L1 strength (0: none).
	TargetSparsity float64
}

// Active reports whether any learner is tuned.
func (o Options) Active() bool { return o.Tune || o.TargetSparsity > 0 }

// Validate reports, when o is Active, a validation share outside (0, 1)
// or a sparsity target outside [0, 1) (a *setting.Error).
func (o Options) Validate() error {
	switch {
	case !o.Active():
		return nil
	case !(o.Share > 0 && o.Share < 1):
		return setting.Errorf("tune", "Share", o.Share, "in (0, 1)")
	case !(o.TargetSparsity >= 0 && o.TargetSparsity < 1):
		return setting.Errorf("tune", "TargetSparsity", o.TargetSparsity, "in [0, 1)")
	}
	return nil
}

// DefaultShare is --tune_fraction's default.
const DefaultShare = 0.2

// Grid multiplies each tuned hyper-parameter of a learner — its
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
var Grid = map[string][]float64{
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

// Point is one point of a learner's grid: a learner instance of its
// own (Name, named like a sweep's) and its hyper-parameters.
type Point struct {
	Learner, Name string
	Axes          []string
	Opt           train.ShardOptions
}

// Points returns the points of the grid of every learner of bases (the
// options each trains with untuned), learner by learner in bases' order,
// each learner's axes in name order and values ascending: every
// hyper-parameter but those given (the command line's), and under a
// target without Tune only λ. None if o is not Active.
func (o Options) Points(bases []train.ShardOptions, given func(learner, param string) bool) []Point {
	if !o.Active() {
		return nil
	}
	var out []Point
	for _, base := range bases {
		name := base.Learner
		axes := map[string][]float64{}
		for p, v := range base.Params {
			if given(name, p) {
				continue
			}
			factors := Grid[p]
			if p == "lambda" && o.TargetSparsity > 0 {
				factors = SparsityGrid
			} else if !o.Tune {
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
			opt := base
			opt.Params = p
			n := name
			for _, a := range names {
				n += "-" + a + "-" + strconv.FormatFloat(p[a], 'g', 4, 64)
			}
			out = append(out, Point{Learner: name, Name: n, Axes: names, Opt: opt})
		}
	}
	return out
}

// ValidationSet is the validation queries (at most the evaluation's cap,
// a sample stratified by label as the evaluation's: Quotas, then each
// label's of smallest evaluate.QueryKey) and the training images they
// search: Images of them, Counts[i] of label Names[i].
type ValidationSet struct {
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

// Relevant returns the number of training images of each label.
func (v ValidationSet) Relevant() map[string]int {
	m := make(map[string]int, len(v.Names))
	for i, n := range v.Names {
		m[n] = int(v.Counts[i])
	}
	return m
}

// trim keeps the queries its quotas pick, in id order.
func (v ValidationSet) trim() ValidationSet {
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

// Part collects one part's share of the validation set: each of its bags
// that cut does not hold out is a training image, and a validation query
// if outer holds it out; the queries are trimmed to the sample of cap
// (Quotas) among the labels of counts (the images the splits were made
// from). each calls its function on every bag of the part, part.Part.
func Part(seed uint64, cap int, counts map[string]int, cut, outer split.Cut, part int, each func(func(*formats.BoW) error) error) (ValidationSet, error) {
	var v ValidationSet
	var err error
	if v.Quotas, err = quotas(seed, cap, counts, cut, outer); err != nil {
		return ValidationSet{}, err
	}
	labels := map[string]int64{}
	err = each(func(b *formats.BoW) error {
		if cut.IsQuery(b.ImageID, b.Label) {
			return nil
		}
		v.Images++
		v.Postings += int64(len(b.WordIDs))
		if b.Label == "" {
			return nil
		}
		labels[b.Label]++
		if outer.IsQuery(b.ImageID, b.Label) {
			v.Validation++
			v.Keys = append(v.Keys, evaluate.QueryKey(seed, b.ImageID))
			v.Queries = append(v.Queries, evaluate.Query{ID: b.ImageID, Label: b.Label})
			v.Parts = append(v.Parts, part)
		}
		return nil
	})
	if err != nil {
		return ValidationSet{}, fmt.Errorf("tune: %w", err)
	}
	for _, n := range slices.Sorted(maps.Keys(labels)) {
		v.Names, v.Counts = append(v.Names, n), append(v.Counts, labels[n])
	}
	return v.trim(), nil
}

// quotas apportions the cap among the validation images of each label
// (evaluate.Apportion): those the outer split holds out less the queries
// cut holds out, which it holds out too (split.Nested), both derived from
// the label counts of the images the splits were made from
// (split.Cut.Held).
func quotas(seed uint64, cap int, counts map[string]int, cut, outer split.Cut) (evaluate.Quotas, error) {
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

// Merge returns the union of two partial validation sets, trimmed to the
// sample their quotas pick.
func Merge(a, b ValidationSet) ValidationSet {
	m := a.Relevant()
	for i, n := range b.Names {
		m[n] += int(b.Counts[i])
	}
	out := ValidationSet{Images: a.Images + b.Images, Postings: a.Postings + b.Postings, Validation: a.Validation + b.Validation,
		Keys: append(a.Keys, b.Keys...), Queries: append(a.Queries, b.Queries...), Parts: append(a.Parts, b.Parts...),
		Quotas: a.Quotas.Or(b.Quotas)}
	for _, n := range slices.Sorted(maps.Keys(m)) {
		out.Names, out.Counts = append(out.Names, n), append(out.Counts, int64(m[n]))
	}
	return out.trim()
}

// Shards returns the number of shards of the validation queries, sized
// as the evaluation's over the training images.
func Shards(opt evaluate.Options, v ValidationSet) int {
	return formats.Parts(int64(len(v.Queries)), opt.ShardQueriesFor(v.Images, v.Postings))
}

// Validated is one shard of a grid point's validation: the sum of its
// queries' average precisions, and the sparsity of the model validated.
type Validated struct {
	Point                  int
	Name                   string
	Points, Shards         int
	SumAP                  float64
	Queries                int64
	Sparsity               float64
	StartMillis, EndMillis int64
}

// PointSparsity is the sparsity of the model of grid point Point trained
// on every training triplet.
type PointSparsity struct {
	Point    int
	Sparsity float64
}

// Report sums the validation of the grid (results, the baseline's as
// point len(grid)) and chooses each learner's point (Choose): the
// report's section of tuning with share and target.
func Report(grid []Point, share, target float64, v ValidationSet, results []Validated, sparsities []PointSparsity) (report.Tuning, error) {
	points := make([]report.TunePoint, len(grid))
	// The last slot is the baseline's.
	queries := make([]int64, len(grid)+1)
	sums := make([]float64, len(grid)+1)
	for i, g := range grid {
		points[i] = report.TunePoint{Method: g.Name, Params: g.Opt.Params}
	}
	for _, r := range results {
		queries[r.Point] += r.Queries
		sums[r.Point] += r.SumAP
		if r.Point < len(points) {
			points[r.Point].TuneSparsity = r.Sparsity
		}
	}
	for _, sp := range sparsities {
		points[sp.Point].Sparsity = sp.Sparsity
	}
	for i := range queries {
		if queries[i] != int64(len(v.Queries)) {
			name := string(learners.BaselineTFIDF)
			if i < len(grid) {
				name = grid[i].Name
			}
			return report.Tuning{}, fmt.Errorf("tune %s: %d validation queries scored, want %d", name, queries[i], len(v.Queries))
		}
		if i < len(points) {
			points[i].ValidationMAP = sums[i] / float64(queries[i])
		}
	}
	t := report.Tuning{Share: share, ValidationImages: v.Validation, Queries: int64(len(v.Queries)), TrainImages: v.Images, TargetSparsity: target,
		Baseline: string(learners.BaselineTFIDF), BaselineMAP: sums[len(grid)] / float64(len(v.Queries))}
	for i := 0; i < len(grid); {
		j := i
		for j < len(grid) && grid[j].Learner == grid[i].Learner {
			j++
		}
		tl := report.TunedLearner{Learner: grid[i].Learner, Axes: grid[i].Axes, Points: points[i:j]}
		tl.Chosen, tl.TargetMet, tl.Why = Choose(tl.Points, target, slices.Contains(tl.Axes, "lambda"))
		tl.Params = tl.ChosenPoint().Params
		t.Learners = append(t.Learners, tl)
		i = j
	}
	return t, nil
}

// Choose returns the index of the point of best validation mAP (the first
// of equals), among those with at least target sparsity if target > 0
// and the grid has an L1 strength (l1), and whether the point chosen
// meets the target, and why it was chosen. If no point reaches the target
// it returns the sparsest (the best validation mAP of equals) and false.
func Choose(points []report.TunePoint, target float64, l1 bool) (chosen int, met bool, why string) {
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

// Chosen returns the method of the point chosen for learner in t ("" if
// t did not tune it).
func Chosen(t report.Tuning, learner string) string {
	for _, l := range t.Learners {
		if l.Learner == learner {
			return l.ChosenPoint().Method
		}
	}
	return ""
}
