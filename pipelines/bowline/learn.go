package bowline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats/parquetio"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/evaluate/evaluatebeam"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/index/indexbeam"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/train/trainbeam"
	"github.com/bowline/bowline/transforms/triplets"
	"github.com/bowline/bowline/transforms/tune"
	"github.com/bowline/bowline/transforms/tune/tunebeam"
)

// Learning configures the similarity learners and how they are evaluated.
type Learning struct {
	// Learners names the learners to train: learners of bags of words
	// (learners.Names), each compared with the TF-IDF baseline, and
	// learners of dense global features (learners.DenseNames), which need
	// the global features (describe.Options.Global) and are compared with
	// the Euclidean baseline.
	Learners []string
	// Params overrides hyper-parameters by learner and name, e.g.
	// Params["solis-ada"]["lambda"]; the rest keep train.DefaultParams
	// (train.Params).
	Params map[string]map[string]float64
	// Shards and Rounds configure sharded training of the online learners
	// with parameter averaging; 1 and 1 is the sequential learner.
	Shards, Rounds int
	// BatchImages caps the training sample of the batch learners of global
	// features (train.BatchOptions.MaxImages).
	BatchImages int
	// GroupImages is the number of images of a training group
	// (train.Group): a worker training an online learner of bags of words
	// holds one group's bags. The groups are the shards of sharded
	// training; there are at least Shards of them.
	GroupImages int
	// GroupPostings bounds a training group's bags by their postings as
	// well (0: no bound): a group ends at whichever of GroupImages and
	// GroupPostings it reaches first (train.Groups), so that a group of
	// real photos, ~1,700 words each, holds no more than one of synthetic
	// images of 100.
	GroupPostings int
	// GroupLoads is the most training groups a worker process holds
	// loaded at once (trainbeam.Group.Loads; 0: no limit), so that a
	// process that runs many groups side by side — Prism runs them all —
	// holds GroupLoads groups' bags and triplets at most.
	GroupLoads int
	// PartLoads is the most bag-of-words parts a worker process indexes,
	// and the most query shards it evaluates (or validates, in tuning), at
	// once (0: no limit): each holds a part's postings or a chunk of bags
	// and its index (evaluate.Options.ChunkFull).
	PartLoads int
	Eval      evaluate.Options
	// Sweep trains a learner of bags of words once more for each value of
	// one of its hyper-parameters, as learners of their own (Sweep.Name).
	Sweep Sweep
	// Tune chooses the learners' hyper-parameters on a validation set
	// carved from the training images (package tune).
	Tune tune.Options
}

// Sweep is a set of values of one hyper-parameter of one learner of bags
// of words, each trained, indexed and evaluated in the same job — the SOLIS
// paper's trade-off of mAP against sparsity over λ. The zero Sweep is none.
type Sweep struct {
	Learner, Param string
	Values         []float64
}

// Name names the learner trained with the given value, in the report and
// the output's file names: "solis-ada-lambda-1e-06".
func (w Sweep) Name(v float64) string {
	return w.Learner + "-" + w.Param + "-" + strconv.FormatFloat(v, 'g', -1, 64)
}

// Report returns what the report says of the sweep: nil for none.
func (w Sweep) Report() *report.Sweep {
	if len(w.Values) == 0 {
		return nil
	}
	return &report.Sweep{Learner: w.Learner, Param: w.Param, Values: w.Values, Methods: w.Names()}
}

// Names returns the names of every value's learner, in the order given.
func (w Sweep) Names() []string {
	var out []string
	for _, v := range w.Values {
		out = append(out, w.Name(v))
	}
	return out
}

// bowRun is one learner of bags of words to train: its name in the
// report and its options.
type bowRun struct {
	Name string
	Opt  train.ShardOptions
}

// bowRuns returns the learners of bags of words to train over a
// vocabulary of dim words: those named, then the sweep's.
func (l Learning) bowRuns(dim int) []bowRun {
	var out []bowRun
	for _, name := range l.Learners {
		if !learners.IsDense(name) {
			out = append(out, bowRun{name, l.options(name, dim)})
		}
	}
	for _, v := range l.Sweep.Values {
		o := l.options(l.Sweep.Learner, dim)
		o.Params[l.Sweep.Param] = v
		out = append(out, bowRun{l.Sweep.Name(v), o})
	}
	return out
}

// DefaultLearning trains the four SOLIS learners and diagonal OASIS, the
// SOLIS paper's comparison, sequentially.
func DefaultLearning() Learning {
	return Learning{
		Learners: []string{"solis-ada", "solis-afb", "solis-da", "solis-tg", "oasis-diag"},
		Shards:   1, Rounds: 1,
		BatchImages: 20_000,
		GroupImages: 200_000,
		// 64M postings are about 0.5 GB of bags: 200,000 synthetic images
		// (20M) fit, real photos end a group near 38,000. Smaller groups
		// cost quality, not only memory: each is trained on its own and
		// the models averaged, and at 32M 30K photos made two groups,
		// SOLIS-ADA's P@10 0.212 → 0.202 for 0.2 GB less.
		GroupPostings: 64 << 20,
		GroupLoads:    1,
		PartLoads:     2,
		Eval:          evaluate.Options{MaxQueries: 10_000, QueryFraction: 0.2, TrainQueries: 1000, Seed: 1, Cosine: true},
		Tune:          tune.Options{Share: tune.DefaultShare},
	}
}

// Effective returns the hyper-parameters each learner of l trains with
// over a vocabulary of vocab words: train.DefaultParams with their scaled
// λ, overridden by l.Params (train.Params). The report shows them, since the scaled λ is
// on no command line.
func (l Learning) Effective(vocab int) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	for _, name := range l.Learners {
		if learners.IsDense(name) {
			out[name] = train.Params(name, 0, l.Params[name])
		} else {
			out[name] = train.Params(name, vocab, l.Params[name])
		}
	}
	for _, r := range l.bowRuns(vocab) {
		out[r.Name] = r.Opt.Params
	}
	return out
}

// Validate reports a learner that does not exist or rejects its
// parameters, a learner of global features in a run without them, and
// parameters given for a learner not trained.
func (l Learning) Validate(dim int, global bool) error {
	if len(l.Learners) == 0 {
		return fmt.Errorf("no learners")
	}
	if err := l.Eval.Validate(); err != nil {
		return err
	}
	switch {
	case l.GroupImages < 1:
		return setting.Errorf("bowline", "GroupImages", l.GroupImages, "1 or more")
	case l.GroupPostings < 0:
		return setting.Errorf("bowline", "GroupPostings", l.GroupPostings, "0 (no bound) or more")
	case l.GroupLoads < 0:
		return setting.Errorf("bowline", "GroupLoads", l.GroupLoads, "0 (no limit) or more")
	}
	seen := map[string]bool{}
	for _, name := range l.Learners {
		if seen[name] {
			return fmt.Errorf("learner %s named twice", name)
		}
		seen[name] = true
		if !learners.IsDense(name) && !slices.Contains(learners.Names(), name) {
			return fmt.Errorf("unknown learner %q: the learners of bags of words are %s; of global features (with --global) %s",
				name, strings.Join(learners.Names(), ", "), strings.Join(learners.DenseNames(), ", "))
		}
		var err error
		switch {
		case !learners.IsDense(name):
			err = l.options(name, dim).Validate()
		case !global:
			err = fmt.Errorf("learner %s learns from global features: run with them (--global)", name)
		case l.online(name):
			err = l.options(name, dim).Validate()
		default:
			err = l.batchOptions(name).Validate()
		}
		if err != nil {
			return err
		}
	}
	for name := range l.Params {
		if !seen[name] && name != l.Sweep.Learner {
			return fmt.Errorf("parameters given for %s, which is not among the learners (%s)", name, strings.Join(l.Learners, ","))
		}
	}
	if err := l.validateSweep(dim); err != nil {
		return err
	}
	return l.validateTuning(dim)
}

// validateTuning reports a validation share or sparsity target out of
// range, and tuning with nothing to tune.
func (l Learning) validateTuning(dim int) error {
	t := l.Tune
	if !t.Active() {
		return nil
	}
	if err := t.Validate(); err != nil {
		return err
	}
	grid := l.grid(dim)
	if len(grid) == 0 {
		if t.TargetSparsity > 0 {
			return fmt.Errorf("target sparsity: no learner of bags of words with an L1 strength (lambda) left to choose: λ given on the command line is kept")
		}
		return fmt.Errorf("tune: no learner of bags of words with a hyper-parameter left to choose")
	}
	for _, p := range grid {
		if err := p.Opt.Validate(); err != nil {
			return fmt.Errorf("tune: %s: %w", p.Name, err)
		}
	}
	return nil
}

// grid returns the points of every tuned learner of bags of words over a
// vocabulary of dim words (tune.Options.Points), in l.Learners' order;
// the hyper-parameters l.Params gives are not tuned.
func (l Learning) grid(dim int) []tune.Point {
	var bases []train.ShardOptions
	for _, name := range l.Learners {
		if !learners.IsDense(name) {
			bases = append(bases, l.options(name, dim))
		}
	}
	return l.Tune.Points(bases, func(learner, param string) bool {
		_, given := l.Params[learner][param]
		return given
	})
}

// validateSweep reports a sweep of a learner that is not one of bags of
// words, of a parameter it does not take, or over a repeated value.
func (l Learning) validateSweep(dim int) error {
	w := l.Sweep
	if len(w.Values) == 0 {
		return nil
	}
	if !slices.Contains(learners.Names(), w.Learner) {
		return fmt.Errorf("sweep: %q is not a learner of bags of words (%s)", w.Learner, strings.Join(learners.Names(), ", "))
	}
	if !l.takes(w.Learner, w.Param, dim) {
		return fmt.Errorf("sweep: %s has no parameter %q", w.Learner, w.Param)
	}
	seen := map[float64]bool{}
	for _, v := range w.Values {
		if seen[v] {
			return fmt.Errorf("sweep: %s=%g given twice", w.Param, v)
		}
		seen[v] = true
	}
	for _, r := range l.bowRuns(dim) {
		if err := r.Opt.Validate(); err != nil {
			return fmt.Errorf("sweep: %s: %w", r.Name, err)
		}
	}
	return nil
}

// takes reports whether learner has the hyper-parameter param: one of
// train.DefaultParams or l.Params, or one its own defaults set (e.g. "nonneg",
// DA's "rho"), which its Params names.
func (l Learning) takes(learner, param string, dim int) bool {
	o := l.options(learner, dim)
	if _, ok := o.Params[param]; ok {
		return true
	}
	m, err := learners.New(learner, dim, o.Params)
	if err != nil {
		return true // the sweep's runs fail validation with err itself
	}
	_, ok := m.Params()[param]
	return ok
}

func (l Learning) options(name string, dim int) train.ShardOptions {
	o := train.ShardOptions{Learner: name, Params: train.Params(name, dim, l.Params[name]), Dim: dim, Shards: l.Shards, Rounds: l.Rounds}
	if learners.IsDense(name) {
		o.Dim, o.Dims = 0, global.Dims
	}
	return o
}

func (l Learning) batchOptions(name string) train.BatchOptions {
	return train.BatchOptions{Learner: name, Params: train.Params(name, 0, l.Params[name]), Dims: global.Dims, MaxImages: l.BatchImages, Seed: l.Eval.Seed}
}

// online reports whether the dense learner name learns from triplets.
func (l Learning) online(name string) bool {
	m, err := learners.NewDense(name, global.Dims, train.Params(name, 0, l.Params[name]))
	if err != nil {
		return false
	}
	_, ok := m.(learners.DenseOnline)
	return ok
}

// dense reports whether any learner of l needs the global features.
func (l Learning) dense() bool {
	for _, name := range l.Learners {
		if learners.IsDense(name) {
			return true
		}
	}
	return false
}

// Learn trains every learner of l on triplets drawn from the bags of words
// written part by part (bowParts, PCollection<formats.Part>), writes each
// model (and, for bag-of-words learners, its index, part by part) and the
// triplets under out, and evaluates each by retrieval: bag-of-words
// learners and the TF-IDF baseline over the bag-of-words parts, shard by
// shard of queries (evaluatebeam.EvaluateParts); learners of global
// features and the Euclidean baseline over the global features of the
// features parts (featParts, used only if l has such learners).
//
// Before anything trains, l.Eval.QueryFraction of each label's images are
// held out (evaluatebeam.Split): no triplet and no batch learner's sample
// holds them, and they are the queries of the report's held-out rows,
// beside a sample of training images as queries of its training rows.
// Each learner is compared with its baseline query by query
// (evaluatebeam.Compare), and every query's scores under every method
// are written to the run's per-query table (rundir.QueryScoresTable), as
// the evaluation's shards make them, for a later run to compare itself
// with this one query by query (--compare_to).
//
// It returns the report rows, the collections of written paths (to wait
// on), the triplets parts, the units of work of its stages (triplets,
// train, index, evaluate: PCollection<report.Stage>), the split
// (PCollection<split.Cut>) and what tuning chose (single-element
// PCollection<report.Tuning>, empty without l.Tune: see package tune).
//
// Every learner of bags of words also writes its final state
// (state-<name>-*.parquet, trainbeam.StateName), from which the next,
// incremental, run can continue training (LearnFrom).
func Learn(s beam.Scope, bowParts, featParts beam.PCollection, dim int, l Learning, trip triplets.Options, out string) (rows beam.PCollection, written []beam.PCollection, tripParts, stages, cut, tuning beam.PCollection) {
	return LearnFrom(s, bowParts, featParts, dim, l, trip, out, beam.PCollection{})
}

// LearnFrom is Learn with warm starts: warm, if valid, is a
// PCollection<trainbeam.Warm> of states of the learners of bags of words
// (indexed as l.bowRuns(dim)), from which they continue training on the
// triplets of the images the bag-of-words parts do not list as carried
// and a replayed share of the others' (trainbeam.TrainGroupsFrom,
// trainbeam.WarmReplay). A tuned learner reports its chosen grid point's
// model, trained afresh: its warm start, if any, is not used.
func LearnFrom(s beam.Scope, bowParts, featParts beam.PCollection, dim int, l Learning, trip triplets.Options, out string, warm beam.PCollection) (rows beam.PCollection, written []beam.PCollection, tripParts, stages, cut, tuning beam.PCollection) {
	s = s.Scope("Learn")
	queries, labels, cut := evaluatebeam.QuerySet(s, bowParts, l.Eval)
	checked := beam.ParDo(s, learnableFn, beam.Impulse(s), beam.SideInput{Input: labels})
	groups := trainbeam.Groups(s, bowParts, cut, checked, l.GroupImages, l.GroupPostings, l.Shards, l.GroupLoads)
	// Each group is loaded once a round for every learner of bags of words,
	// and writes its triplets in the first.
	// The grid points of tuning train on every training triplet beside
	// the learners, after them (warm starts are indexed by runs).
	runs, grid := l.bowRuns(dim), l.grid(dim)
	opts := make([]train.ShardOptions, 0, len(runs)+len(grid))
	for _, r := range runs {
		opts = append(opts, r.Opt)
	}
	for _, p := range grid {
		opts = append(opts, p.Opt)
	}
	models, states, tripParts := trainbeam.TrainGroupsFrom(s, groups, opts, trip, out, warm)
	written = append(written, parquetio.PartPaths(s, tripParts))
	units := []beam.PCollection{stageUnits(s, partStageFn{Name: "triplets", Noun: "groups"}, tripParts)}
	var tu tunebeam.Tuned
	if len(grid) > 0 {
		o := tunebeam.Options{Tune: l.Tune, Eval: l.Eval, GroupImages: l.GroupImages, GroupPostings: l.GroupPostings,
			Shards: l.Shards, GroupLoads: l.GroupLoads, PartLoads: l.PartLoads}
		tu = tunebeam.Tune(s, bowParts, labels, cut, checked, dim, o, trip, grid, models[len(runs):], states[len(runs):])
		units = append(units, tu.Units)
		tuning = tu.Report
	} else {
		tuning = beam.Create(s, report.Tuning{})
	}
	trained := &trainStageFn{Of: len(runs) + l.denseTrained()}

	// Each model is evaluated in its own ParDo: Prism (v2.77.0) ran a ParDo
	// whose main input was a Flatten of a Create and a computed collection
	// before its side input was complete, and evaluated the baseline over
	// no images at all.
	baseline := beam.Create(s, learners.BaselineModel(learners.BaselineTFIDF, nil))
	evalRows, evalScores, evalUnits, evalQueries := evaluatebeam.EvaluateParts(s, bowParts, queries, labels, baseline, dim, l.Eval, l.PartLoads)
	evals, scores, perQuery := []beam.PCollection{evalRows}, []beam.PCollection{evalScores}, []beam.PCollection{evalQueries}
	units = append(units, evalUnits)
	if l.dense() {
		// The learners of global features read the features parts too, as
		// the learners of bags of words read theirs: the online ones group
		// by group, each reading the parts of its own images; the batch
		// ones from a bounded sample drawn part by part; the evaluation
		// shard by shard of queries. Only the moments of the features, the
		// scaler's statistics, are combined over the corpus.
		moments := trainbeam.DenseMoments(s, featParts)
		evalDense := func(model beam.PCollection) {
			r, sc, u, q := evaluatebeam.EvaluateDenseParts(s, featParts, moments, cut, model, l.Eval, l.PartLoads)
			evals, scores, units, perQuery = append(evals, r), append(scores, sc), append(units, u), append(perQuery, q)
		}
		evalDense(beam.Create(s, learners.BaselineModel(learners.BaselineEuclidean, global.Dims)))
		for _, name := range l.Learners {
			var model beam.PCollection
			switch {
			case !learners.IsDense(name) || name == string(learners.BaselineEuclidean):
				continue
			case l.online(name):
				model = trainbeam.ShardedDenseGroups(s, tripParts, featParts, moments, l.options(name, dim))
			default:
				model = trainbeam.BatchParts(s, featParts, moments, cut, l.batchOptions(name))
			}
			written = append(written, parquetio.Write(s, out, "model-"+name, 1, trainbeam.TensorRows(s, model)))
			units = append(units, beam.ParDo(s, trained, model))
			evalDense(model)
		}
	}
	for i, r := range runs {
		s := s.Scope(r.Name)
		model, stateRows := models[i], beam.PCollection{}
		if m, ok := tu.Models[r.Name]; ok && r.Name == r.Opt.Learner {
			model, stateRows = m, tu.States[r.Name]
		} else {
			stateRows = trainbeam.StateRows(s, states[i], r.Name, r.Opt)
		}
		if r.Name != r.Opt.Learner {
			model = trainbeam.Rename(s, model, r.Name)
		}
		indexParts := indexbeam.PostingsOfParts(s, bowParts, model, out, "index-"+r.Name, l.PartLoads, l.Eval.Cosine)
		written = append(written,
			parquetio.Write(s, out, "model-"+r.Name, 1, trainbeam.ModelRows(s, model)),
			parquetio.Write(s, out, trainbeam.StateName(r.Name), 1, stateRows),
			parquetio.PartPaths(s, indexParts))
		r, sc, evalUnits, q := evaluatebeam.EvaluateParts(s, bowParts, queries, labels, model, dim, l.Eval, l.PartLoads)
		evals, scores, perQuery = append(evals, r), append(scores, sc), append(perQuery, q)
		units = append(units, beam.ParDo(s, trained, model),
			stageUnits(s, partStageFn{Name: "index", Noun: "parts", Source: runs[i].Name, Sources: len(runs)}, indexParts), evalUnits)
	}
	rows = evaluatebeam.Compare(s, beam.Flatten(s, evals...), beam.Flatten(s, scores...), l.Eval.Seed)
	written = append(written, parquetio.Write(s, out, rundir.QueryScoresTable, 0, beam.Flatten(s, perQuery...)))
	return rows, written, tripParts, beam.Flatten(s, units...), cut, tuning
}

// denseTrained is the number of learners of global features the job
// trains (LearnFrom's loop over them).
func (l Learning) denseTrained() int {
	if !l.dense() {
		return 0
	}
	n := 0
	for _, name := range l.Learners {
		if learners.IsDense(name) && name != string(learners.BaselineEuclidean) {
			n++
		}
	}
	return n
}

// learnableFn fails the job, before any learner trains, when the labels
// allow no triplet.
func learnableFn(_ []byte, labels evaluatebeam.Labels) (int, error) {
	counts := labels.Relevant()
	if err := triplets.Learnable(counts); err != nil {
		return 0, fmt.Errorf("triplets: %w", err)
	}
	return len(counts), nil
}
