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
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/bowline"
)

const synopsis = `Usage: bowline --input <labels.csv | image directory | synthetic:N> [--output DIR] [flags]

Runs the whole job — SIFT, vocabulary, bags of words, triplets, learners, inverted
index, evaluation report — on Prism in-process, or on the runner --runner names.`

// groups orders the job's own flags by stage for --help.
var groups = []cli.Group{
	{Title: "Input and output", Flags: []string{"input", "label_column", "output", "overwrite", "part_images", "seed", "previous"}},
	{Title: "Description (SIFT and global features)", Flags: []string{"max_side", "max_pixels", "max_keypoints", "sift_double", "rootsift", "global"}},
	{Title: "Vocabulary", Flags: []string{"vocab", "vocab_sample", "vocab_iter", "akm", "akm_checks", "vocab_chunks", "rebuild_vocab", "max_drift"}},
	{Title: "Bags of words", Flags: []string{"soft_words", "soft_sigma"}},
	{Title: "Triplets", Flags: []string{"triplets_per_query"}},
	{Title: "Learners", Flags: []string{"learners", "learner_params", "sweep", "train_shards", "train_rounds", "group_images", "group_loads", "batch_images"}},
	{Title: "Evaluation", Flags: []string{"query_fraction", "eval_queries", "train_queries", "compare_to", "eval_depth", "eval_shard_queries"}},
	{Title: "Errors", Flags: []string{"verbose_errors"}},
}

func main() {
	c := bowline.DefaultConfig()
	flag.StringVar(&c.Input, "input", "", "labels CSV (image_id,path,label[,tags]; paths relative to the CSV) or image directory (label = sub-directory); local or gs://; or synthetic:N[?labels=L&descriptors=D&seed=S], N generated images (SIFT-like descriptors only, for scale runs); required")
	flag.StringVar(&c.Output, "output", "", "output directory, local or gs:// (default: a new directory under the system's temp dir)")
	flag.StringVar(&c.Columns.Label, "label_column", c.Columns.Label, "labels CSV column that holds the class label")
	flag.IntVar(&c.Describe.PartImages, "part_images", c.Describe.PartImages, "images per part: the image list, features, word counts, bags of words and indexes are written ⌈images/part_images⌉ files each, one worker a part at a time (bounds its memory: ~128 MB of features at 1,000 keypoints an image)")
	flag.BoolVar(&c.Overwrite, "overwrite", false, "replace an output directory that holds files other than a bowline run's; without it such a directory is refused (an earlier run's files are always replaced)")
	flag.StringVar(&c.Previous, "previous", "", "a finished run (directory, local or gs://) to start from: images unchanged since (same id and content hash) are not described again, their features and word counts are carried over, the vocabulary is kept (see --max_drift) and the learners of bags of words continue training on the new images' triplets; the output is a new, self-contained run")
	flag.IntVar(&c.Vocab.K, "vocab", c.Vocab.K, "visual words in the vocabulary")
	flag.IntVar(&c.Vocab.Sample, "vocab_sample", c.Vocab.Sample, "descriptors sampled to build the vocabulary")
	flag.IntVar(&c.Vocab.MaxIter, "vocab_iter", c.Vocab.MaxIter, "maximum k-means iterations")
	flag.BoolVar(&c.Vocab.Approx, "akm", c.Vocab.Approx, "approximate k-means: assign with a randomised kd-forest, for vocabularies of 10K words and more")
	flag.IntVar(&c.Vocab.Forest.Checks, "akm_checks", c.Vocab.Forest.Checks, "with --akm: distance computations per search (0: the default, 256, within 0.4% of exact Lloyd's objective at 100K words; 512 matched it)")
	flag.BoolVar(&c.RebuildVocab, "rebuild_vocab", false, "with --previous: build a new vocabulary even if the previous run's would do (which makes the rest a full run)")
	flag.Float64Var(&c.MaxDrift, "max_drift", c.MaxDrift, "with --previous: keep the previous run's vocabulary while the mean squared distance of a descriptor sample to its nearest word has risen by at most this fraction since the vocabulary was built")
	flag.IntVar(&c.Vocab.Chunks, "vocab_chunks", c.Vocab.Chunks, "at least this many chunks the descriptor sample is split into so that k-means iterations spread over workers; chunks hold at most 4,096 descriptors (0: one worker)")
	flag.IntVar(&c.BoW.Soft.R, "soft_words", c.BoW.Soft.R, "soft assignment (Philbin et al. 2008): quantise each descriptor to this many nearest words, weighted by exp(−d²/2σ²) (0 or 1: hard assignment)")
	flag.Float64Var(&c.BoW.Soft.Sigma, "soft_sigma", c.BoW.Soft.Sigma, "with --soft_words: σ in descriptor units (0: the paper's √6250)")
	flag.IntVar(&c.Describe.SIFT.MaxKeypoints, "max_keypoints", c.Describe.SIFT.MaxKeypoints, "keep at most this many strongest keypoints per image (0: all)")
	flag.IntVar(&c.Describe.SIFT.MaxSide, "max_side", c.Describe.SIFT.MaxSide, "downscale images whose longer side exceeds this (0: never)")
	flag.BoolVar(&c.Describe.SIFT.DoubleImage, "sift_double", c.Describe.SIFT.DoubleImage, "upsample images ×2 before SIFT, as Lowe does")
	flag.BoolVar(&c.Describe.SIFT.RootSIFT, "rootsift", c.Describe.SIFT.RootSIFT, "RootSIFT descriptors (Arandjelović & Zisserman 2012): Euclidean distance between them is the Hellinger kernel of SIFT's")
	flag.BoolVar(&c.Describe.Global, "global", c.Describe.Global, "also extract the global features (colour, edge, Gabor, LBP, GIST) into the features files")
	flag.Int64Var(&c.Describe.MaxPixels, "max_pixels", c.Describe.MaxPixels, "refuse images with more pixels than this, before decoding")
	flag.IntVar(&c.Triplets.PerQuery, "triplets_per_query", c.Triplets.PerQuery, "training triplets sampled per labelled image")
	learnerList := flag.String("learners", strings.Join(c.Learning.Learners, ","), "similarity learners to train, comma-separated, or \"all\". Of bags of words, compared with TF-IDF: "+
		strings.Join(learners.Names(), ", ")+"; of global features (need --global), compared with Euclidean distance: "+strings.Join(learners.DenseNames(), ", "))
	flag.IntVar(&c.Learning.BatchImages, "batch_images", c.Learning.BatchImages, "train the batch learners of global features (ssml, itq, cca-itq, lsh, mglp) on at most this many images, a fixed hash-chosen sample")
	params := flag.String("learner_params", "", "hyper-parameters as learner.name=value,… (e.g. solis-ada.lambda=1e-5,solis-ada.eta=10); the rest keep the defaults")
	sweep := flag.String("sweep", "", "train a learner of bags of words once more for each value of one hyper-parameter, each indexed and evaluated as a learner of its own (e.g. solis-ada.lambda=1e-7,1e-6,1e-5,1e-4: the report plots mAP against sparsity)")
	flag.IntVar(&c.Learning.Shards, "train_shards", c.Learning.Shards, "shards each training round is split over")
	flag.IntVar(&c.Learning.GroupImages, "group_images", c.Learning.GroupImages, "images per training group: triplets are drawn within groups, each group a shard of sharded training, and a worker holds one group's bags of words")
	flag.IntVar(&c.Learning.GroupLoads, "group_loads", c.Learning.GroupLoads, "most training groups a worker process holds loaded at once (0: no limit); memory of training is about group_loads × group_images images' bags of words and triplets")
	flag.IntVar(&c.Learning.Rounds, "train_rounds", c.Learning.Rounds, "rounds of parameter averaging over one pass of the triplets")
	compareTo := flag.String("compare_to", "", "an earlier run's output directory (local or gs://): the report shows how each score changed since")
	flag.Float64Var(&c.Learning.Eval.QueryFraction, "query_fraction", c.Learning.Eval.QueryFraction, "share of each label's images held out as queries: no learner trains on them, and the report's headline is measured on them (0: none held out, every query trained on)")
	flag.IntVar(&c.Learning.Eval.TrainQueries, "train_queries", c.Learning.Eval.TrainQueries, "also query with at most this many training images, to show over-fitting (0: every one)")
	flag.IntVar(&c.Learning.Eval.MaxQueries, "eval_queries", c.Learning.Eval.MaxQueries, "evaluate with at most this many held-out queries, a fixed hash-chosen subset (0: all)")
	flag.IntVar(&c.Learning.Eval.Depth, "eval_depth", c.Learning.Eval.Depth, "rank depth of mAP, P@10 and NDCG@10 (0: the whole ranking up to 20,000 images, the first 1,000 results beyond)")
	flag.IntVar(&c.Learning.Eval.ShardQueries, "eval_shard_queries", c.Learning.Eval.ShardQueries, "queries per evaluation shard; each shard searches the whole collection part by part (0: 1,000)")
	seed := flag.Uint64("seed", 1, "seed for sampling, k-means and triplets")
	verbose := flag.Bool("verbose_errors", false, "on failure, print the runner's whole error (plans and all) before the one-line cause")
	flag.Usage = cli.Usage(flag.CommandLine, synopsis, groups)
	flag.Parse()
	beam.Init()
	cli.QuietRunnerLogs()
	ctx := context.Background()

	fail := func(err error) { cli.Exit("bowline", err, *verbose) }
	if err := cli.Require(flag.CommandLine, "input"); err != nil {
		fail(fmt.Errorf("%w (--help lists every flag)", err))
	}
	if flag.NArg() > 0 {
		fail(cli.Usagef("unexpected arguments %q: flags are written --name value", flag.Args()))
	}
	runner := cli.RunnerFromFlags(flag.CommandLine)
	// The workers read and write these; --compare_to is read here.
	paths := []cli.PathFlag{{Name: "input", Value: c.Input}, {Name: "output", Value: c.Output, Required: true}, {Name: "previous", Value: c.Previous}}
	if err := cli.CheckRunner(runner, *jobopts.Async, paths, cli.DataflowPaths(flag.CommandLine)); err != nil {
		fail(err)
	}
	c.Vocab.Seed, c.Triplets.Seed, c.Learning.Eval.Seed = *seed, *seed, *seed
	c.Learning.Learners = cli.ParseLearners(*learnerList, c.Describe.Global)
	p, err := cli.ParseParams(*params)
	if err != nil {
		fail(cli.UsageError{Err: err})
	}
	c.Learning.Params = p
	if c.Learning.Sweep, err = cli.ParseSweep(*sweep); err != nil {
		fail(cli.UsageError{Err: err})
	}
	if c.Output == "" {
		dir, err := os.MkdirTemp("", "bowline-")
		if err != nil {
			fail(err)
		}
		c.Output = dir
	}
	c.Flags = cli.Settings(flag.CommandLine, groups)
	if c.Earlier, err = bowline.LoadEarlier(ctx, *compareTo); err != nil {
		fail(cli.UsageError{Err: err})
	}
	if err := c.Validate(); err != nil {
		fail(cli.UsageError{Err: err})
	}
	if err := bowline.Preflight(ctx, c); err != nil {
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
	if err := run(ctx, c, runner); err != nil {
		fail(err)
	}
}

// run builds the job and runs it: until it finishes, then printing the
// report's table; with --async until the runner accepted it, printing the
// job's id and where the report will be.
func run(ctx context.Context, c bowline.Config, runner cli.Runner) error {
	p, s := beam.NewPipelineWithRoot()
	if err := bowline.Build(s, c); err != nil {
		return err
	}
	start := time.Now()
	res, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return err
	}
	html, json := fileio.Join(c.Output, bowline.ReportHTML), fileio.Join(c.Output, bowline.ReportJSON)
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
	r, err := bowline.LoadReport(ctx, c.Output)
	if err != nil {
		return fmt.Errorf("the pipeline finished but wrote no report: %w", err)
	}
	fmt.Printf("\nfinished in %.1fs: ", time.Since(start).Seconds())
	r.WriteTable(os.Stdout)
	fmt.Printf("\nreport: %s\n        %s\n", html, json)
	return nil
}
