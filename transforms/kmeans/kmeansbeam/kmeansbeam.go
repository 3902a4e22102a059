// Package kmeansbeam is the Beam wrapper of package kmeans: it draws a
// bounded, deterministic sample of SIFT descriptors from every image and
// clusters it into a visual vocabulary, on one worker or as distributed
// Lloyd iterations.
//
// # Distributed training
//
// With Options.Chunks > 0 (or, with 0, a sample above Options.WholeSample)
// the sample is cut into that many chunks — more if that keeps every chunk
// within 8,192 descriptors — written to files of a scratch directory under
// Options.Scratch (scratch.go); their names are reshuffled so that the
// runner can spread them over workers, and Lloyd's iterations become
// stages of the graph, unrolled MaxIter+1 times (the graph of a Beam batch
// job is fixed before it runs). A sample above WholeSample is drawn part
// by part into its chunks, never whole (parts.go). With state_0 the
// records of the initial centroids' files, which the step that chooses
// them writes by word shard (emitInitial), iteration i is
//
//	written_i                   = ParDo(write_i)(impulse; side input: state_i)
//	chunks_i+1, sums files_i    = ParDo(assign_i)(Pair(chunks_i, written_i))
//	counts_i                    = ParDo(merge_i)(GroupByKey(sums files_i + a mark of each word shard))
//	plan_i                      = ParDo(plan_i)(impulse; side inputs: written_i, counts_i)
//	shard files_i, split rows_i = ParDo(shard_i)(word shards; side inputs: written_i, plan_i)
//	state_i+1                   = shard files_i + ParDo(split_i)(impulse; side inputs: plan_i, split rows_i)
//
// where state_0 holds the initial centroids — by k-means‖ over the chunks
// (see initialCentroids), or kmeans.Initialize on the sample on one worker
// for the other seedings — and a state is the current centroids, iteration,
// objective and whether training has converged; its head is the state
// without its centroids. A state's centroids are files of the scratch
// directory, one a word shard (and one of the rows the update's splits
// touched), written where the shard is updated, and the state travels as a
// record of each file, its head and the file's name; an iteration's sums
// are files named by small records too. So no element of the loop exceeds
// about half a megabyte, and the runner holds no centroid of the loop
// (see Memory).
//
// When K × the sample is at most Options.OneStepWork (DefaultOneStepWork:
// every vocabulary of up to kmeans.KMeansPPMaxK words at its default
// sample), the iterations instead run in one step on one worker
// (loop.go), which streams the chunks from their files at every iteration
// and gives the same codebook: Prism spent more on the unrolled stages
// than on their work at that size.
//
// write_i gathers the records of state_i's files and emits the state's
// head naming them all, with which onekeybeam.Pair pairs
// every chunk: an assigning bundle runs for seconds, and Prism spins about
// a core for the length of a bundle of a stage with side inputs (see
// onekeybeam). assign_i assigns each descriptor of its chunks to the
// nearest centroid of state_i — through an nn.IVF trained by
// kmeans.TrainIVF with IVFOptions.ForIteration(i), searching
// Options.TrainProbes lists, if Approx (an nn.Forest built with
// ForestOptions.ForIteration(i) with UseForest), which keeps a descriptor's previous cluster unless it finds a
// nearer one, exactly as kmeans.Train does — writes the chunk's new labels
// to a file for iteration i+1 and re-emits the chunk's name. It keeps per-bundle sparse sums: the
// integer sum and count of the descriptors of every cluster the bundle
// touched, their squared distances and how many labels changed, and writes
// them to the scratch directory, a file per word shard (Options.ShardWords),
// in FinishBundle and whenever they would pass Options.SumsRows rows,
// emitting a record of each file keyed by its shard (scratch.go). The
// forest (or IVF) is built once per worker
// process and iteration: bundles share it through a
// one-slot cache keyed by the training's scratch directory, the
// iteration and the forest options, so a worker holds one forest at a time. A
// converged state makes assign emit nothing.
//
// merge_i, for each word shard, reads the files its records name and adds
// them cluster by cluster into the shard's merged sums, which it writes to
// a file for shard_i, and emits the shard's counts and totals. Descriptors
// are bytes, so the sums are integers, exact in any order (and small, so
// that the files' varint coding holds them in about 1.5 bytes a
// coordinate), and the squared distances are summed in fixed point (units
// of 2⁻⁸): every total is independent of how the runner bundles, splits
// and merges, and of where a bundle's sums leave for files. Hence the
// codebook does not depend on Chunks or on the runner, and for the same
// sample its centroids, iterations and convergence are those of
// kmeans.Train with ReseedSplit (the objective differs by the fixed-point
// rounding, at most 2⁻⁹).
//
// The update is split by word range so that no worker holds K words' float64
// sums. plan_i, on one worker, reads only the head of state_i and the
// counts of the merged sums (8 bytes a word) and applies the stopping rule
// kmeans.Options.Stop and, if training goes on, kmeans.PlanSplits: which
// empty clusters split off which large ones, which needs only the counts.
// shard_i, for each shard of Options.ShardWords words (DefaultShardWords),
// reads its rows of state_i from the files written_i names and the shard's
// merged sums into kmeans.Sums of its word range, sets each centroid to
// the mean of its cluster (kmeans.Update), writes them to the shard's file
// of the next state and emits its record; the few rows the splits touch
// also go to split_i, which applies the splits on one worker
// (kmeans.ApplySplits) and writes them to a file that replaces their rows
// of the shards' files. The centroids are
// those kmeans.Update and kmeans.Split give on the Sums of all words, bit
// for bit, so the shards change no output. A converged state
// passes through the remaining stages unchanged.
//
// # Memory
//
// The loop's elements are kept small because of what outlives a bundle:
// the Go SDK harness caches every bundle plan it builds, with its DoFns, for
// the rest of the job, and each DataSink of a plan keeps an encoding buffer
// as large as the largest element it has emitted (up to twice that); the
// unrolled graph has five stages per iteration, and a runner may run
// several bundles of a stage at once, each with its own plan. Hence a chunk
// element is its name (its descriptors and labels are in files, and a
// runner like Prism, which holds every element between stages in its own
// memory, holds no descriptor), a record of a file of sums its name and a
// few numbers (the sums stay in the file), a shard's counts 8 bytes a word
// (512 KB at most, a fraction of that coded as varints), a record of a
// state's file its head and name, and assign drops its state, sums and scratch in
// FinishBundle, so that what a cached plan pins does not grow with K or
// with the sample. The codebook too travels as the names of its files
// (Codebook): the step that makes it writes its words to Options.Output
// once, a word shard at a time from the last state's files, and every
// consumer reads them from there. Codebook elements never hold the words:
// an element holding them would be copied by the runner's element store,
// its gRPC buffers and each consumer's decoding (512 MB each at 10⁶ words).
//
// Per worker, with D = 128 and K words: a state is 512·K bytes of float32
// centroids, in a file per word shard that the shard's update writes (no
// worker assembles a state to write it) and that assign reads one at a
// time into the state's centroids, 512·K bytes and one shard's file (32 MB
// for the default 65,536 words), once per worker process and iteration (a one-slot
// cache like the index's, keyed by the training and the iteration, both
// let go of once the iteration's merge starts: assigningOver), plan
// reads the head alone and a shard update the files of its words; the
// scratch directory holds the centroids of at most two iterations; the
// worker holds one
// index (forest or IVF) at a time, of the size package nn states; each
// assigning goroutine keeps an nn.Search of 4·K bytes (or an
// nn.IVFScratch); a bundle's partial sums take 1,036 bytes per word it
// touched, at most SumsRows words (68 MB at DefaultSumsRows), plus a
// 4·K-byte index and, while it writes them, one shard's file of them; a
// worker process assigns one bundle at a time (assignBundles); a chunk being assigned takes 132 bytes per descriptor
// (bytes and label, read from its files) and a float32 copy of 512 bytes
// per descriptor; the k-means‖ seeding's chunks carry D², label and
// candidate (12 bytes a descriptor) and their bytes are read where needed.
// The merge of a word shard holds its sums as integers, 1,032 bytes a word
// (68 MB for the default 65,536 words), and one file of sums at a time;
// the plan holds 9·K bytes of counts and its element 8 bytes per
// empty cluster; an update of a word shard holds its kmeans.Sums and
// centroids, 1,548 bytes a word (101 MB for the default 65,536 words), a
// process merging or updating at most two shards at once (updateShards),
// and split_i the rows its splits touch. The codebook's step holds one
// shard's centroids (32 MB for the default 65,536 words) and a row group
// of the codebook file it writes. The single-worker path (Chunks = 0)
// holds the whole sample as float32 (512 bytes per descriptor), labels and
// distances (8 bytes each), dense sums and one index.
//
// Drawing the sample: up to WholeSample descriptors, the worker that merges
// it holds it whole as bytes (136 bytes a descriptor, twice that while
// merging), and the seeding a float32 copy (512 bytes a descriptor). A
// larger sample is drawn in parts: a part's reader holds at most twice the
// sample's priorities (8 bytes each) among its own descriptors; the worker
// that finds the threshold, 16 bytes a descriptor of the sample; a part's
// chunk writer one chunk and its share of the seeding sample; the seeding,
// max(K, WholeSample) descriptors as bytes and float32; and no worker the
// sample, which lives in the chunks' files (128 bytes a descriptor on the
// scratch directory's disk, and 4 for each of the two latest iterations'
// labels). An iteration's files of sums take about 1.5 bytes a value of
// every row a bundle wrote — at 10⁶ words, where a row sums one or two
// descriptors, about as much as the sample's descriptors — and go when
// the next iteration starts.
package kmeansbeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/internal/splitmix"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/progress"
	"github.com/bowline/bowline/transforms/setting"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*sampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sample)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*trainFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Codebook)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*failFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*initFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*chunk)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*state)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sumsFile)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*shardCounts)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*assignFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeStateFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeSumsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*planFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*plan)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*shardsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*shardFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*splitRow)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*splitRowsFn)(nil)).Elem())
	beam.RegisterFunction(shardMarkFn)
	beam.RegisterType(reflect.TypeOf((*partPriosFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*prios)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*threshold)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergePriosFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*initPartsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*partChunksFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*codebookFn)(nil)).Elem())
	beam.RegisterFunction(keypointsFn)
	beam.RegisterType(reflect.TypeOf((*samplePartFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeSampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
	beam.RegisterFunction(pathsFn)
}

// Options configures the vocabulary.
type Options struct {
	// K is the number of visual words.
	K int
	// Sample bounds the number of descriptors clustered; 0 is
	// DefaultSample(K).
	Sample int
	// PartLoads is the most features parts a worker process reads at once
	// to draw the sample (0: no limit): a part being read holds a row group
	// of features, a few hundred MB of real photos', and a runner may read
	// every part side by side, as Prism does. It changes no output, so it
	// is left out of the settings a run records.
	PartLoads int `json:"-"`
	// MaxIter and Tol stop Lloyd's iterations (see kmeans.Options).
	MaxIter int
	Tol     float64
	// Seed seeds the sample, the initialisation and the default forests.
	Seed uint64

	// Approx trains by approximate k-means, assigning through an
	// nn.IVF (or, with UseForest, an nn.Forest) rebuilt over the
	// centroids at every iteration.
	Approx bool

	// UseForest makes Approx search randomised kd-forests, as before the
	// IVF: on real SIFT at 10K words the IVF's default search found the
	// nearest word more often than the forest's (95% against 91%) in a
	// sixth of the time (cmd/akmbench -mode assign).
	UseForest bool

	// Forest configures the forests: of training with UseForest, and
	// the k-nearest search of soft assignment against an approximate
	// vocabulary. A zero field takes its value from
	// nn.DefaultForestOptions(), and a zero seed is Seed.
	Forest nn.ForestOptions

	// IVF configures the IVFs of Approx without UseForest. A zero Probes
	// takes nn.DefaultIVFOptions()'s, and a zero seed is Seed.
	IVF nn.IVFOptions

	// TrainProbes is the number of lists the IVFs of Lloyd's iterations
	// search (0: DefaultTrainProbes, or IVF's probes if fewer); the
	// codebook's quantisation searches IVF's. A descriptor
	// keeps its cluster unless a search finds a nearer word, so the
	// iterations need not find every nearest word each time: see
	// DefaultTrainProbes.
	TrainProbes int

	// Chunks, if positive, cuts the sample into that many chunks, or more
	// so that none exceeds 8,192 descriptors, and runs Lloyd's iterations
	// as Beam stages (see the package documentation), so that assignment
	// runs where the chunks are; a runner can use as many workers as there
	// are chunks. Zero trains on one worker with kmeans.Train if the
	// sample is at most WholeSample descriptors, and in chunks of 8,192 if
	// it is larger.
	Chunks int

	// WholeSample is the largest sample one worker holds whole (0:
	// MaxOneWorkerSample). A larger one is drawn part by part and seeded
	// from its max(K, WholeSample) descriptors of smallest priority (see
	// parts.go), and trains in chunks.
	WholeSample int

	// Init and InitSample choose the initial centroids, as in
	// kmeans.Options: by default k-means‖ (over the chunks when
	// distributed) below kmeans.KMeansPPMaxK words and random sample
	// descriptors above.
	Init       kmeans.Init
	InitSample int

	// Scratch is a directory (local or gs://) that every worker reads and
	// writes, under which distributed training keeps its sample's chunks
	// while it trains, in a directory of its own that it removes when
	// done (see scratch.go): 128 bytes a sampled descriptor and 4 for
	// each of the latest two iterations' labels. Empty: the system's
	// temporary directory, which only the workers of this machine see.
	// It changes no output, so it is left out of the settings a run
	// records.
	Scratch string `json:"-"`

	// Output is the directory (local or gs://, read by every worker) the
	// codebook's words are written to, as CodebookName shards of
	// formats.Word rows, whole or not at all; a kept codebook
	// (KeepOrBuild) is copied there. Empty: the vocabulary stages fail
	// the pipeline, naming it (the caller owns the words' directory and
	// removes it). It changes no word, so it is left out of the settings
	// a run records.
	Output string `json:"-"`

	// ShardWords is the number of words whose centroids one worker
	// updates in distributed training (0: DefaultShardWords): the update
	// holds their float64 sums and centroids, 1,548 bytes a word, and no
	// worker holds all K; the merge of a shard's sums holds them as
	// integers, 1,032 bytes a word. It changes no output, so it is left
	// out of the settings a run records.
	ShardWords int `json:"-"`

	// SumsRows bounds the rows of an assigning bundle's sums in
	// distributed training (0: DefaultSumsRows): a row is a word the
	// bundle's descriptors fell in, 1,036 bytes, and once the sums would
	// pass SumsRows rows they are written to the scratch directory, a file
	// per word shard (scratch.go). It changes no output, so it is left out
	// of the settings a run records.
	SumsRows int `json:"-"`

	// OneStepWork is the largest K × sample whose Lloyd iterations, when
	// the sample is in chunks, run in one step of the graph on one worker
	// (loop.go) rather than as stages over the chunks (0:
	// DefaultOneStepWork, every vocabulary of up to kmeans.KMeansPPMaxK
	// words at its default sample; negative: always as stages). The step holds
	// the centroids, their index and the sums of the K words a goroutine,
	// never the sample. It changes no output, so it is left out of the
	// settings a run records.
	OneStepWork int64 `json:"-"`
}

// The default sample (DefaultSample) follows the vocabulary: SamplePerWord
// descriptors a word, at least MinDefaultSample and at most
// MaxDefaultSample. Philbin et al. trained 1M words on 16.7M descriptors,
// and 100K words from 230K descriptors leave most words in one or two
// images. A sample above WholeSample (by default above 4,000 words) is drawn
// in parts and trained in chunks whose descriptors stay in files, so no
// worker and no runner holds it whole; the upper bound, 20 a word at 1M
// words, keeps its files to 2.6 GB.
const (
	SamplePerWord    = 50
	MinDefaultSample = 200_000
	MaxDefaultSample = 20_000_000
)

// DefaultSample returns the sample of a vocabulary of k words when
// Options.Sample is 0: 50 descriptors a word, at least 200,000 and at most
// 20,000,000.
func DefaultSample(k int) int {
	return min(max(MinDefaultSample, SamplePerWord*k), MaxDefaultSample)
}

// sample returns the sample in force.
func (o Options) sample() int {
	if o.Sample == 0 {
		return DefaultSample(o.K)
	}
	return o.Sample
}

// MaxOneWorkerSample is the default Options.WholeSample, the floor of the
// default sample: a default sample that grows with the vocabulary (above
// 4,000 words) is drawn in parts, so no worker holds a sample that grows
// with K or with the corpus. Held whole, a sample costs far more than its
// 136 bytes a descriptor — the runner holds coded copies of the one
// element, the merge twice its bytes, kmeans.Train or the seeding a
// float32 copy (512 bytes a descriptor) — and on 10 features parts of
// real photos a vocabulary of 10K words trained on 500,000 descriptors
// held whole peaked at 4.8 GB RSS, and 100K words on 1M held whole at
// 9.1 GB (9.5 GB in chunks), against 2.7 GB for the same 1M drawn in
// parts.
const MaxOneWorkerSample = MinDefaultSample

// wholeSample returns the largest sample held whole in force.
func (o Options) wholeSample() int {
	if o.WholeSample == 0 {
		return MaxOneWorkerSample
	}
	return o.WholeSample
}

// chunks returns the chunks asked of distributed training in force (see
// Options.Chunks), 0 for training on one worker.
func (o Options) chunks() int {
	if o.Chunks == 0 && o.inParts() {
		return 1
	}
	return o.Chunks
}

// DefaultShardWords is the default Options.ShardWords: 64 MiB of float64
// sums at D = 128.
const DefaultShardWords = 1 << 16

// shardWords returns the words of a shard of the update in force.
func (o Options) shardWords() int {
	if o.ShardWords == 0 {
		return DefaultShardWords
	}
	return o.ShardWords
}

// DefaultSumsRows is the default Options.SumsRows: 68 MB of sums a
// bundle at D = 128.
const DefaultSumsRows = 1 << 16

// sumsRows returns the bound of an assigning bundle's rows of sums in
// force.
func (o Options) sumsRows() int {
	if o.SumsRows == 0 {
		return DefaultSumsRows
	}
	return o.SumsRows
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	switch {
	case o.K < 2: // a vocabulary of one word tells no image from another
		return setting.Errorf("kmeansbeam", "K", o.K, "2 or more")
	case o.Sample < 0:
		return setting.Errorf("kmeansbeam", "Sample", o.Sample, "0 (%d descriptors a word, %d to %d) or more", SamplePerWord, MinDefaultSample, MaxDefaultSample)
	case o.sample() < o.K:
		return setting.Errorf("kmeansbeam", "Sample", o.sample(), "at least K = %d: k-means needs a sampled descriptor for every word", o.K)
	case o.Chunks < 0:
		return setting.Errorf("kmeansbeam", "Chunks", o.Chunks, "0 (one worker) or more")
	case o.WholeSample < 0:
		return setting.Errorf("kmeansbeam", "WholeSample", o.WholeSample, "0 (the default, %d) or more", MaxOneWorkerSample)
	case o.ShardWords < 0:
		return setting.Errorf("kmeansbeam", "ShardWords", o.ShardWords, "0 (the default, %d) or more", DefaultShardWords)
	case o.SumsRows < 0:
		return setting.Errorf("kmeansbeam", "SumsRows", o.SumsRows, "0 (the default, %d) or more", DefaultSumsRows)
	case o.TrainProbes < 0:
		return setting.Errorf("kmeansbeam", "TrainProbes", o.TrainProbes, "0 (the default, %d) or more", DefaultTrainProbes)
	}
	if err := o.kmeans().Validate(); err != nil {
		return fmt.Errorf("vocabulary: %w", err)
	}
	if o.Approx {
		// The forest also serves soft assignment's k nearest words.
		if err := o.forest().Validate(); err != nil {
			return fmt.Errorf("vocabulary: %w", err)
		}
	}
	return nil
}

// forest returns the forest options in force: o.Forest with every zero
// field taken from nn.DefaultForestOptions, and the seed from o.Seed,
// so that setting only the checks (--akm_checks) keeps the default trees.
func (o Options) forest() nn.ForestOptions {
	f, d := o.Forest, nn.DefaultForestOptions()
	if f.Trees == 0 {
		f.Trees = d.Trees
	}
	if f.LeafSize == 0 {
		f.LeafSize = d.LeafSize
	}
	if f.Checks == 0 {
		f.Checks = d.Checks
	}
	if f.Seed == 0 {
		f.Seed = o.Seed
	}
	return f
}

// DefaultTrainProbes is Options.TrainProbes when zero. Fewer lists miss
// more nearest words in an iteration, but a descriptor keeps its cluster
// unless one is nearer, and each iteration's lists are cut anew
// (nn.IVFOptions.ForIteration), so the misses do not accumulate. The
// objective on 50,000 descriptors of photos the sample did not come from
// (exact search), 4 lists against 8, each iteration at about 0.75 of
// the CPU:
//
//	words  sample  iterations  held-out objective, 4 / 8 lists
//	10⁴    5·10⁵   25          52,698.5 / 52,714.5 (k-means‖ seeding)
//	10⁵    4·10⁵   4           48,030.9 / 48,048.2
//	10⁶    2·10⁷   2           35,312.4 / 35,306.9 (+0.016%)
//
// The sample's own objective, measured through the same approximate
// search, stays 0.6–1.5% above 8 lists' at 10⁶ words: it counts the
// misses, which the held-out objective does not.
const DefaultTrainProbes = 4

// trainIVF returns the IVF options of Lloyd's iterations: ivf's with
// TrainProbes lists searched.
func (o Options) trainIVF() nn.IVFOptions {
	v := o.ivf()
	if o.TrainProbes > 0 {
		v.Probes = o.TrainProbes
	} else {
		v.Probes = min(v.Probes, DefaultTrainProbes)
	}
	return v
}

// ivf returns the IVF options in force, zero fields from
// nn.DefaultIVFOptions and the seed from o.Seed.
func (o Options) ivf() nn.IVFOptions {
	v, d := o.IVF, nn.DefaultIVFOptions()
	if v.Probes == 0 {
		v.Probes = d.Probes
	}
	if v.Seed == 0 {
		v.Seed = o.Seed
	}
	return v
}

// Indexes returns the options in force of the indexes a codebook trained
// with o is searched through, as its quantisation searches it: none for
// an exact vocabulary; for an approximate one the forest (soft words, and
// hard words without an IVF) and the IVF if it trains through one.
func (o Options) Indexes() (*nn.ForestOptions, *nn.IVFOptions) {
	if !o.Approx {
		return nil, nil
	}
	f := o.forest()
	if !o.useIVF() {
		return &f, nil
	}
	v := o.ivf()
	return &f, &v
}

// useIVF reports whether the vocabulary is trained, and quantised, through
// IVFs.
func (o Options) useIVF() bool { return o.Approx && !o.UseForest }

// kmeans returns the options of kmeans.Train that the vocabulary trains
// with. The distributed trainer always splits empty clusters, so it asks
// for ReseedSplit when it is the one training, and Train can reproduce it.
func (o Options) kmeans() kmeans.Options {
	k := kmeans.Options{K: o.K, MaxIter: o.MaxIter, Tol: o.Tol, Seed: o.Seed, Approx: o.Approx, Init: o.Init, InitSample: o.InitSample}
	if o.Approx {
		k.Forest = o.forest()
	}
	if o.useIVF() {
		k.Index, k.IVF = kmeans.IndexIVF, o.trainIVF()
	}
	if o.chunks() > 0 {
		k.Reseed = kmeans.ReseedSplit
	}
	return k
}

// Codebook is a trained vocabulary: K centroids of Dim dimensions, whose
// words are in files (Paths) and never in the element itself: the runner
// carries a codebook's names and figures, and each consumer reads the
// words from the files (ReadCentroids). Codebook elements never hold the
// words: an element holding them would be copied by the runner's element
// store, its gRPC buffers and each consumer's decoding (512 MB each at 10⁶
// words).
type Codebook struct {
	K, Dim int

	// Paths are the files that hold the words, formats.Word rows in word
	// order (CodebookName shards, written once, whole or not at all, to
	// Options.Output), and Content is formats.CentroidsContent of the
	// words, which a reader checks.
	Paths   []string
	Content string

	// Objective is the mean squared distance from the sampled descriptors
	// to their centroids (see kmeans.Result), Iterations the number of
	// centroid updates and Sampled the number of descriptors clustered.
	Objective  float64
	Iterations int
	Sampled    int

	// Seconds is the training time: of kmeans.Train on one worker, or
	// from the start of the initialisation to the end of the last
	// iteration when distributed.
	Seconds float64

	// Chunks is the number of chunks the sample was cut into when
	// distributed (Options.Chunks, adjusted by the sample's size; a
	// sample drawn in parts, each part's, its last short), 0 on one
	// worker: the vocabulary's units of work in the report.
	Chunks int

	// Converged reports whether training stopped before MaxIter (see
	// kmeans.Result).
	Converged bool

	// Approx reports that the vocabulary was trained by approximate
	// k-means with forests configured by Forest, which is then also a
	// sensible configuration for quantising against it with
	// nn.NewForest(Centroids, Dim, Forest).
	Approx bool
	Forest nn.ForestOptions

	// UseIVF reports that the approximate vocabulary was trained with IVFs
	// configured by IVF, which then quantise hard words against it:
	// kmeans.TrainIVF(Centroids, Dim, IVF).
	UseIVF bool
	IVF    nn.IVFOptions
}

// Search returns the options of the search the codebook's words are
// assigned through, as it was trained (kmeans.NewAssigner,
// kmeans.QuantizerIndexes).
func (cb Codebook) Search() kmeans.AssignOptions {
	return kmeans.AssignOptions{Approx: cb.Approx, Forest: cb.Forest, UseIVF: cb.UseIVF, IVF: cb.IVF}
}

// VocabularyOfParts samples at most opt.Sample (or DefaultSample)
// descriptors from the
// features written part by part (PCollection<formats.Part>, package
// describebeam) and clusters them into opt.K words. The result is a
// single-element PCollection<Codebook>.
//
// The sample keeps the descriptors with the smallest hash of (seed, image,
// index): a bottom-k sample, so it is uniform over all descriptors, and
// merging partial samples in any order or grouping gives the same set. That
// makes the vocabulary the same for a given seed whatever the runner's
// parallelism. Each part's file is read by one DoFn that keeps only the
// descriptors whose priority falls under a cut-off, so no worker holds
// more than a few times the sample. The cut-off is 4·Sample/T of the
// priority range, T the descriptors of all parts; the descriptors under it
// number 4·Sample on average, and the sample is exact whenever they number
// at least Sample (with Sample ≥ 1,000 the chance they do not is below
// 1e-300).
//
// With opt.Chunks > 0, or a sample above opt.WholeSample, training is
// distributed over the sample's chunks (see the package documentation).
// With opt.Approx it gives the codebook that one worker gives; exact
// training differs only in that one worker re-seeds empty clusters at the
// farthest descriptors, where the distributed trainer splits large
// clusters.
//
// Invalid options, like a sample smaller than K, fail the pipeline when it
// runs, with the reason; call opt.Validate to check them beforehand. So
// does an empty opt.Output.
func VocabularyOfParts(s beam.Scope, parts beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("kmeans.Vocabulary")
	if opt.Output == "" {
		return failing(s, errNoOutput, beam.Create(s, true))
	}
	if opt.inParts() {
		return ofParts(s, parts, opt, beam.Create(s, true), beam.Impulse(s))
	}
	return fromSample(s, sampleOfParts(s, parts, opt.sample(), opt.Seed, opt.PartLoads), opt, beam.Impulse(s))
}

// sampleOfParts draws the bottom-n sample of the descriptors of the
// features parts under seed (see VocabularyOfParts), reading at most loads
// parts at once in a process (0: no limit): PCollection<sample>.
func sampleOfParts(s beam.Scope, parts beam.PCollection, n int, seed uint64, loads int) beam.PCollection {
	total := stats.Sum(s, beam.ParDo(s, keypointsFn, parts))
	per := beam.ParDo(s, &samplePartFn{Max: max(n, 0), Seed: seed, Loads: loads}, onekeybeam.Pair(s, parts, total, "the descriptors' total"))
	return beam.Combine(s, &mergeSampleFn{Max: max(n, 0)}, per)
}

func keypointsFn(p formats.Part) int64 { return p.Keypoints }

// samplePartFn samples the descriptors of one features part.
type samplePartFn struct {
	Max   int
	Seed  uint64
	Loads int
}

func (f *samplePartFn) ProcessElement(ctx context.Context, p formats.Part, total int64) (sample, error) {
	cut := cutOff(f.Max, total)
	release, err := slots.Acquire(ctx, "vocabulary.part", f.Loads)
	defer release()
	if err != nil {
		return sample{}, fmt.Errorf("vocabulary: part %d: %w", p.Part, err)
	}
	add := &sampleFn{Max: f.Max, Seed: f.Seed}
	var a sample
	err = fileio.ReadEach(ctx, p.Path, func(feat *formats.Features) error {
		a = add.addBelow(a, *feat, cut)
		return nil
	})
	if err != nil {
		return sample{}, fmt.Errorf("vocabulary: %w", err)
	}
	return a.trim(f.Max), nil
}

// mergeSampleFn merges the samples of parts.
type mergeSampleFn struct{ Max int }

func (f *mergeSampleFn) CreateAccumulator() sample { return sample{} }
func (f *mergeSampleFn) AddInput(a, b sample) sample {
	return (&sampleFn{Max: f.Max}).MergeAccumulators(a, b)
}
func (f *mergeSampleFn) MergeAccumulators(a, b sample) sample {
	return (&sampleFn{Max: f.Max}).MergeAccumulators(a, b)
}
func (f *mergeSampleFn) ExtractOutput(a sample) sample { return a.trim(f.Max) }

// fromSample trains the codebook on the sample smp (PCollection<sample>).
// start drives the stages that have no main input of their own (the
// updates of distributed training and the codebook made from the last):
// an Impulse, or, for VocabularyOfPartsIf, a collection that is empty when
// no vocabulary is to be trained, so that with no sample nothing runs.
func fromSample(s beam.Scope, smp beam.PCollection, opt Options, start beam.PCollection) beam.PCollection {
	if err := opt.Validate(); err != nil {
		return beam.ParDo(s, &failFn{Err: err.Error()}, smp)
	}
	if opt.chunks() == 0 {
		return beam.ParDo(s, &trainFn{Opt: opt, Output: opt.Output}, smp)
	}
	dir := opt.scratchDir()
	seeding := opt.kmeans().InitMethod() == kmeans.InitParallel
	chunks := beam.Reshuffle(s, beam.ParDo(s, &writeChunksFn{Chunks: opt.chunks(), K: opt.K, Dir: dir, Seeding: seeding}, smp))
	var st beam.PCollection
	if seeding {
		st = initialCentroids(s, chunks, opt, dir, start)
	} else {
		st = beam.ParDo(s, &initFn{Opt: opt, Dir: dir, Words: opt.initialWords()}, smp)
	}
	return train(s, st, chunks, opt, dir, start)
}

// train runs the distributed Lloyd's iterations from the initial state st
// (PCollection<state>, its parts) on the sample's chunks
// (PCollection<chunk>), whose files are in the scratch directory dir, and
// returns the codebook: as stages of the graph, or in one step (loopFn)
// if opt.oneStep().
func train(s beam.Scope, st, chunks beam.PCollection, opt Options, dir string, start beam.PCollection) beam.PCollection {
	if opt.oneStep() {
		// The state and the chunks reach the step as its one main input
		// element, not as side inputs, and its codebook leaves through a
		// Reshuffle, so that no consumer with side inputs (Distortion) is
		// fused into its stage (onekeybeam says why).
		one := onekeybeam.Group(s, st, chunks)
		return beam.Reshuffle(s, beam.ParDo(s, &loopFn{MaxIter: opt.MaxIter, Tol: opt.Tol, Dir: dir, Output: opt.Output, Approx: opt.Approx, Forest: opt.forest(), UseIVF: opt.useIVF(), IVF: opt.trainIVF()}, one))
	}
	total := beam.Combine(s, chunkTotalFn{}, chunks)
	words := opt.shardWords()
	shards := beam.Reshuffle(s, beam.ParDo(s, &shardsFn{K: opt.K, Words: words}, start))
	marks := beam.ParDo(s, shardMarkFn, shards)
	forest, ivf := opt.forest(), opt.trainIVF()
	for i := 0; i <= opt.MaxIter; i++ {
		is := s.Scope(fmt.Sprintf("iteration%02d", i))
		written := beam.ParDo(is, &writeStateFn{Iter: i, Dir: dir}, start, beam.SideInput{Input: st})
		paired := onekeybeam.Pair(is, chunks, written, fmt.Sprintf("the state of iteration %d", i))
		next, files := beam.ParDo2(is, &assignFn{Iter: i, Last: opt.MaxIter, Dir: dir, Approx: opt.Approx, Forest: forest, UseIVF: opt.useIVF(), IVF: ivf, Words: words, Rows: opt.sumsRows()}, paired)
		byShardFiles := beam.GroupByKey(is, beam.Flatten(is, files, marks))
		counts := beam.ParDo(is, &mergeSumsFn{Iter: i, K: opt.K, Words: words, Dir: dir}, byShardFiles)
		pl := beam.ParDo(is, &planFn{Iter: i, MaxIter: opt.MaxIter, Tol: opt.Tol}, start, beam.SideInput{Input: written}, beam.SideInput{Input: counts})
		updated, rows := beam.ParDo2(is, &shardFn{Iter: i, Words: words, Dir: dir}, shards, beam.SideInput{Input: written}, beam.SideInput{Input: pl})
		split := beam.ParDo(is, &splitRowsFn{Iter: i, Dir: dir}, start, beam.SideInput{Input: pl}, beam.SideInput{Input: rows})
		st = beam.Flatten(is, updated, split)
		chunks = next
	}
	return beam.ParDo(s, &codebookFn{Dir: dir, Output: opt.Output, Words: words}, start, beam.SideInput{Input: st}, beam.SideInput{Input: total})
}

// sample is the accumulator of the bottom-k sample: Prio[i] belongs to the
// descriptor Desc[i*128:(i+1)*128].
type sample struct {
	Prio []uint64
	Desc []byte
}

type sampleFn struct {
	Max  int
	Seed uint64
}

func (f *sampleFn) CreateAccumulator() sample { return sample{} }

func (f *sampleFn) AddInput(a sample, feat formats.Features) sample {
	return f.addBelow(a, feat, math.MaxUint64)
}

// addBelow adds the descriptors of feat whose priority is below cut
// (every descriptor if cut is math.MaxUint64).
func (f *sampleFn) addBelow(a sample, feat formats.Features, cut uint64) sample {
	priorities(f.Seed, feat, func(prio uint64, d []byte) {
		if prio < cut || cut == math.MaxUint64 {
			a.Prio = append(a.Prio, prio)
			a.Desc = append(a.Desc, d...)
		}
	})
	if len(a.Prio) > 2*f.Max {
		a = a.trim(f.Max)
	}
	return a
}

// priorities calls fn with the sampling priority under seed of each
// descriptor of feat, in order: a hash of (seed, image, index).
func priorities(seed uint64, feat formats.Features, fn func(prio uint64, desc []byte)) {
	base := priorityBase(seed, feat.ImageID)
	for i, d := range feat.Descriptors {
		if len(d) != formats.DescriptorSize {
			continue
		}
		fn(priority(base, i), d)
	}
}

// priority is the priority of an image's descriptor i, from the image's
// priorityBase: every pass that draws the sample computes it here.
func priority(base uint64, i int) uint64 { return splitmix.Mix64(base + uint64(i)) }

// priorityBase is the hash of (seed, image) from which the priorities of
// the image's descriptors follow (priority).
func priorityBase(seed uint64, image string) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], seed)
	h.Write(buf[:])
	h.Write([]byte(image))
	return h.Sum64()
}

func (f *sampleFn) MergeAccumulators(a, b sample) sample {
	a.Prio = append(a.Prio, b.Prio...)
	a.Desc = append(a.Desc, b.Desc...)
	return a.trim(f.Max)
}

func (f *sampleFn) ExtractOutput(a sample) sample { return a.trim(f.Max) }

// trim keeps the max entries of smallest priority, in priority order (ties
// by descriptor bytes), so the output does not depend on merge order.
func (a sample) trim(max int) sample {
	const d = formats.DescriptorSize
	idx := make([]int, len(a.Prio))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(x, y int) bool {
		i, j := idx[x], idx[y]
		if a.Prio[i] != a.Prio[j] {
			return a.Prio[i] < a.Prio[j]
		}
		return string(a.Desc[i*d:(i+1)*d]) < string(a.Desc[j*d:(j+1)*d])
	})
	if len(idx) > max {
		idx = idx[:max]
	}
	out := sample{Prio: make([]uint64, len(idx)), Desc: make([]byte, len(idx)*d)}
	for k, i := range idx {
		out.Prio[k] = a.Prio[i]
		copy(out.Desc[k*d:], a.Desc[i*d:(i+1)*d])
	}
	return out
}

// failing returns a PCollection<Codebook> that fails the pipeline with
// err, found while building it, when build (a single-element
// PCollection<bool>) is true, and is empty otherwise.
func failing(s beam.Scope, err error, build beam.PCollection) beam.PCollection {
	return beam.ParDo(s, &failFn{Err: err.Error()}, beam.ParDo(s, sampleIfFn, beam.Create(s, sample{}), beam.SideInput{Input: build}))
}

// failFn fails the pipeline with an error found while building it.
type failFn struct{ Err string }

func (f *failFn) ProcessElement(sample) (Codebook, error) {
	return Codebook{}, fmt.Errorf("%s", f.Err)
}

// floats converts the sample's descriptors to float32, or reports that there
// are too few for k words.
func floats(smp sample, k int) ([]float32, error) {
	if n := len(smp.Prio); n < k {
		return nil, tooFew(n, k)
	}
	return byteFloats(smp.Desc), nil
}

// tooFew is the error of a sample of n descriptors for k words, n < k.
func tooFew(n, k int) error {
	return fmt.Errorf("vocabulary: %d descriptors sampled, fewer than the %d words asked for: lower --vocab or give more images", n, k)
}

// byteFloats returns the descriptor bytes b as float32 values.
func byteFloats(b []byte) []float32 { return floatsInto(nil, b) }

// floatsInto returns the descriptor bytes b as float32 values in x,
// grown to len(b), so that a loop over chunks reuses one buffer.
func floatsInto(x []float32, b []byte) []float32 {
	x = slices.Grow(x[:0], len(b))[:len(b)]
	for i, v := range b {
		x[i] = float32(v)
	}
	return x
}

// trainProgress returns the kmeans.Options.Progress of a vocabulary of k
// words trained from n descriptors since start, which writes its lines
// with logf and reads the time from now: the start of the seeding, then
// how far it has got at most once every period of tr and when it is done
// (a progress.Meter: k-means++ at 10⁴ words can take minutes), then a line
// per Lloyd iteration with its objective and changes.
func trainProgress(tr *progress.Tracker, k, n int, start time.Time, now func() time.Time, logf func(string, ...any)) func(kmeans.Progress) {
	logf("vocabulary: choosing %d initial centroids from %d descriptors", k, n)
	return progressLines(tr, k, start, now, logf)
}

// progressLines is trainProgress without its opening line.
func progressLines(tr *progress.Tracker, k int, start time.Time, now func() time.Time, logf func(string, ...any)) func(kmeans.Progress) {
	seeding := tr.Meter("vocabulary seeding", "centroids", int64(k), start)
	return func(p kmeans.Progress) {
		if p.Round > 0 {
			logf("vocabulary: seeding round %d of %d: %d candidate centroids, %s since it started", p.Round, p.Rounds, p.Candidates, progress.Duration(now().Sub(start)))
			return
		}
		if p.Seeding {
			if line, ok := seeding.Done(int64(p.Seeded), now()); ok {
				logf("progress: %s", line)
			}
			return
		}
		logf("vocabulary: iteration %d: mean squared distance %.1f, %d labels changed, %d empty clusters re-seeded, %s since training started",
			p.Iteration, p.Objective, p.Changed, p.Reseeded, progress.Duration(now().Sub(start)))
	}
}

// logProgress is trainProgress writing to the worker's log, at the pace
// of progress.Default.
func logProgress(ctx context.Context, k, n int, start time.Time) func(kmeans.Progress) {
	return trainProgress(progress.Default, k, n, start, time.Now, func(format string, a ...any) { log.Infof(ctx, format, a...) })
}

// trainFn trains the codebook on the whole sample on one worker and
// writes its words to Output (Opt.Output is not serialised with the DoFn).
type trainFn struct {
	Opt    Options
	Output string
}

func (f *trainFn) ProcessElement(ctx context.Context, smp sample) (Codebook, error) {
	const d = formats.DescriptorSize
	data, err := floats(smp, f.Opt.K)
	if err != nil {
		return Codebook{}, err
	}
	start := time.Now()
	opt := f.Opt.kmeans()
	opt.Progress = logProgress(ctx, f.Opt.K, len(smp.Prio), start)
	res, err := kmeans.Train(data, d, opt)
	if err != nil {
		return Codebook{}, fmt.Errorf("vocabulary: %w", err)
	}
	secs := time.Since(start).Seconds()
	n := len(smp.Prio)
	log.Infof(ctx, "vocabulary: %d words from %d descriptors in %d iterations, %.1fs, mean squared distance %.1f", res.K, n, res.Iterations, secs, res.Objective)
	cb := Codebook{K: res.K, Dim: d, Objective: res.Objective, Iterations: res.Iterations, Sampled: n, Seconds: secs, Converged: res.Converged, Approx: f.Opt.Approx}
	if cb.Approx {
		cb.Forest = f.Opt.forest()
	}
	if f.Opt.useIVF() {
		cb.UseIVF, cb.IVF = true, f.Opt.ivf()
	}
	return cb.write(ctx, f.Output, wholeBlock(res.Centroids))
}
