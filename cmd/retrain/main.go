// Command retrain retrains and re-evaluates similarity learners on the bags
// of words and triplets of a finished bowline run, e.g. with more training
// shards or other hyper-parameters:
//
//	go run ./cmd/retrain --run /tmp/bowline-shapes --output /tmp/retrain --train_shards 4 --train_rounds 3
//
// Errors end in one line "retrain: <cause>" (exit status 1; 2 for a bad
// command line).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/pipelines/retrain"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/train"
)

const synopsis = `Usage: retrain --run <finished bowline run> --output DIR [flags]

Retrains and re-evaluates learners on a finished run's bags of words and triplets
(and its global features, for learners of global features), without describing
the images again.`

var groups = []cmdline.Group{
	{Title: "Input and output", Flags: []string{"run", "output", "overwrite", "shards", "part_loads", "memory_limit"}},
	{Title: "Triplets", Flags: cli.TripletFlags},
	{Title: "Learners", Flags: append([]string{"learners", "learner_params", "sweep", "tune", "tune_fraction", "target_sparsity", "train_shards", "train_rounds"}, cli.GroupFlags...)},
	{Title: "Evaluation", Flags: []string{"query_fraction", "eval_queries", "train_queries", "cosine", "rerank", "expand", "compare_to"}},
	{Title: "Errors", Flags: []string{"verbose_errors"}},
}

// The rule of --shards, judged by retrain.Config's Validate.
func init() {
	cmdline.AddRules(map[string]cmdline.Rule{
		"shards": cmdline.Option("retrain.Shards", func(v int, _ *flag.FlagSet) error {
			return retrain.Config{Run: "run", Output: "out", Vocabulary: 1, Shards: v}.Validate()
		}),
	})
}

func main() {
	c := retrain.Config{Shards: 4, Learning: bowline.DefaultLearning(), Triplets: bowline.DefaultConfig().Triplets}
	flag.StringVar(&c.Run, "run", "", "output directory of a finished bowline run (local or gs://); required")
	flag.StringVar(&c.Output, "output", "", "where models, indexes and the report go; required")
	flag.IntVar(&c.Shards, "shards", c.Shards, "files per index")
	flag.BoolVar(&c.Overwrite, "overwrite", false, bowline.OverwriteHelp)
	cli.AddTripletFlags(flag.CommandLine, &c.Triplets)
	learnerList := flag.String("learners", strings.Join(c.Learning.Learners, ","), "learners to train, comma-separated, or \"all\" (of bags of words; learners of global features, named, need a run made with --global)")
	params := flag.String("learner_params", "", "hyper-parameters as learner.name=value,…")
	sweep := flag.String("sweep", "", "train a learner of bags of words once more for each value of one hyper-parameter, each indexed and evaluated as a learner of its own (e.g. solis-ada.lambda=1e-7,1e-6,1e-5,1e-4: the report plots mAP against sparsity)")
	flag.BoolVar(&c.Learning.Tune.Tune, "tune", false, "choose each learner's hyper-parameters on a validation set carved from the training images (as the job's --tune)")
	flag.Float64Var(&c.Learning.Tune.Share, "tune_fraction", c.Learning.Tune.Share, "with --tune or --target_sparsity: share of each label's training images held out as validation queries while the grid trains")
	flag.Float64Var(&c.Learning.Tune.TargetSparsity, "target_sparsity", 0, "the least share of zero weights of each learner with an L1 strength, λ chosen on the validation set (0: no target)")
	flag.IntVar(&c.Learning.Shards, "train_shards", c.Learning.Shards, "shards each training round is split over")
	flag.IntVar(&c.Learning.Rounds, "train_rounds", c.Learning.Rounds, "rounds of parameter averaging over one pass of the triplets")
	cli.AddGroupFlags(flag.CommandLine, &c.Learning)
	flag.IntVar(&c.Learning.PartLoads, "part_loads", c.Learning.PartLoads, "most bag-of-words parts a worker process indexes, and query shards it evaluates, at once (0: no limit); each holds a part's postings or a chunk of the evaluation's bags and their index")
	compareTo := flag.String("compare_to", "", "an earlier run's output directory (local or gs://): the report shows how each score changed since, and each method's change query by query (paired bootstrap over the queries both runs evaluated)")
	flag.Float64Var(&c.Learning.Eval.QueryFraction, "query_fraction", c.Learning.Eval.QueryFraction, "share of each label's images held out as queries: no learner trains on them, and the report's headline is measured on them (0: none held out, every query trained on)")
	flag.IntVar(&c.Learning.Eval.TrainQueries, "train_queries", c.Learning.Eval.TrainQueries, "also query with at most this many training images, to show over-fitting (0: every one)")
	flag.IntVar(&c.Learning.Eval.MaxQueries, "eval_queries", c.Learning.Eval.MaxQueries, "evaluate with at most this many held-out queries (0: all)")
	flag.BoolVar(&c.Learning.Eval.Cosine, "cosine", c.Learning.Eval.Cosine, "rank each learner's results, in its index and its evaluation, by the cosine in its metric (as the job's --cosine; false: by the bilinear score)")
	flag.IntVar(&c.Learning.Eval.Rerank, "rerank", 0, "also evaluate each method with its best N results spatially re-ranked (rows <method>+sv, as the job's --rerank); a run without geometry files gets none (0: not evaluated)")
	flag.IntVar(&c.Learning.Eval.Expand, "expand", 0, "with --rerank: also rows <method>+sv+qe, queries expanded with at most N verified results (as the job's --expand) (0: not evaluated)")
	memory := cli.AddMemoryLimitFlag(flag.CommandLine)
	verbose := flag.Bool("verbose_errors", false, "on failure, print the runner's whole error (plans and all) before the one-line cause")
	cmdline.Parse("retrain", flag.CommandLine, os.Args[1:], synopsis, groups)
	beam.Init()
	cli.QuietRunnerLogs()
	ctx := context.Background()

	fail := func(err error) { cli.Exit("retrain", err, *verbose) }
	if err := cmdline.Require(flag.CommandLine, "run", "output"); err != nil {
		fail(fmt.Errorf("%w%s", err, cmdline.HelpHint))
	}
	if flag.NArg() > 0 {
		fail(cmdline.Usagef("unexpected arguments %q: flags are written --name value%s", flag.Args(), cmdline.HelpHint))
	}
	memory.Apply()
	c.Learning.Learners = cli.ParseLearners(*learnerList, false)
	p, err := cli.ParseParams(*params)
	if err != nil {
		fail(cmdline.Usagef("--learner_params: %v%s", err, cmdline.HelpHint))
	}
	c.Learning.Params = p
	if c.Learning.Sweep, err = cli.ParseSweep(*sweep); err != nil {
		fail(cmdline.Usagef("--sweep: %v%s", err, cmdline.HelpHint))
	}
	// Checked before the run is read, at the vocabulary size the default
	// parameters were tuned at (Validate checks them again at the run's);
	// the run's features decide whether its learners of global features
	// can train, which the job finds out when it reads them.
	if err := cli.CheckLearning(c.Learning, train.DefaultParamsVocabulary, true); err != nil {
		fail(err)
	}
	codebook := run.TablePattern("codebook")
	n, err := fileio.CountRows(ctx, fileio.Join(c.Run, codebook))
	if err != nil {
		fail(fmt.Errorf("reading the run's codebook: %w", err))
	}
	if n == 0 {
		fail(fmt.Errorf("%s holds no %s: is it the output directory of a finished bowline run?", c.Run, codebook))
	}
	c.Vocabulary = int(n)
	c.Flags = cli.Settings(flag.CommandLine, groups)
	if *compareTo != "" {
		if c.Earlier, err = report.LoadEarlier(ctx, fileio.RunDir(*compareTo)); err != nil {
			fail(cmdline.UsageError{Err: err})
		}
	}
	if err := c.Validate(); err != nil {
		fail(cmdline.UsageError{Err: cli.Refusal(err)})
	}
	if c.Base, err = fileio.RunDir(c.Run).Manifest(ctx); err != nil {
		fail(err)
	}
	if err := bowline.PrepareOutput(ctx, c.Output, c.Overwrite); err != nil {
		fail(err)
	}
	if err := execute(ctx, c, cli.RunnerFromFlags(flag.CommandLine)); err != nil {
		fail(err)
	}
}

func execute(ctx context.Context, c retrain.Config, runner cli.Runner) error {
	pl, s := beam.NewPipelineWithRoot()
	if err := retrain.Build(s, c); err != nil {
		return err
	}
	if _, err := cli.Run(ctx, runner, pl); err != nil {
		return err
	}
	r, err := report.Load(ctx, fileio.RunDir(c.Output))
	if err != nil {
		return fmt.Errorf("the pipeline finished but wrote no report: %w", err)
	}
	fmt.Println()
	r.WriteTable(os.Stdout)
	fmt.Printf("\nreport: %s\n", fileio.Join(c.Output, run.ReportHTMLName))
	return nil
}
