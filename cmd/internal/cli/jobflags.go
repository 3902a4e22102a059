package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/triplets"
)

// JobFlags are the bowline job's settings as flags, for every command that
// runs the job: registered by AddJobFlags, completed by Apply after the
// command line is parsed. The flags that depend on how a command handles
// its output (--output, --overwrite, --compare_to) and --verbose_errors
// are the command's own.
type JobFlags struct {
	c                       *bowline.Config
	fs                      *flag.FlagSet
	learners, params, sweep *string
	seed                    *uint64
	memory                  *MemoryLimit
}

// AddJobFlags registers the job's flags on fs, each writing into c (whose
// values are the defaults shown), and returns what Apply needs to finish
// c. JobGroups lists them by stage for --help.
func AddJobFlags(fs *flag.FlagSet, c *bowline.Config) *JobFlags {
	fs.StringVar(&c.Input, "input", c.Input, "labels CSV (image_id,path,label[,tags]; paths relative to the CSV) or folder of images; local or gs://; "+
		"or synthetic:N[?labels=L&descriptors=D&seed=S], N generated images (SIFT-like descriptors only, for scale runs); required. "+
		ingest.FolderRule+". The output directory may not hold the input")
	fs.StringVar(&c.Columns.Label, "label_column", c.Columns.Label, "labels CSV column that holds the class label")
	fs.IntVar(&c.Describe.PartImages, "part_images", c.Describe.PartImages, "images per part: the image list, features, word counts, bags of words and indexes are written ⌈images/part_images⌉ files each; a part's features are streamed, a row group at a time")
	fs.IntVar(&c.Describe.PartLoads, "part_loads", c.Describe.PartLoads, "most parts a worker process describes, samples for the vocabulary, quantises and indexes, and query shards it evaluates, at once (0: no limit); each keeps every core busy, and holds a row group of features or a few images' descriptors (plus, in an incremental run, the previous run's rows of its part), a part's postings, or a chunk of the evaluation's bags and their index")
	fs.IntVar(&c.Vocab.K, "vocab", c.Vocab.K, "visual words in the vocabulary")
	fs.IntVar(&c.Vocab.Sample, "vocab_sample", c.Vocab.Sample, fmt.Sprintf("descriptors sampled to build the vocabulary (0: %d a word, at least %d and at most %d; the report records the number used)",
		kmeansbeam.SamplePerWord, kmeansbeam.MinDefaultSample, kmeansbeam.MaxDefaultSample))
	fs.IntVar(&c.Vocab.MaxIter, "vocab_iter", c.Vocab.MaxIter, "maximum k-means iterations")
	fs.BoolVar(&c.Vocab.Approx, "akm", c.Vocab.Approx, "approximate k-means: assign through an inverted file of the words (IVF), for vocabularies of 10K words and more")
	fs.IntVar(&c.Vocab.Forest.Checks, "akm_checks", c.Vocab.Forest.Checks, "with --akm: distance computations per search of the kd-forest that finds soft assignment's nearest words (0: the default, 256)")
	fs.Var(initFlag{&c.Vocab.Init}, "vocab_init", "how the vocabulary's k-means chooses its initial words: auto (kmeans|| below 20,000 words, random above), kmeans|| (k-means‖, Bahmani et al. 2012: two rounds of sampling by squared distance, over the sample's chunks with --vocab_chunks, then k-means++ on the ~2K candidates on one worker), kmeans++ (on every sampled descriptor, on one worker) or random (distinct sampled descriptors)")
	fs.IntVar(&c.Vocab.Chunks, "vocab_chunks", c.Vocab.Chunks, fmt.Sprintf("at least this many chunks the descriptor sample is split into so that k-means iterations spread over workers; chunks hold at most 8,192 descriptors (0: one worker for a sample of up to %d descriptors, chunks of 8,192 above)", kmeansbeam.MaxOneWorkerSample))
	fs.IntVar(&c.BoW.Soft.R, "soft_words", c.BoW.Soft.R, "soft assignment (Philbin et al. 2008): quantise each descriptor to this many nearest words, weighted by exp(−d²/2σ²) (0 or 1: hard assignment)")
	fs.Float64Var(&c.BoW.Soft.Sigma, "soft_sigma", c.BoW.Soft.Sigma, "with --soft_words: σ in descriptor units (0: the paper's √6250)")
	fs.StringVar((*string)(&c.BoW.TF), "tf", string(cmp.Or(c.BoW.TF, bow.TFRaw)), "term frequency in the TF-IDF weights: raw; sqrt, √tf, or log, ln(1+tf), damping the bursts of a repeated texture (Jégou et al. 2009)")
	fs.IntVar(&c.Describe.SIFT.MaxKeypoints, "max_keypoints", c.Describe.SIFT.MaxKeypoints, "keep at most this many strongest keypoints per image (0: all)")
	fs.IntVar(&c.Describe.SIFT.MaxSide, "max_side", c.Describe.SIFT.MaxSide, "downscale images whose longer side exceeds this (0: never). 1024 describes a 12-megapixel photo in about half the CPU of 1600, with under half the keypoints to quantise and hold, and no measurable loss of held-out mAP (docs/results.md, photo sizes); a run records it, and a run started from one described at another size describes again the photos the change reaches")
	fs.Var(cmdline.Doubling{O: &c.Describe.SIFT}, "sift_double", "upsample ×2 before SIFT (Lowe's octave −1) the images whose longer side, after --max_side, is below `N` pixels; true: every image, false: none. "+
		"Doubling gained 0.05 held-out mAP for every method on 256×256 photos (ETH-80) and nothing measurable from 640×480 up, where it costs 2–3× the description CPU and 2.6–4× the keypoints (docs/results.md, photo sizes); "+
		"a run records it, and a run started from one described otherwise describes again the photos the change reaches")
	fs.BoolVar(&c.Describe.DCTScale, "dct_scale", c.Describe.DCTScale, "decode a JPEG at least twice --max_side DCT-domain scaled by 1/2, 1/4 or 1/8 (to no less than --max_side) before the area downscale, as libjpeg's scale_denom: less decoding and downscaling, other pixels than the full decode's downscale, so other features (on by default: 12–23% less description CPU on 12-megapixel photos, held-out mAP the same within the paired bootstrap's noise, docs/results.md, photo sizes; off with --global, whose features read colour at full size, and refused with it); a run records it, and a run started from one described otherwise describes again the photos the change reaches (those of at least twice --max_side)")
	fs.BoolVar(&c.Describe.SIFT.RootSIFT, "rootsift", c.Describe.SIFT.RootSIFT, "RootSIFT descriptors (Arandjelović & Zisserman 2012): Euclidean distance between them is the Hellinger kernel of SIFT's")
	fs.BoolVar(&c.Describe.Global, "global", c.Describe.Global, "also extract the global features (colour, edge, Gabor, LBP, GIST) into the features files; they read colour at full size, so --dct_scale is off")
	fs.Int64Var(&c.Describe.MaxPixels, "max_pixels", c.Describe.MaxPixels, "refuse images with more pixels than this, before decoding (0: no limit, for trusted input only)")
	AddTripletFlags(fs, &c.Triplets)
	j := &JobFlags{c: c, fs: fs}
	j.learners = fs.String("learners", strings.Join(c.Learning.Learners, ","), "similarity learners to train, comma-separated, or \"all\". Of bags of words, compared with TF-IDF: "+
		strings.Join(learners.Names(), ", ")+"; of global features (need --global), compared with Euclidean distance: "+strings.Join(learners.DenseNames(), ", "))
	fs.IntVar(&c.Learning.BatchImages, "batch_images", c.Learning.BatchImages, "train the batch learners of global features (ssml, itq, cca-itq, lsh, mglp) on at most this many images, a fixed hash-chosen sample")
	j.params = fs.String("learner_params", "", "hyper-parameters as learner.name=value,… (e.g. solis-ada.lambda=1e-5,solis-ada.eta=10); the rest keep the defaults")
	j.sweep = fs.String("sweep", "", "train a learner of bags of words once more for each value of one hyper-parameter, each indexed and evaluated as a learner of its own (e.g. solis-ada.lambda=1e-7,1e-6,1e-5,1e-4: the report plots mAP against sparsity)")
	fs.BoolVar(&c.Learning.Tune.Tune, "tune", c.Learning.Tune.Tune, "choose each learner's hyper-parameters of bags of words (η, λ, DA's γ, OASIS's C: tune.Grid) by the mAP of a validation set carved from the training images, never the held-out ones; the report lists each grid point's validation mAP and sparsity")
	fs.Float64Var(&c.Learning.Tune.Share, "tune_fraction", c.Learning.Tune.Share, "with --tune or --target_sparsity: share of each label's training images held out as validation queries while the grid trains")
	fs.Float64Var(&c.Learning.Tune.TargetSparsity, "target_sparsity", c.Learning.Tune.TargetSparsity, "the least share of zero weights of each learner with an L1 strength: its λ is the one of best validation mAP among a half-decade grid (tune.SparsityGrid) whose model reaches it; the report says if none does (0: no target)")
	fs.IntVar(&c.Learning.Shards, "train_shards", c.Learning.Shards, "shards each training round is split over")
	AddGroupFlags(fs, &c.Learning)
	fs.IntVar(&c.Learning.Rounds, "train_rounds", c.Learning.Rounds, "rounds of parameter averaging over one pass of the triplets")
	fs.Float64Var(&c.Learning.Eval.QueryFraction, "query_fraction", c.Learning.Eval.QueryFraction, "share of each label's images held out as queries: no learner trains on them, and the report's headline is measured on them (0: none held out, every query trained on)")
	fs.IntVar(&c.Learning.Eval.TrainQueries, "train_queries", c.Learning.Eval.TrainQueries, "also query with at most this many training images, to show over-fitting (0: every one)")
	fs.IntVar(&c.Learning.Eval.MaxQueries, "eval_queries", c.Learning.Eval.MaxQueries, "evaluate with at most this many held-out queries, a fixed sample stratified by label (0: all)")
	fs.IntVar(&c.Learning.Eval.Depth, "eval_depth", c.Learning.Eval.Depth, "rank depth of mAP, P@10 and NDCG@10 (0: the whole ranking up to 20,000 images, the first 1,000 results beyond)")
	fs.IntVar(&c.Learning.Eval.ShardQueries, "eval_shard_queries", c.Learning.Eval.ShardQueries, "at most this many queries per evaluation shard (0: 1,000); each shard searches the whole collection part by part, and takes fewer queries when their best results, kept between parts, would pass a million")
	fs.BoolVar(&c.Learning.Eval.Cosine, "cosine", c.Learning.Eval.Cosine, "rank each learner's results, in its index and its evaluation, by the cosine in its metric: every image's bag divided by its length under the learner's positive weights (false: by the bilinear score the learners fit; TF-IDF ranks the same either way)")
	fs.IntVar(&c.Learning.Eval.Rerank, "rerank", c.Learning.Eval.Rerank, "also evaluate every method of bags of words with its best N results spatially verified and re-ranked, as query --rerank N does (rows <method>+sv, compared with the method; a run without geometry files gets none) (0: not evaluated)")
	fs.IntVar(&c.Learning.Eval.Expand, "expand", c.Learning.Eval.Expand, "with --rerank: also rows <method>+sv+qe, each query averaged with at most N of its verified results, searched again and re-ranked again, as query --rerank --expand=N does (0: not evaluated)")
	j.seed = fs.Uint64("seed", c.Vocab.Seed, "seed for sampling, k-means and triplets")
	j.memory = AddMemoryLimitFlag(fs)
	return j
}

// TripletFlags are the flags AddTripletFlags registers, for --help.
var TripletFlags = []string{"triplets_per_query", "negatives", "positives", "hard_pool", "hard_fraction"}

// GroupFlags are the flags AddGroupFlags registers.
var GroupFlags = []string{"group_images", "group_postings", "group_loads"}

// AddGroupFlags registers the flags of the training groups on fs, writing
// into l (whose values are the defaults shown): the job's, and retrain's,
// whose training holds the same groups.
func AddGroupFlags(fs *flag.FlagSet, l *bowline.Learning) {
	fs.IntVar(&l.GroupImages, "group_images", l.GroupImages, "images per training group: triplets are drawn within groups, each group a shard of sharded training, and a worker holds one group's bags of words")
	fs.IntVar(&l.GroupPostings, "group_postings", l.GroupPostings, "postings (words of the bags) per training group at most (0: no bound): a group ends at whichever of group_images and group_postings it reaches first, so groups of real photos (~1,700 words each) hold no more than groups of small images")
	fs.IntVar(&l.GroupLoads, "group_loads", l.GroupLoads, "most training groups a worker process holds loaded at once (0: no limit); memory of training is about group_loads groups' bags of words (8 bytes a posting) and triplets")
}

// AddTripletFlags registers the flags of how triplets are drawn on fs,
// writing into o (whose values are the defaults shown): the job's, and
// retrain's, which draws the triplets again from a run's bags of words.
func AddTripletFlags(fs *flag.FlagSet, o *triplets.Options) {
	fs.IntVar(&o.PerQuery, "triplets_per_query", o.PerQuery, "training triplets sampled per labelled image")
	fs.StringVar(&o.Negatives, "negatives", o.Negatives, "how a triplet's negative is drawn among the training group's images of other labels: random; hard, from the --hard_pool most similar to the query by TF-IDF cosine; semihard, from the --hard_pool most similar of those less similar than the positive")
	fs.StringVar(&o.Positives, "positives", o.Positives, "how a triplet's positive is drawn among the images of the query's label: random; near, from the --hard_pool most similar to the query by TF-IDF cosine")
	fs.IntVar(&o.HardPool, "hard_pool", o.HardPool, "the number of most similar images a mined negative (of other labels) or a near positive (of the query's label) is drawn from")
	fs.Float64Var(&o.HardFraction, "hard_fraction", o.HardFraction, "with --negatives hard or semihard or --positives near: the share of triplets drawn so (mined negative, near positive); the rest are random")
}

// JobGroups returns the --help groups of AddJobFlags's flags, by stage; a
// command adds its own flags to them (its output flags to the first) or
// appends groups of its own.
func JobGroups() []cmdline.Group {
	return []cmdline.Group{
		{Title: "Input and output", Flags: []string{"input", "label_column", "part_images", "part_loads", "memory_limit", "seed"}},
		{Title: "Description (SIFT and global features)", Flags: []string{"max_side", "dct_scale", "max_pixels", "max_keypoints", "sift_double", "rootsift", "global"}},
		{Title: "Vocabulary", Flags: []string{"vocab", "vocab_sample", "vocab_iter", "akm", "akm_checks", "vocab_chunks", "vocab_init"}},
		{Title: "Bags of words", Flags: []string{"soft_words", "soft_sigma", "tf"}},
		{Title: "Triplets", Flags: TripletFlags},
		{Title: "Learners", Flags: []string{"learners", "learner_params", "sweep", "tune", "tune_fraction", "target_sparsity", "train_shards", "train_rounds", "group_images", "group_postings", "group_loads", "batch_images"}},
		{Title: "Evaluation", Flags: []string{"query_fraction", "eval_queries", "train_queries", "eval_depth", "eval_shard_queries", "cosine", "rerank", "expand"}},
	}
}

// Apply completes the configuration the flags were parsed into: the
// seed of every stage, the learner list ("all" expanded), the
// hyper-parameters and the sweep, and checks the learners with their
// parameters (CheckLearning); it sets the process's memory limit
// and has the job's workers set it (MemoryLimit.Apply). Its errors are
// UsageErrors naming the flag.
func (j *JobFlags) Apply() error {
	c := j.c
	j.memory.Apply()
	// The sample that follows the vocabulary is made explicit, so that the
	// report's settings say what the run drew and a re-run draws it again.
	if c.Vocab.Sample == 0 {
		c.Vocab.Sample = kmeansbeam.DefaultSample(c.Vocab.K)
		if err := j.fs.Set("vocab_sample", strconv.Itoa(c.Vocab.Sample)); err != nil {
			panic(fmt.Sprintf("cli: %v", err)) // an int flag takes an int
		}
	}
	// Global features read colour at full size (describe.Options.
	// WithGlobal): --global turns --dct_scale's default off, and the
	// report records it so; --global with --dct_scale is refused
	// (describe.Options.Validate).
	if c.Describe.Global && !j.set("dct_scale") {
		c.Describe = c.Describe.WithGlobal()
		if err := j.fs.Set("dct_scale", "false"); err != nil {
			panic(fmt.Sprintf("cli: %v", err)) // a bool flag takes false
		}
	}
	c.Vocab.Seed, c.Triplets.Seed, c.Learning.Eval.Seed = *j.seed, *j.seed, *j.seed
	c.BoW.PartLoads, c.Vocab.PartLoads, c.Learning.PartLoads = c.Describe.PartLoads, c.Describe.PartLoads, c.Describe.PartLoads
	c.Learning.Learners = ParseLearners(*j.learners, c.Describe.Global)
	p, err := ParseParams(*j.params)
	if err != nil {
		return cmdline.Usagef("--learner_params: %v%s", err, cmdline.HelpHint)
	}
	c.Learning.Params = p
	if c.Learning.Sweep, err = ParseSweep(*j.sweep); err != nil {
		return cmdline.Usagef("--sweep: %v%s", err, cmdline.HelpHint)
	}
	return CheckLearning(c.Learning, c.Vocab.K, c.Describe.Global)
}

// set reports whether the command line gave the flag name.
func (j *JobFlags) set(name string) bool {
	set := false
	j.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Refusal returns err as an error of the command line (exit 2, ending in
// HelpHint) if it is an output directory that holds the job's input
// (*ingest.InputInOutputError), a choice of flags; any other err as it is.
func Refusal(err error) error {
	if errors.As(err, new(*ingest.InputInOutputError)) {
		return cmdline.Usagef("%v%s", err, cmdline.HelpHint)
	}
	return err
}

// initFlag is the flag.Value of a kmeans.Init, by its name.
type initFlag struct{ p *kmeans.Init }

func (f initFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f initFlag) Set(s string) error {
	i, err := kmeans.ParseInit(s)
	if err == nil {
		*f.p = i
	}
	return err
}
