// Command bowline runs the main job: SIFT, vocabulary, bags of words,
// triplets, similarity learners, inverted index and evaluation, on the
// runner named by --runner (Prism, in-process, by default; Dataflow or
// Flink for the real thing).
//
//	go run ./cmd/bowline --input testdata/shapes/labels.csv --output /tmp/bowline
//
// Errors end in one line "bowline: <cause>" (exit status 1; 2 for a bad
// command line); --verbose_errors prints the runner's whole error first.
//
// On a runner whose workers run on other machines (Dataflow, Flink, a job
// server with DOCKER workers) the input and output must be gs:// paths,
// and with --async the command returns once the job is submitted,
// printing its id and where the report will be written.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/ingest/ingestbeam"
	"github.com/bowline/bowline/transforms/report"
)

const synopsis = `Usage: bowline --input <labels.csv | image directory | synthetic:N> [--output DIR] [flags]

Runs the whole job — SIFT, vocabulary, bags of words, triplets, learners, inverted
index, evaluation report — on Prism in-process, or on the runner --runner names.`

// groups orders the job's flags by stage for --help: the job's own
// (cli.JobGroups) and those of this command.
func groups() []cmdline.Group {
	g := cli.JobGroups()
	add := func(title string, flags ...string) {
		for i := range g {
			if g[i].Title == title {
				g[i].Flags = append(g[i].Flags, flags...)
				return
			}
		}
		g = append(g, cmdline.Group{Title: title, Flags: flags})
	}
	add("Input and output", "output", "overwrite", "previous")
	add("Vocabulary", "rebuild_vocab", "max_drift")
	add("Evaluation", "compare_to")
	add("Errors", "verbose_errors")
	return g
}

func main() {
	c := bowline.DefaultConfig()
	job := cli.AddJobFlags(flag.CommandLine, &c)
	flag.StringVar(&c.Output, "output", "", "output directory, local or gs:// (default: a new directory under the system's temp dir)")
	flag.BoolVar(&c.Overwrite, "overwrite", false, bowline.OverwriteHelp)
	flag.StringVar(&c.Previous, "previous", "", "a finished run (directory, local or gs://) to start from: images unchanged since (same id and content hash) are not described again, their features and word counts are carried over, the vocabulary is kept (see --max_drift) and the learners of bags of words continue training on the new images' triplets; the output is a new, self-contained run")
	flag.BoolVar(&c.RebuildVocab, "rebuild_vocab", false, "with --previous: build a new vocabulary even if the previous run's would do (which makes the rest a full run)")
	flag.Float64Var(&c.MaxDrift, "max_drift", c.MaxDrift, "with --previous: keep the previous run's vocabulary while the mean squared distance of a descriptor sample to its nearest word has risen by at most this fraction since the vocabulary was built")
	compareTo := flag.String("compare_to", "", "an earlier run's output directory (local or gs://): the report shows how each score changed since, and each method's change query by query (paired bootstrap over the queries both runs evaluated)")
	verbose := flag.Bool("verbose_errors", false, "on failure, print the runner's whole error (plans and all) before the one-line cause")
	groups := groups()
	cmdline.Parse("bowline", flag.CommandLine, os.Args[1:], synopsis, groups)
	beam.Init()
	cli.QuietRunnerLogs()
	ctx := context.Background()

	// Nothing is created before the last check that can refuse the job:
	// a refused job leaves no output directory behind.
	fail := func(err error) { cli.Exit("bowline", err, *verbose) }
	if err := cmdline.Require(flag.CommandLine, "input"); err != nil {
		fail(fmt.Errorf("%w%s", err, cmdline.HelpHint))
	}
	if flag.NArg() > 0 {
		fail(cmdline.Usagef("unexpected arguments %q: flags are written --name value%s", flag.Args(), cmdline.HelpHint))
	}
	runner := cli.RunnerFromFlags(flag.CommandLine)
	// The workers read and write these; --compare_to is read here.
	paths := []cli.PathFlag{{Name: "input", Value: c.Input}, {Name: "output", Value: c.Output, Required: true}, {Name: "previous", Value: c.Previous}}
	if err := cli.CheckRunner(runner, *jobopts.Async, paths, cli.DataflowPaths(flag.CommandLine)); err != nil {
		fail(err)
	}
	if err := job.Apply(); err != nil {
		fail(err)
	}
	c.Flags = cli.Settings(flag.CommandLine, groups)
	var err error
	if *compareTo != "" {
		if c.Earlier, err = report.LoadEarlier(ctx, fileio.RunDir(*compareTo)); err != nil {
			// "the run to compare with: <why>" is the flag's.
			fail(cmdline.UsageError{Err: fmt.Errorf("--compare_to %s: %w", *compareTo, errors.Unwrap(err))})
		}
	}
	// The output directory, when not given, is made below: a stand-in
	// lets the rest of the configuration be checked first.
	check := c
	if check.Output == "" {
		check.Output = filepath.Join(os.TempDir(), "bowline-")
	}
	if err := check.Validate(); err != nil {
		fail(cmdline.UsageError{Err: cli.Refusal(err)})
	}
	warnings, err := ingestbeam.CheckInput(ctx, c.Input, c.Columns, c.Output)
	if err != nil {
		fail(cli.Refusal(err))
	}
	for _, w := range warnings {
		fmt.Fprintf(os.Stderr, "bowline: warning: %s\n", w)
	}
	if c.Output == "" {
		dir, err := os.MkdirTemp("", "bowline-")
		if err != nil {
			fail(err)
		}
		c.Output = dir
	}
	if err := fileio.CheckOutput(c.Output); err != nil {
		fail(err)
	}
	if err := bowline.PrepareOutput(ctx, c.Output, c.Overwrite); err != nil {
		fail(err)
	}
	if runner.Workers() != cli.InProcess {
		if _, err := cli.UseSelfAsWorker(flag.CommandLine, runner, os.Executable); err != nil {
			fail(err)
		}
		if *jobopts.JobName == "" {
			// A name the async message can give and a console can be
			// searched for (Dataflow: [a-z]([-a-z0-9]*[a-z0-9])?).
			*jobopts.JobName = "bowline-" + time.Now().UTC().Format("20060102-150405")
		}
	}
	if err := execute(ctx, c, runner); err != nil {
		fail(err)
	}
}

// execute builds the job and runs it: until it finishes, then printing the
// report's table; with --async until the runner accepted it, printing the
// job's id and where the report will be.
func execute(ctx context.Context, c bowline.Config, runner cli.Runner) error {
	p, s := beam.NewPipelineWithRoot()
	if err := bowline.Build(s, c); err != nil {
		return err
	}
	start := time.Now()
	res, err := cli.Run(ctx, runner, p)
	if err != nil {
		return err
	}
	html, json := fileio.Join(c.Output, run.ReportHTMLName), fileio.Join(c.Output, run.ReportName)
	switch {
	case !cli.Submitted(res):
		// Dataflow's --dry_run and --template_location (how a Flex
		// Template's launcher runs the command) return no job.
		fmt.Println("the runner did not run the job (--dry_run or --template_location): no report")
		return nil
	case *jobopts.Async:
		fmt.Print(cli.Submission("bowline", runner.Name, cli.JobID(res), *jobopts.JobName, html, json))
		return nil
	}
	r, err := report.Load(ctx, fileio.RunDir(c.Output))
	if err != nil {
		return fmt.Errorf("the pipeline finished but wrote no report: %w", err)
	}
	fmt.Printf("\nfinished in %.1fs: ", time.Since(start).Seconds())
	r.WriteTable(os.Stdout)
	fmt.Printf("\nreport: %s\n        %s\n", html, json)
	return nil
}
