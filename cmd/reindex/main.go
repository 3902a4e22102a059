// Command reindex runs one night of the nightly re-indexing: the bowline
// job into a new, versioned run under <root>/runs/<run-id>/, then a
// quality gate against the published run, then, if the night passed, an
// atomic publish of <root>/published.json and the removal of old runs
// (package pipelines/reindex).
//
//	go run ./cmd/reindex --input gs://b/corpus/labels.csv --root gs://b/bowline [job flags] [runner flags]
//
// A night the gate refuses, or that another night beat to publishing,
// keeps its run directory (with gate.json saying why), leaves
// published.json alone and exits 1 with one line "reindex: <cause>"; a
// bad command line exits 2. A lock of a local published.json that would
// stop the publish (left by a killed night, empty or unreadable, or held
// for long by a process on another host) stops the night before its job,
// with the rm command that clears it; only a changed published.json is
// reported as another night's publish. A night waits for its job, so it refuses what
// makes the runner return first: --async, and Dataflow's --dry_run and
// --template_location (a Flex Template launch).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/pipelines/reindex"
)

const synopsis = `Usage: reindex --input <labels.csv | image directory | synthetic:N> --root <DIR | gs://…> [flags]

Runs one night: the bowline job into <root>/runs/<run-id>/ (starting from the
published run unless --incremental=false), the quality gate against the published
run, and, if the night passes, <root>/published.json pointing at the new run.`

// The rules of the quality gate's flags, each judged by reindex.Limits'
// Validate, and of --keep, by reindex.Options'.
func init() {
	limit := func(name string, set func(*reindex.Limits, float64)) cmdline.Rule {
		return cmdline.Option(name, func(v float64, _ *flag.FlagSet) error {
			l := reindex.DefaultLimits()
			set(&l, v)
			return l.Validate()
		})
	}
	cmdline.AddRules(map[string]cmdline.Rule{
		"max_map_drop":  limit("reindex.MaxMAPDrop", func(l *reindex.Limits, v float64) { l.MaxMAPDrop = v }),
		"max_dead_rate": limit("reindex.MaxDeadRate", func(l *reindex.Limits, v float64) { l.MaxDeadRate = v }),
		"max_shrink":    limit("reindex.MaxShrink", func(l *reindex.Limits, v float64) { l.MaxShrink = v }),
		// Validate judges Keep before the other options.
		"keep": cmdline.Option("reindex.Keep", func(v int, _ *flag.FlagSet) error { return reindex.Options{Keep: v}.Validate() }),
	})
}

func main() {
	c := bowline.DefaultConfig()
	job := cli.AddJobFlags(flag.CommandLine, &c)
	o := reindex.Options{Limits: reindex.DefaultLimits()}
	flag.StringVar(&o.Root, "root", "", "directory (local or gs://) of the versioned runs (runs/<run-id>/) and of published.json, which names the run readers use; required")
	flag.IntVar(&o.Keep, "keep", 5, "published runs kept under runs/, the newest, the one published.json names always among them; refused runs stay until a later night publishes, and unfinished runs (killed nights) started before the published run are removed (0: remove nothing)")
	flag.BoolVar(&o.Incremental, "incremental", true, "start from the published run, when there is one: reuse its vocabulary, describe only new or changed images and warm-start the learners (false: a full run)")
	flag.BoolVar(&c.RebuildVocab, "rebuild_vocab", false, "with --incremental: build a new vocabulary even when the published run's would do")
	flag.Float64Var(&c.MaxDrift, "max_drift", c.MaxDrift, "with --incremental: largest relative rise of the mean quantisation distortion of a descriptor sample for which the published vocabulary is kept")
	flag.StringVar(&o.ServingLearner, "serving_learner", "solis-ada", "the learner readers serve: its held-out mAP is the one the gate checks")
	flag.Float64Var(&o.Limits.MaxMAPDrop, "max_map_drop", o.Limits.MaxMAPDrop, "refuse a night whose serving learner's held-out mAP is more than this below the published run's (0.01: one point)")
	flag.Float64Var(&o.Limits.MaxDeadRate, "max_dead_rate", o.Limits.MaxDeadRate, "refuse a night with this share of dead letters (dead letters / images) or more")
	flag.Float64Var(&o.Limits.MaxShrink, "max_shrink", o.Limits.MaxShrink, "refuse a night with more than this share fewer images than the published run")
	verbose := flag.Bool("verbose_errors", false, "on failure, print the runner's whole error (plans and all) before the one-line cause")
	groups := cli.JobGroups()
	groups[0].Flags = slices.Insert(groups[0].Flags, 1, "root")
	groups = append(groups,
		cmdline.Group{Title: "Nights", Flags: []string{"incremental", "rebuild_vocab", "max_drift", "keep"}},
		cmdline.Group{Title: "Quality gate", Flags: []string{"serving_learner", "max_map_drop", "max_dead_rate", "max_shrink"}},
		cmdline.Group{Title: "Errors", Flags: []string{"verbose_errors"}})
	cmdline.Parse("reindex", flag.CommandLine, os.Args[1:], synopsis, groups)
	beam.Init()
	cli.QuietRunnerLogs()
	ctx := context.Background()

	fail := func(err error) { cli.Exit("reindex", err, *verbose) }
	if err := cmdline.Require(flag.CommandLine, "input", "root"); err != nil {
		fail(fmt.Errorf("%w%s", err, cmdline.HelpHint))
	}
	if flag.NArg() > 0 {
		fail(cmdline.Usagef("unexpected arguments %q: flags are written --name value%s", flag.Args(), cmdline.HelpHint))
	}
	if *jobopts.Async {
		fail(cmdline.Usagef("--async: a night waits for its job, to judge the run and publish it; schedule the command itself instead"))
	}
	runner := cli.RunnerFromFlags(flag.CommandLine)
	o.Run = func(ctx context.Context, p *beam.Pipeline) error {
		_, err := cli.Run(ctx, runner, p)
		return err
	}
	// With these Dataflow writes the job (a Flex Template launch runs the
	// command with --template_location) or prints it, and returns before
	// it runs: the night would find no finished run to gate or publish.
	// Other runners ignore them.
	refuse := []string{"template_location"}
	if strings.Contains(strings.ToLower(runner.Name), "dataflow") {
		refuse = append(refuse, "dry_run")
	}
	for _, name := range refuse {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			fail(cmdline.Usagef("--%s: Dataflow would return before the job ran, leaving no run to gate or publish (a Flex Template launch passes --template_location); run reindex where it waits for its job, e.g. the Cloud Run job of infra/README.md", name))
		}
	}
	paths := []cli.PathFlag{{Name: "input", Value: c.Input}, {Name: "root", Value: o.Root, Required: true}}
	if err := cli.CheckRunner(runner, false, paths, cli.DataflowPaths(flag.CommandLine)); err != nil {
		fail(err)
	}
	if err := job.Apply(); err != nil {
		fail(err)
	}
	c.Flags = cli.Settings(flag.CommandLine, groups)
	o.Job = c
	if err := o.Validate(); err != nil {
		fail(cmdline.UsageError{Err: err})
	}
	// The job's settings are checked here, where a mistake is the command
	// line's, with a stand-in for the run directory Night makes.
	check := c
	check.Output = reindex.RunDir(o.Root, "check")
	if err := check.Validate(); err != nil {
		fail(cmdline.UsageError{Err: err})
	}
	if runner.Workers() != cli.InProcess {
		if _, err := cli.UseSelfAsWorker(flag.CommandLine, runner, os.Executable); err != nil {
			fail(err)
		}
		if *jobopts.JobName == "" {
			// A name a console can be searched for (Dataflow:
			// [a-z]([-a-z0-9]*[a-z0-9])?).
			*jobopts.JobName = "reindex-" + time.Now().UTC().Format("20060102-150405")
		}
	}
	o.Log = os.Stdout
	res, err := reindex.Night(ctx, o)
	if err != nil {
		fail(err)
	}
	fmt.Printf("\n")
	res.Report.WriteTable(os.Stdout)
	fmt.Printf("\npublished: %s → %s\n", published.Path(o.Root), res.Published.Run)
}
