// Package bowline is the main job's pipeline graph: images → SIFT →
// vocabulary → bags of words → triplets → similarity learners (SOLIS-ADA by
// default) → inverted index → evaluation report. Every stage writes its output as Parquet under one
// output directory (local or gs://), and report.json is written last, so its
// presence means the run completed.
package bowline

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/parquetio"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/bow/bowbeam"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/describe/describebeam"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/ingest/ingestbeam"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/progress/progressbeam"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/synthetic"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*reportFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*countsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*report.Counts)(nil)).Elem())
	beam.RegisterFunction(keypointsFn)
	beam.RegisterFunction(rowsFn)
	beam.RegisterFunction(learnableFn)
	beam.RegisterFunction(describedFn)
	beam.RegisterType(reflect.TypeOf((*partStageFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*report.Stage)(nil)).Elem())
	beam.RegisterFunction(vocabStageFn)
	beam.RegisterType(reflect.TypeOf((*trainStageFn)(nil)).Elem())
	// The report's CPU seconds per stage read this process's CPU clock
	// over each unit of work: it must run from the start of every worker.
	report.StartCPUClock()
}

// Config is the whole job's configuration.
type Config struct {
	// Input is a labels CSV (image_id,path,label[,tags]) or a directory of
	// images, local or gs://, or a synthetic corpus ("synthetic:N…",
	// package synthetic).
	Input   string
	Columns ingest.Columns
	// Output is the directory every file is written to, local or gs://.
	Output   string
	Describe describe.Options
	Vocab    kmeansbeam.Options
	// BoW configures quantisation, hard (the default) or soft, and the
	// term frequency of the weights.
	BoW      bowbeam.Options
	Triplets triplets.Options
	Learning Learning
	// Flags records the command line for the report.
	Flags report.Settings
	// Overwrite lets the run replace an output directory that holds other
	// files than the jobs' own (see PrepareOutput).
	Overwrite bool
	// Earlier, if set, is an earlier run the report shows the change of
	// every score since (report.LoadEarlier).
	Earlier *report.Earlier

	// Previous is a finished run (its directory, local or gs://;
	// manifest.json present) this run starts from: "" is a full run. An
	// image whose id and content (formats.Features.Content) are
	// unchanged since is not described again: its features, and its word
	// counts if the vocabulary is kept, are carried over into this run's
	// own parts (a run is self-contained). The vocabulary is kept unless
	// RebuildVocab, other vocabulary settings, or the drift check; the
	// learners of bags of words then continue from Previous's states on
	// the triplets of the new and changed images. A rebuilt vocabulary
	// makes the rest a full run. incremental.json (Lineage) records what
	// was reused and why.
	//
	// The held-out split is a function of the ids and labels (package
	// split), so most of Previous's held-out images stay held out; but a
	// label's quota grows with its images, and an image Previous trained
	// on may become a held-out query of this run, which a warm-started
	// learner has seen. A diagonal similarity memorises little (the
	// report's training-query rows show the gap); a full run has none.
	Previous string
	// RebuildVocab builds a new vocabulary even when Previous has one.
	RebuildVocab bool
	// MaxDrift is the largest relative rise of the mean quantisation
	// distortion, on a descriptor sample of this run, over Previous's,
	// for which Previous's vocabulary is kept (kmeans.Drift.Max: 0.1 =
	// 10%).
	MaxDrift float64
}

// DefaultConfig returns the settings the README's command runs with.
func DefaultConfig() Config {
	return Config{
		Columns:  ingest.DefaultColumns(),
		Describe: describe.DefaultOptions(),
		// Lloyd's iterations stop once one lowers the sample's objective
		// by at most 0.025%: at 10⁴ words from 5·10⁵ descriptors of real
		// photos that is after 20 iterations, and the 5 more to MaxIter
		// lower the objective of 50,000 held-out descriptors by 0.03%, a
		// twelfth of its 95% interval.
		Vocab: kmeansbeam.Options{K: 1000, MaxIter: 25, Tol: 2.5e-4, Seed: 1, PartLoads: 2},
		// Square-rooted term frequencies damp bursts (package bow): on
		// ETH-80 they raise held-out mAP, of TF-IDF and of the learners,
		// for category and object labels alike.
		BoW:      bowbeam.Options{PartLoads: 2, TF: bow.TFSqrt},
		Triplets: triplets.Options{PerQuery: 20, Seed: 1, Negatives: triplets.Random, Positives: triplets.Random, HardPool: 10, HardFraction: 1},
		Learning: DefaultLearning(),
		MaxDrift: kmeans.DefaultMaxDrift,
	}
}

// Validate reports a configuration the job cannot run with.
func (c Config) Validate() error {
	switch {
	case c.Input == "":
		return fmt.Errorf("no input: give a labels CSV or an image directory")
	case c.Output == "":
		return fmt.Errorf("no output directory")
	case c.Previous != "" && fileio.TreeOf(c.Output).Holds(c.Previous):
		return &ingest.InputInOutputError{Output: c.Output, Input: "the previous run (--previous) " + c.Previous + ": an incremental run writes a new directory"}
	}
	if synthetic.IsInput(c.Input) {
		if _, err := synthetic.Parse(c.Input); err != nil {
			return err
		}
		if c.Describe.Global {
			return fmt.Errorf("the synthetic corpus has no pixels for global features: run it without --global")
		}
	}
	for _, o := range []interface{ Validate() error }{c.Columns, c.Describe, c.Vocab, kmeans.Drift{Max: c.MaxDrift}, c.BoW} {
		if err := o.Validate(); err != nil {
			return err
		}
	}
	if err := c.Triplets.Validate(); err != nil {
		return err
	}
	return c.Learning.Validate(c.Vocab.K, c.Describe.Global)
}

// RunSettings returns the settings a reader of the run needs to reproduce
// its vectors and rankings (rundir.Settings), before tuning: WriteReport
// records the hyper-parameters tuning chose instead of the given ones.
func (c Config) RunSettings() *rundir.Settings {
	d := c.Describe.SIFT
	s := &rundir.Settings{
		SIFT:        rundir.SIFT(d),
		MaxPixels:   c.Describe.MaxPixels,
		DCTScale:    c.Describe.DCTScale,
		Vocabulary:  rundir.Vocabulary{Words: c.Vocab.K},
		Soft:        rundir.Soft{Words: c.BoW.Soft.R, Sigma: c.BoW.Soft.Sigma},
		TF:          string(c.BoW.TF),
		Cosine:      c.Learning.Eval.Cosine,
		LabelColumn: c.Columns.Label,
		Seed:        c.Vocab.Seed,
		Learners:    c.Learning.Effective(c.Vocab.K),
	}
	if c.Describe.DCTScale {
		s.DCTVersion = c.Describe.DCTVersion
	}
	if f, v := c.Vocab.Indexes(); f != nil {
		s.Vocabulary.Forest = (*rundir.Forest)(f)
		if v != nil {
			s.Vocabulary.IVF = &rundir.IVF{Lists: v.Lists, Probes: v.Probes, Seed: v.Seed}
		}
	}
	return s
}

// Build adds the job to s.
func Build(s beam.Scope, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	write := func(name string, shards int, col beam.PCollection) beam.PCollection {
		return parquetio.Write(s, c.Output, name, shards, col)
	}
	var written []beam.PCollection

	if synthetic.IsInput(c.Input) {
		c.Describe.Synthetic, _ = synthetic.Parse(c.Input) // Validate checked it
	}
	// The corpus-sized outputs — the image list, the features, the bags of
	// words — are written part by part from inside the stages that make
	// them; only formats.Part records travel between stages (see package
	// formats).
	// An incremental run reads what it reuses of the previous run from
	// its files while the job runs; here, only its manifest and lineage.
	prev, err := loadPrevious(context.Background(), c)
	if err != nil {
		return err
	}
	imageParts, deadIngest, sharedPaths := ingestbeam.ImagesFrom(s, c.Input, c.Columns, c.Describe.PartImages, prev.parts(), c.Output)
	written = append(written, parquetio.PartPaths(s, imageParts))
	featParts, deadSIFT := describebeam.ExtractFrom(s, imageParts, c.Describe, c.Output, prev.describe())
	dead := beam.Flatten(s, deadIngest, deadSIFT)
	written = append(written, write("dead-letters", 1, dead), parquetio.PartPaths(s, featParts))
	units := []beam.PCollection{stageUnits(s, partStageFn{Name: "describe", Noun: "parts"}, featParts)}
	// Every stage after description reads the parts through the check that
	// an image was described: on no features, the first of them to read
	// a single value computed from them would fail the job with the
	// runner's "got 0 values … Singleton side input". The check's main
	// input is an impulse, so that it runs even on no parts (a ParDo of
	// no elements is not run, and its side inputs not waited for), and
	// the parts it passes on are spread over workers again.
	featParts, described := beam.ParDo2(s, describedFn, beam.Impulse(s), beam.SideInput{Input: featParts}, beam.SideInput{Input: dead})
	featParts = beam.Reshuffle(s, featParts)

	// The distortion of a descriptor sample against the vocabulary is
	// recorded whenever one is built, for the drift check of the next
	// run.
	drift := kmeansbeam.DriftSample(s, featParts, kmeans.DriftDescriptors, c.Vocab.Seed, c.Vocab.PartLoads)
	c.Vocab.Scratch = fileio.Join(c.Output, rundir.ScratchName)
	// The codebook's words go to the run's codebook file, written once
	// (built or kept); the codebook elements only name it, and the
	// quantising step reads the words from it.
	c.Vocab.Output = c.Output
	codebook, built, decision, kept := vocabulary(s, c, prev, featParts, drift)
	units = append(units, beam.ParDo(s, vocabStageFn, built))
	written = append(written, kmeansbeam.Paths(s, codebook))

	var bowParts, countParts, geometryParts, wordStats beam.PCollection
	if kept.IsValid() {
		bowParts, countParts, geometryParts, wordStats = bowbeam.BoWOfPartsCarrying(s, featParts, codebook, c.BoW, c.Output, prev.counts(), kept)
	} else {
		bowParts, countParts, geometryParts, wordStats = bowbeam.BoWOfParts(s, featParts, codebook, c.BoW, c.Output)
	}
	written = append(written, parquetio.PartPaths(s, bowParts), parquetio.PartPaths(s, countParts), parquetio.PartPaths(s, geometryParts),
		write("idf", 1, wordStats))
	units = append(units, stageUnits(s, partStageFn{Name: "bow.quantise", Noun: "parts"}, countParts),
		stageUnits(s, partStageFn{Name: "bow.weight", Noun: "parts"}, bowParts))

	warm := warmStarts(s, c, prev, kept)
	rows, learned, tripParts, learnUnits, cut, tuning := LearnFrom(s, bowParts, featParts, c.Vocab.K, c.Learning, c.Triplets, c.Output, warm)
	written = append(written, writeLineage(s, c, prev, decision, kmeansbeam.Distortion(s, drift, built), imageParts, featParts, warm))
	written = append(written, learned...)
	units = append(units, learnUnits)

	counts := beam.ParDo(s, &countsFn{Vocabulary: c.Vocab.K}, beam.Impulse(s),
		beam.SideInput{Input: stats.Sum(s, beam.ParDo(s, rowsFn, imageParts))},
		beam.SideInput{Input: stats.CountElms(s, dead)},
		beam.SideInput{Input: described},
		beam.SideInput{Input: stats.Sum(s, beam.ParDo(s, keypointsFn, featParts))},
		beam.SideInput{Input: stats.Sum(s, beam.ParDo(s, rowsFn, tripParts))},
		beam.SideInput{Input: sharedPaths})
	meta := ReportMeta{Job: "bowline", Input: c.Input, Output: c.Output, Flags: c.Flags, Settings: c.RunSettings(), Earlier: c.Earlier, Seed: c.Learning.Eval.Seed,
		Sweep: c.Learning.Sweep.Report(), Overwrite: c.Overwrite}
	WriteReport(s, meta, rows, counts, cut, tuning, dead, beam.Flatten(s, units...), written)
	return nil
}

// stageUnits returns the report's record of each part (PCollection<formats.Part>)
// as a unit of work of fn's stage: PCollection<report.Stage>. The records
// are made in a ParDo fused with the one that wrote the parts, in its
// process, whose CPU clock they read (report.Unit).
func stageUnits(s beam.Scope, fn partStageFn, parts beam.PCollection) beam.PCollection {
	return beam.ParDo(s, &fn, parts)
}

// partStageFn records a part as a unit of the stage Name, and logs the
// stage's progress (progress.Default): a part is one of Part.Parts of its
// source, one of Sources (0: a single one) that the stage has.
type partStageFn struct {
	Name, Noun string
	Source     string
	Sources    int
}

func (f *partStageFn) ProcessElement(ctx context.Context, p formats.Part) report.Stage {
	u := report.Unit(f.Name, p.Inputs, p.Rows, p.StartMillis, p.EndMillis)
	progressbeam.Log(ctx, u.Progress(f.Noun, f.Source, int64(p.Parts), f.Sources))
	return u
}

// vocabStageFn and trainStageFn make the vocabulary's and a learner's unit
// of work from the training time they record: they end when the codebook
// or model reaches them, which follows its training closely. The
// vocabulary's units are its chunks, assigned together iteration by
// iteration (report.UnitsOf), or one on a single worker.
func vocabStageFn(ctx context.Context, cb kmeansbeam.Codebook) report.Stage {
	end := time.Now()
	chunks := int64(max(cb.Chunks, 1))
	u := report.UnitsOf("vocabulary", chunks, int64(cb.Sampled), int64(cb.K), end.Add(-seconds(cb.Seconds)).UnixMilli(), end.UnixMilli())
	progressbeam.Log(ctx, u.Progress("chunks", "", chunks, 0))
	return u
}

// trainStageFn's Of is the number of models the job trains.
type trainStageFn struct{ Of int }

func (f *trainStageFn) ProcessElement(ctx context.Context, m learners.Model) report.Stage {
	end := time.Now()
	u := report.Unit("train", m.Triplets, 1, end.Add(-seconds(m.Seconds)).UnixMilli(), end.UnixMilli())
	progressbeam.Log(ctx, u.Progress("models", "", int64(f.Of), 0))
	return u
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// describedFn passes on the features parts and emits the number of
// images described, their rows, or fails the job if there are none,
// saying how many dead letters there are and their most common reasons.
func describedFn(_ []byte, parts func(*formats.Part) bool, dead func(*formats.DeadLetter) bool, emit func(formats.Part), emitDescribed func(int64)) error {
	var n int64
	var p formats.Part
	for parts(&p) {
		n += p.Rows
		emit(p)
	}
	if n == 0 {
		return noImageDescribed(report.SummariseDead(dead))
	}
	emitDescribed(n)
	return nil
}

// noImageDescribed is the error of a job that described no image, given
// its dead letters: how many, and their kinds, most common first, each
// with an example.
func noImageDescribed(d report.DeadLetters) error {
	if d.Total == 0 {
		return fmt.Errorf("describe: no image could be described, and there are no dead letters to say why")
	}
	const shown = 3
	var kinds []string
	for i, k := range d.Kinds {
		if i == shown {
			kinds = append(kinds, fmt.Sprintf("and %d more kinds", len(d.Kinds)-shown))
			break
		}
		kinds = append(kinds, fmt.Sprintf("%d at %s, e.g. %s", k.Count, k.Stage, k.Example))
	}
	letters := "dead letters"
	if d.Total == 1 {
		letters = "dead letter"
	}
	return fmt.Errorf("describe: no image could be described: %d %s (%s)", d.Total, letters, strings.Join(kinds, "; "))
}

func keypointsFn(p formats.Part) int64 { return p.Keypoints }

func rowsFn(p formats.Part) int64 { return p.Rows }

type countsFn struct{ Vocabulary int }

func (f *countsFn) ProcessElement(_ []byte, images int64, dead int, described, keypoints, trips int64, sharedPaths int) report.Counts {
	return report.Counts{
		Images:         images,
		DuplicatePaths: int64(sharedPaths),
		DeadLetters:    int64(dead),
		Described:      described,
		Keypoints:      keypoints,
		Vocabulary:     int64(f.Vocabulary),
		Triplets:       trips,
	}
}

// ReportMeta is what the report says about the run besides its results,
// and how the run finishes its output directory.
type ReportMeta struct {
	// Job names the job, for the manifest.
	Job           string
	Input, Output string
	// Flags is the command line, flag by flag, for people.
	Flags report.Settings
	// Settings are what a reader needs to reproduce the run's vectors and
	// rankings, for the manifest (Config.RunSettings); their Learners are
	// the hyper-parameters each learner trained with
	// (Learning.Effective), which tuning overrides.
	Settings *rundir.Settings
	// Earlier is the run to compare with, if any: by its rows, and
	// query by query when both runs have per-query scores
	// (compareEarlier).
	Earlier *report.Earlier
	// Seed seeds the paired bootstrap of the comparison with Earlier:
	// the evaluation's seed, as for a learner's comparison with its
	// baseline.
	Seed uint64
	// Sweep names the learners of a hyper-parameter sweep, if any.
	Sweep *report.Sweep
	// Overwrite removes, when the run finishes, every file of the output
	// directory it did not write, not only the jobs' own (PrepareOutput).
	Overwrite bool
}

// WriteReport writes report.html and report.json under meta.Output from
// the report rows (PCollection<formats.ReportRow>), the counts
// (single-element PCollection<report.Counts>), the held-out split
// (single-element PCollection<split.Cut>), what tuning chose
// (single-element PCollection<report.Tuning>, LearnFrom), the dead letters
// (PCollection<formats.DeadLetter>, summarised) and the stages' units of
// work (PCollection<report.Stage>, summed by report.MergeStages), once every collection of
// written paths is complete: they are side inputs, so the report cannot be
// written before the last of them. Then it removes what the run did not
// write and writes the manifest, whose presence means the run finished.
func WriteReport(s beam.Scope, meta ReportMeta, rows, counts, cut, tuning, dead, stages beam.PCollection, written []beam.PCollection) {
	s = s.Scope("WriteReport")
	written = append(written, parquetio.Write(s, meta.Output, "report", 1, rows))
	beam.ParDo0(s, &reportFn{Meta: meta}, beam.Impulse(s),
		beam.SideInput{Input: rows}, beam.SideInput{Input: counts}, beam.SideInput{Input: cut}, beam.SideInput{Input: tuning}, beam.SideInput{Input: dead},
		beam.SideInput{Input: stages}, beam.SideInput{Input: beam.Flatten(s, written...)})
}

type reportFn struct {
	Meta ReportMeta
}

func (f *reportFn) ProcessElement(ctx context.Context, _ []byte, rows func(*formats.ReportRow) bool, counts report.Counts, cut split.Cut, tuning report.Tuning,
	dead func(*formats.DeadLetter) bool, stages func(*report.Stage) bool, paths func(*string) bool) error {
	written := []string{rundir.ReportHTMLName, rundir.ReportName}
	var p string
	for paths(&p) {
		base := p[strings.LastIndex(p, "/")+1:]
		if fileio.Join(f.Meta.Output, base) != p {
			return fmt.Errorf("report: %s was written outside the output directory %s", p, f.Meta.Output)
		}
		written = append(written, base)
	}
	tables, _ := rundir.Tables(written)
	set := *f.Meta.Settings
	r := report.Report{Input: f.Meta.Input, Output: f.Meta.Output, Config: f.Meta.Flags, Params: set.Learners, Counts: counts,
		Split:       report.Split{TrainImages: counts.Described - cut.Queries, QueryImages: cut.Queries, QueryFraction: cut.Fraction},
		DeadLetters: report.SummariseDead(dead), ComparedTo: compareEarlier(ctx, f.Meta.Earlier, f.Meta.Output, tables[rundir.QueryScoresTable], f.Meta.Seed), Sweep: f.Meta.Sweep,
		// evaluate.Compare's two-sided p moves in steps of 2/Resamples.
		PResolution: 2.0 / evaluate.Resamples}
	if len(tuning.Learners) > 0 {
		r.Tuning = &tuning
		params := map[string]map[string]float64{}
		maps.Copy(params, r.Params)
		r.Params = params
		for _, l := range tuning.Learners {
			r.Params[l.Learner] = l.Params
		}
		set.Learners = r.Params
	}
	var row formats.ReportRow
	for rows(&row) {
		r.Methods = append(r.Methods, row)
	}
	r.Sort()
	var units []report.Stage
	var u report.Stage
	for stages(&u) {
		units = append(units, u)
	}
	r.Stages = report.MergeStages(units)
	js, err := r.JSON()
	if err != nil {
		return err
	}
	html, err := r.HTML()
	if err != nil {
		return err
	}
	// HTML first: report.json is the marker of a finished run.
	if err := fileio.WriteBytes(ctx, fileio.Join(f.Meta.Output, rundir.ReportHTMLName), html); err != nil {
		return err
	}
	if err := fileio.WriteBytes(ctx, fileio.Join(f.Meta.Output, rundir.ReportName), js); err != nil {
		return err
	}
	m, err := finishOutput(ctx, f.Meta.Output, f.Meta.Job, written, &set, f.Meta.Overwrite)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	log.Infof(ctx, "report: %d files written; %s", len(m.Files), fileio.Join(f.Meta.Output, rundir.ManifestName))
	return nil
}

// compareEarlier returns e with its comparison with this run, written
// in output, query by query: the earlier run's per-query files
// (e.QueryScores, in e.Run) paired with this run's (names, in output) by
// evaluate.CompareRuns, seeded by seed. When nothing pairs — the earlier
// run has no such files, or they are this run's (the earlier run was in
// output: the report read its rows before this run replaced it), no
// method and query set of one run is the other's, or no query is in
// both — or the files cannot be read, Unpaired says why (logged too) and
// the report compares the runs' means alone, as without the files.
func compareEarlier(ctx context.Context, e *report.Earlier, output string, names []string, seed uint64) *report.Earlier {
	if e == nil || len(e.QueryScores) == 0 {
		return e
	}
	out := *e
	if fileio.TreeOf(output).Holds(e.Run) && fileio.TreeOf(e.Run).Holds(output) {
		out.Unpaired = "the earlier run was in this run's output directory, and its per-query scores are replaced: only the means are compared"
		out.QueryScores = nil
		return &out
	}
	// each reads the files names of the run in dir.
	each := func(dir string, names []string) evaluate.RowsFunc {
		return func(fn func(*formats.QueryScore) error) error {
			for _, n := range names {
				if err := fileio.ReadEach(ctx, fileio.Join(dir, n), fn); err != nil {
					return err
				}
			}
			return nil
		}
	}
	changes, err := evaluate.CompareRuns(each(e.Run, e.QueryScores), each(output, names), seed)
	if err != nil {
		out.Unpaired = fmt.Sprintf("reading the per-query scores: %v", err)
		log.Warnf(ctx, "report: comparing with %s query by query: %v; only the means are compared", e.Run, err)
		return &out
	}
	out.Paired = changes
	paired := false
	for _, c := range changes {
		paired = paired || c.Queries > 0
	}
	switch {
	case len(changes) == 0:
		out.Unpaired = "the two runs evaluated no method on the same query set: only the means are compared"
	case !paired:
		out.Paired = nil
		out.Unpaired = "no query of this run was one of the earlier run's (the query sets differ entirely): only the means are compared"
	}
	if out.Unpaired != "" {
		log.Infof(ctx, "report: no query-by-query comparison with %s: %s", e.Run, out.Unpaired)
	}
	return &out
}
