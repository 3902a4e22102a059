// Package prismretry runs pipelines on Prism (Beam Go v2.77.0) and runs a
// job again when it failed only because of a race in Prism itself, so that
// a rare runner bug does not fail a test or a job whose pipeline is sound.
//
// The race: Prism executes GroupByKey and Flatten itself, as stages
// without an SDK environment, and calls such a stage's bundle with a nil
// SDK worker. stage.Execute still starts the bundle's progress ticker
// (100 ms) before it selects on the bundle's (already closed) response; if
// the goroutine is descheduled for longer than a tick between the two, the
// select may take the tick and ask the nil worker for progress:
// worker.(*B).Progress → (*W).sendInstruction → (*W).NextInst dereferences
// nil, stage.Execute recovers the panic, and the whole job fails. Every
// pipeline with a GroupByKey (CoGroupByKey, a combine, stats.Sum) or a
// Flatten has such stages, so no graph avoids them; the pause that lets
// the tick win needs a loaded machine (load 15 or more on 2 cores), which
// makes it rare, but a test suite running hundreds of jobs meets it.
//
// The jobs are deterministic and write their files whole (temporary name,
// then rename), so running a job again gives what the first run would have.
//
// It sits under infra/, with the launch files of the other runners
// (Dataflow, Flink), and not among the job graphs of pipelines/: the
// commands and the tests of every stage's Beam wrapper run on it, and a
// stage's tests depend on no pipeline.
package prismretry

import (
	"context"
	"log/slog"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// Runner is the name Execute is registered under as a Beam runner: what a
// test package passes to ptest.MainWithDefault (or a binary to beam.Run)
// to run its jobs on Prism with the retry.
const Runner = "prism-retry"

// Attempts is how many times Execute runs a job that keeps failing with
// the race. One failure in hundreds of jobs on a loaded machine makes two
// in a row unlikely, three very unlikely.
const Attempts = 3

func init() {
	beam.RegisterRunner(Runner, Execute)
}

// Execute runs p as prism.Execute does (in-process Prism, or the job
// server --endpoint names) and runs it again, up to Attempts times in all,
// while it fails with the progress race (IsProgressRace). Any other error
// is returned at once.
func Execute(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
	return retry(ctx, func() (beam.PipelineResult, error) { return prism.Execute(ctx, p) })
}

func retry(ctx context.Context, run func() (beam.PipelineResult, error)) (beam.PipelineResult, error) {
	for attempt := 1; ; attempt++ {
		res, err := run()
		if err == nil || attempt == Attempts || ctx.Err() != nil || !IsProgressRace(err) {
			return res, err
		}
		slog.Warn("prismretry: the job failed with Prism's progress race on a runner-executed stage; running it again",
			slog.Int("attempt", attempt+1), slog.Int("attempts", Attempts))
	}
}

// IsProgressRace reports whether err is a Prism job failure caused by the
// race the package describes: the panic stage.Execute recovered is a nil
// pointer dereference under worker.(*B).Progress, which only a stage
// without an SDK worker can reach (the bundle itself is never nil there).
func IsProgressRace(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "panic in stage.Execute bundle processing goroutine: runtime error: invalid memory address or nil pointer dereference") &&
		strings.Contains(s, "worker.(*B).Progress(") &&
		strings.Contains(s, " envID: ")
}
