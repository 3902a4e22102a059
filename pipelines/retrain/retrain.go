// Package retrain is the job that retrains and re-evaluates similarity
// learners on the bags of words and triplets of a finished bowline run,
// without extracting features or building a vocabulary again: what a
// nightly re-index with new learner settings, or a sweep over training
// shards and rounds, needs.
package retrain

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/parquetio"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*countsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*copyFn)(nil)).Elem())
	beam.RegisterFunction(rowsFn)
}

// Config is the job's configuration.
type Config struct {
	// Run is the output directory of a finished bowline run: its
	// bow-*.parquet and triplets-*.parquet are read, and its
	// features-*.parquet if a learner of global features is trained (the
	// run must have extracted them).
	Run string
	// Base is Run's manifest (run.Dir.Manifest): the settings the
	// retrained run records besides its learners', and the files of Run's
	// corpus (run.CorpusTables) it copies, so that the output is a run
	// readers and later jobs take like any other.
	Base run.Manifest
	// Output is where models, indexes and the report are written, with
	// the copies of Run's corpus.
	Output string
	// Vocabulary is the number of visual words of the run's codebook.
	Vocabulary int
	// Shards is the number of files each index is split into.
	Shards   int
	Learning bowline.Learning
	// Triplets configures the triplets the learners draw from the run's
	// bags of words: the run's own settings draw the run's triplets again.
	Triplets triplets.Options
	Flags    report.Settings
	// Overwrite lets the run replace an output directory that holds other
	// files than the jobs' own (bowline.PrepareOutput).
	Overwrite bool
	// Earlier, if set, is a run the report compares itself with
	// (report.LoadEarlier): by default the run retrained from.
	Earlier *report.Earlier
}

// Validate reports a configuration the job cannot run with.
func (c Config) Validate() error {
	switch {
	case c.Run == "" || c.Output == "":
		return fmt.Errorf("need the run to read and an output directory")
	case fileio.TreeOf(c.Output).Holds(c.Run):
		return &ingest.InputInOutputError{Output: c.Output, Input: "the run --run names, " + c.Run + ": retrain writes a run of its own"}
	case c.Vocabulary <= 0:
		return setting.Errorf("retrain", "Vocabulary", c.Vocabulary, "1 or more")
	case c.Shards <= 0:
		return setting.Errorf("retrain", "Shards", c.Shards, "1 or more")
	}
	if err := c.Triplets.Validate(); err != nil {
		return err
	}
	return c.Learning.Validate(c.Vocabulary, true)
}

// Build adds the job to s.
func Build(s beam.Scope, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Base.Settings == nil {
		return fmt.Errorf("the run %s: no manifest with settings (run.Dir.Manifest)", c.Run)
	}
	bowParts := parquetio.Parts(s, c.Run, "bow")
	var featParts beam.PCollection
	for _, name := range c.Learning.Learners {
		if learners.IsDense(name) {
			featParts = parquetio.Parts(s, c.Run, "features")
			break
		}
	}
	rows, written, tripParts, units, cut, tuning := bowline.Learn(s, bowParts, featParts, c.Vocabulary, c.Learning, c.Triplets, c.Output)
	counts := beam.ParDo(s, &countsFn{Vocabulary: c.Vocabulary}, beam.Impulse(s),
		beam.SideInput{Input: stats.Sum(s, beam.ParDo(s, rowsFn, bowParts))},
		beam.SideInput{Input: stats.Sum(s, beam.ParDo(s, rowsFn, tripParts))})
	written = append(written, copyCorpus(s, c.Run, c.Output, c.Base))
	bowline.WriteReport(s, bowline.ReportMeta{Job: "retrain", Input: c.Run, Output: c.Output, Flags: c.Flags, Settings: c.settings(), Earlier: c.Earlier, Seed: c.Learning.Eval.Seed, Sweep: c.Learning.Sweep.Report(), Overwrite: c.Overwrite}, rows, counts, cut, tuning, beam.CreateList(s, []formats.DeadLetter{}), units, written)
	return nil
}

// settings are the retrained run's settings: the base run's description
// and quantisation, with this job's learners and ranking.
func (c Config) settings() *run.Settings {
	set := *c.Base.Settings
	set.Learners = c.Learning.Effective(c.Vocabulary)
	set.Cosine = c.Learning.Eval.Cosine
	return &set
}

// copyCorpus copies the files of the base run's corpus tables
// (run.CorpusTables) that its manifest base lists from dir to out, one
// file an element, and returns their paths in out (PCollection<string>).
func copyCorpus(s beam.Scope, dir, out string, base run.Manifest) beam.PCollection {
	s = s.Scope("CopyCorpus")
	tables, _ := run.Tables(base.Names())
	var names []string
	for _, t := range run.CorpusTables {
		names = append(names, tables[t]...)
	}
	return beam.ParDo(s, &copyFn{From: dir, To: out}, beam.Reshuffle(s, beam.CreateList(s, names)))
}

// copyFn copies the file of a base name from the directory From to To.
type copyFn struct{ From, To string }

func (f *copyFn) ProcessElement(ctx context.Context, name string) (string, error) {
	to := fileio.Join(f.To, name)
	if err := fileio.Copy(ctx, fileio.Join(f.From, name), to); err != nil {
		return "", err
	}
	return to, nil
}

type countsFn struct{ Vocabulary int }

func (f *countsFn) ProcessElement(_ []byte, bows, trips int64) report.Counts {
	return report.Counts{Described: bows, Vocabulary: int64(f.Vocabulary), Triplets: trips}
}

func rowsFn(p formats.Part) int64 { return p.Rows }
