// Package retrain is the job that retrains and re-evaluates similarity
// learners on the bags of words and triplets of a finished bowline run,
// without extracting features or building a vocabulary again: what a
// nightly re-index with new learner settings, or a sweep over training
// shards and rounds, needs.
package retrain

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/parquetio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/report"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*countsFn)(nil)).Elem())
}

// Config is the job's configuration.
type Config struct {
	// Run is the output directory of a finished bowline run: its
	// bow-*.parquet and triplets-*.parquet are read, and its
	// features-*.parquet if a learner of global features is trained (the
	// run must have extracted them).
	Run string
	// Output is where models, indexes and the report are written.
	Output string
	// Vocabulary is the number of visual words of the run's codebook.
	Vocabulary int
	// Shards is the number of files each index is split into.
	Shards   int
	Learning bowline.Learning
	Flags    map[string]string
	// Overwrite lets the run replace an output directory that holds other
	// files than the jobs' own (bowline.PrepareOutput).
	Overwrite bool
}

// Validate reports a configuration the job cannot run with.
func (c Config) Validate() error {
	switch {
	case c.Run == "" || c.Output == "":
		return fmt.Errorf("need the run to read and an output directory")
	case strings.TrimRight(c.Run, "/") == strings.TrimRight(c.Output, "/"):
		return fmt.Errorf("the output directory is the run's (%s): retrain writes a run of its own, and finishing it would remove the files it reads", c.Run)
	case c.Vocabulary <= 0:
		return fmt.Errorf("vocabulary size must be positive, got %d", c.Vocabulary)
	case c.Shards <= 0:
		return fmt.Errorf("shards must be positive, got %d", c.Shards)
	}
	return c.Learning.Validate(c.Vocabulary, true)
}

// Build adds the job to s.
func Build(s beam.Scope, c Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	bows := parquetio.Read(s, fileio.Join(c.Run, "bow-*.parquet"), reflect.TypeOf(formats.BoW{}))
	trips := parquetio.Read(s, fileio.Join(c.Run, "triplets-*.parquet"), reflect.TypeOf(formats.Triplet{}))
	var described beam.PCollection
	for _, name := range c.Learning.Learners {
		if learners.IsDense(name) {
			described = parquetio.Read(s, fileio.Join(c.Run, "features-*.parquet"), reflect.TypeOf(formats.Features{}))
			break
		}
	}
	rows, written := bowline.Learn(s, bows, trips, described, c.Vocabulary, c.Learning, c.Output, c.Shards)
	counts := beam.ParDo(s, &countsFn{Vocabulary: c.Vocabulary}, beam.Impulse(s),
		beam.SideInput{Input: stats.CountElms(s, bows)},
		beam.SideInput{Input: stats.CountElms(s, trips)})
	bowline.WriteReport(s, bowline.ReportMeta{Job: "retrain", Input: c.Run, Output: c.Output, Flags: c.Flags, Overwrite: c.Overwrite}, rows, counts, written)
	return nil
}

type countsFn struct{ Vocabulary int }

func (f *countsFn) ProcessElement(_ []byte, bows, trips int) report.Counts {
	return report.Counts{Described: int64(bows), Vocabulary: int64(f.Vocabulary), Triplets: int64(trips)}
}
