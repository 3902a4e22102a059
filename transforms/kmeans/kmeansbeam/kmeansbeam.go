// Package kmeansbeam is the Beam wrapper of package kmeans: it draws a
// bounded, deterministic sample of SIFT descriptors from every image and
// clusters it into a visual vocabulary, on one worker or as distributed
// Lloyd iterations.
//
// # Distributed training
//
// With Options.Chunks > 0 the sample is cut into that many chunks — more if
// that keeps every chunk within 4,096 descriptors — which are reshuffled so
// that the runner can spread them over workers, and Lloyd's iterations
// become stages of the graph, unrolled MaxIter+1 times (the graph of a Beam
// batch job is fixed before it runs). Iteration i is
//
//	chunks_i+1, partial sums_i = ParDo(assign_i)(chunks_i; side input: state_i)
//	sums_i                     = CombinePerKey(merge)(partial sums_i)
//	state_i+1                  = ParDo(update_i)(impulse; side inputs: state_i, sums_i)
//
// where state_0 holds the initial centroids (kmeans.Initialize on the
// sample, on one worker) and a state is the current centroids, iteration,
// objective and whether training has converged. A state travels as parts of
// 512 centroids, and sums as blocks of 256 words keyed by block, so that no
// element of the loop exceeds about half a megabyte (see Memory).
//
// assign_i assigns each descriptor of its chunks to the nearest centroid of
// state_i — through a kmeans.IVF built with IVFOptions.ForIteration(i) if
// Approx (a kmeans.Forest built with ForestOptions.ForIteration(i) with
// UseForest), which keeps a descriptor's previous cluster unless it finds a
// nearer one, exactly as kmeans.Train does — and re-emits the chunk with
// the new labels for iteration i+1. It keeps per-bundle sparse sums: the
// integer sum and count of the descriptors of every cluster the bundle
// touched, their squared distances and how many labels changed, and emits
// them once per bundle, in FinishBundle, block by block. The forest (or IVF) is built
// once per worker process and iteration: bundles share it through a
// one-slot cache keyed by the iteration, the forest options and a
// fingerprint of the centroids, so a worker holds one forest at a time. A
// converged state makes assign emit nothing.
//
// merge adds partial sums cluster by cluster. Descriptors are bytes, so the
// sums are integers, exact in any order (and small, so that Beam's varint
// coding sends them in about 2 bytes a coordinate), and the squared
// distances are summed in fixed point (units of 2⁻⁸): every total is
// independent of how the runner bundles, splits and merges. Hence the
// codebook does not depend on Chunks or on the runner, and for the same
// sample its centroids, iterations and convergence are those of
// kmeans.Train with ReseedSplit (the objective differs by the fixed-point
// rounding, at most 2⁻⁹).
//
// update_i applies kmeans.Train's stopping rules to state_i — J reached zero,
// no label changed and nothing was re-seeded, the relative improvement of J
// is at most Tol, or MaxIter updates were made — and otherwise moves every
// centroid to the mean of its cluster and re-seeds empty clusters with
// kmeans.Split, which needs only the counts. A converged state passes
// through the remaining stages unchanged.
//
// # Memory
//
// The loop's elements are kept small because of what outlives a bundle. The
// Go SDK harness caches every bundle plan it builds, with its DoFns, for the
// rest of the job, and each DataSink of a plan keeps an encoding buffer as
// large as the largest element it has emitted (up to twice that); the
// unrolled graph has three stages per iteration and a runner may run
// several bundles of a stage at once, each with its own plan (Prism ran 2 to
// 6 per assign stage). With whole chunks (3.2 MB at 8 chunks of the ETH-80
// sample), a bundle's sums as one element (10 MB at 10K words) and the state
// as one element (5 MB), and assign's scratch kept in the cached DoFns, that
// pinned about 300 MB per iteration: 3.4 GB of live heap after 10
// iterations and 7.3 GB of RSS for a 10K-word vocabulary of 200K
// descriptors on Prism. Now a chunk element is at most 540 KB, a block of
// sums at most 265 KB (about a quarter of that: the sums are integers, which
// Beam codes as varints) and a part of a state 256 KB, assign drops its
// state, sums and scratch in FinishBundle, and the same run leaves about
// 4 MB per iteration behind. Prism itself holds only the collections in
// flight, about 100 MB for that run whatever the number of iterations.
//
// Per worker, with D = 128 and K words: the state side input is 512·K bytes
// of float32 centroids, assembled once per bundle; the forest adds
// Trees·(4·K bytes of leaf indices + 16 bytes per node), about 9 bytes per
// word per tree with 8-centroid leaves; each assigning goroutine keeps a
// kmeans.Search of 4·K bytes; a bundle's partial sums take 1,036 bytes per
// word it touched plus a 4·K-byte index; a chunk takes 132 bytes per
// descriptor (bytes and label) and, while assigned, a float32 copy of 512
// bytes per descriptor. Merge workers hold 1,036 bytes per word of the
// blocks they merge; the update worker holds the counts, the means and the
// centroids, 1,032·K bytes. With the default 8 trees:
//
//	K          centroids  forest   update   assigning worker
//	10,000        5.1 MB   0.8 MB    10 MB   ~ 6 MB + bundle
//	100,000        51 MB   7.6 MB   103 MB   ~ 60 MB + bundle
//	1,000,000     512 MB    76 MB   1.0 GB   ~ 0.6 GB + bundle
//
// where "bundle" is at most min(K, descriptors in the bundle)·1,036 bytes of
// sums, 10 MB for a bundle of 10,000 descriptors or more at K = 10,000, and
// 2.6 MB for the chunk being assigned. The single-worker path (Chunks = 0)
// holds the whole sample as float32 (512 bytes per descriptor), labels and
// distances (8 bytes each), dense sums and one forest.
//
// Approx without UseForest builds a kmeans.IVF instead of the forest: a
// packed copy of the centroids (512·K bytes, 512 MB at a million words)
// plus 4·K bytes of indices, cached like the forest, and about 400 kB of
// kmeans.IVFScratch per assigning goroutine; an assigning worker then needs
// about 1.1 GB at K = 10⁶ instead of 0.6 GB.
package kmeansbeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/internal/splitmix"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/progress"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*sampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sample)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*trainFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Codebook)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*failFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*initFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*splitFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*chunk)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*state)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*partial)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*assignFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*updateFn)(nil)).Elem())
	beam.RegisterFunction(codebookFn)
	beam.RegisterFunction(keypointsFn)
	beam.RegisterType(reflect.TypeOf((*samplePartFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeSampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
	beam.RegisterFunction(wordsFn)
}

// Options configures the vocabulary.
type Options struct {
	// K is the number of visual words.
	K int
	// Sample bounds the number of descriptors clustered.
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

	// Approx trains by approximate k-means, assigning through a
	// kmeans.IVF (or, with UseForest, a kmeans.Forest) rebuilt over the
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
	// kmeans.DefaultForestOptions(), and a zero seed is Seed.
	Forest kmeans.ForestOptions

	// IVF configures the IVFs of Approx without UseForest. A zero Probes
	// takes kmeans.DefaultIVFOptions()'s, and a zero seed is Seed.
	IVF kmeans.IVFOptions

	// Chunks, if positive, cuts the sample into that many chunks, or more
	// so that none exceeds 4,096 descriptors, and runs Lloyd's iterations
	// as Beam stages (see the package documentation), so that assignment
	// runs where the chunks are; a runner can use as many workers as there
	// are chunks. Zero trains on one worker with kmeans.Train.
	Chunks int

	// Init and InitSample choose the initial centroids, as in
	// kmeans.Options: by default k-means++ on the whole sample below
	// kmeans.KMeansPPMaxK words and random sample descriptors above.
	Init       kmeans.Init
	InitSample int
}

// Validate reports whether o is usable.
func (o Options) Validate() error {
	if o.Sample < o.K {
		return fmt.Errorf("vocabulary: Sample = %d, want at least K = %d", o.Sample, o.K)
	}
	if o.Chunks < 0 {
		return fmt.Errorf("vocabulary: Chunks = %d, want 0 (one worker) or more", o.Chunks)
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
// field taken from kmeans.DefaultForestOptions, and the seed from o.Seed,
// so that setting only the checks (--akm_checks) keeps the default trees.
func (o Options) forest() kmeans.ForestOptions {
	f, d := o.Forest, kmeans.DefaultForestOptions()
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

// ivf returns the IVF options in force, zero fields from
// kmeans.DefaultIVFOptions and the seed from o.Seed.
func (o Options) ivf() kmeans.IVFOptions {
	v, d := o.IVF, kmeans.DefaultIVFOptions()
	if v.Probes == 0 {
		v.Probes = d.Probes
	}
	if v.Seed == 0 {
		v.Seed = o.Seed
	}
	return v
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
		k.Index, k.IVF = kmeans.IndexIVF, o.ivf()
	}
	if o.Chunks > 0 {
		k.Reseed = kmeans.ReseedSplit
	}
	return k
}

// Codebook is a trained vocabulary: K centroids of Dim dimensions, row-major.
type Codebook struct {
	K, Dim    int
	Centroids []float32

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
	// distributed (Options.Chunks, adjusted by the sample's size), 0 on
	// one worker: the vocabulary's units of work in the report.
	Chunks int

	// Converged reports whether training stopped before MaxIter (see
	// kmeans.Result).
	Converged bool

	// Approx reports that the vocabulary was trained by approximate
	// k-means with forests configured by Forest, which is then also a
	// sensible configuration for quantising against it with
	// kmeans.NewForest(Centroids, Dim, Forest).
	Approx bool
	Forest kmeans.ForestOptions

	// UseIVF reports that the approximate vocabulary was trained with IVFs
	// configured by IVF, which then quantise hard words against it:
	// kmeans.NewIVF(Centroids, Dim, IVF).
	UseIVF bool
	IVF    kmeans.IVFOptions
}

// Vocabulary samples at most opt.Sample descriptors from features and
// clusters them into opt.K words. The result is a single-element
// PCollection<Codebook>.
//
// The sample keeps the descriptors with the smallest hash of (seed, image,
// index): a bottom-k sample, so it is uniform over all descriptors, and
// merging partial samples in any order or grouping gives the same set. That
// makes the vocabulary the same for a given seed whatever the runner's
// parallelism.
//
// With opt.Chunks > 0 training is distributed over the sample's chunks (see
// the package documentation). With opt.Approx it gives the codebook that
// opt.Chunks = 0 gives; exact training differs only in that one worker
// re-seeds empty clusters at the farthest descriptors, as it always has,
// where the distributed trainer splits large clusters.
//
// Invalid options, like a sample smaller than K, fail the pipeline when it
// runs, with the reason; call opt.Validate to check them beforehand.
func Vocabulary(s beam.Scope, features beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("kmeans.Vocabulary")
	smp := beam.Combine(s, &sampleFn{Max: max(opt.Sample, 0), Seed: opt.Seed}, features)
	return fromSample(s, smp, opt, beam.Impulse(s))
}

// VocabularyOfParts is Vocabulary over features written part by part
// (PCollection<formats.Part>, package describebeam): each part's file is
// read by one DoFn that keeps only the descriptors whose priority falls
// under a cut-off, so no worker holds more than a few times the sample, and
// the sample is the one Vocabulary draws: the opt.Sample descriptors of
// smallest priority. The cut-off is 4·Sample/T of the priority range, T
// the descriptors of all parts; the descriptors under it number 4·Sample
// on average, and the sample is exact whenever they number at least
// Sample (with Sample ≥ 1,000 the chance they do not is below 1e-300).
func VocabularyOfParts(s beam.Scope, parts beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("kmeans.Vocabulary")
	return fromSample(s, sampleOfParts(s, parts, opt.Sample, opt.Seed, opt.PartLoads), opt, beam.Impulse(s))
}

// sampleOfParts draws the bottom-n sample of the descriptors of the
// features parts under seed (see VocabularyOfParts), reading at most loads
// parts at once in a process (0: no limit): PCollection<sample>.
func sampleOfParts(s beam.Scope, parts beam.PCollection, n int, seed uint64, loads int) beam.PCollection {
	total := stats.Sum(s, beam.ParDo(s, keypointsFn, parts))
	per := beam.ParDo(s, &samplePartFn{Max: max(n, 0), Seed: seed, Loads: loads}, beam.Reshuffle(s, parts), beam.SideInput{Input: total})
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
	cut := uint64(math.MaxUint64)
	if frac := 4 * float64(f.Max) / float64(max(total, 1)); frac < 1 {
		cut = uint64(frac * math.MaxUint64)
	}
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
	if opt.Chunks == 0 {
		return beam.ParDo(s, &trainFn{Opt: opt}, smp)
	}
	st := beam.ParDo(s, &initFn{Opt: opt}, smp)
	chunks := beam.Reshuffle(s, beam.ParDo(s, &splitFn{Chunks: opt.Chunks}, smp))
	forest, ivf := opt.forest(), opt.ivf()
	for i := 0; i <= opt.MaxIter; i++ {
		is := s.Scope(fmt.Sprintf("iteration%02d", i))
		next, parts := beam.ParDo2(is, &assignFn{Iter: i, Approx: opt.Approx, Forest: forest, UseIVF: opt.useIVF(), IVF: ivf}, chunks, beam.SideInput{Input: st})
		sums := beam.CombinePerKey(is, &mergeFn{}, parts)
		st = beam.ParDo(is, &updateFn{Iter: i, MaxIter: opt.MaxIter, Tol: opt.Tol}, start, beam.SideInput{Input: st}, beam.SideInput{Input: sums})
		chunks = next
	}
	return beam.ParDo(s, codebookFn, start, beam.SideInput{Input: st})
}

// Words flattens a codebook into its Parquet rows.
func Words(s beam.Scope, codebook beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("kmeans.Words"), wordsFn, codebook)
}

func wordsFn(cb Codebook, emit func(formats.Word)) {
	for k := 0; k < cb.K; k++ {
		emit(formats.Word{WordID: uint32(k), Centroid: cb.Centroids[k*cb.Dim : (k+1)*cb.Dim]})
	}
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
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], f.Seed)
	h.Write(buf[:])
	h.Write([]byte(feat.ImageID))
	base := h.Sum64()
	for i, d := range feat.Descriptors {
		if len(d) != formats.DescriptorSize {
			continue
		}
		prio := splitmix.Mix64(base + uint64(i))
		if prio >= cut && cut != math.MaxUint64 {
			continue
		}
		a.Prio = append(a.Prio, prio)
		a.Desc = append(a.Desc, d...)
	}
	if len(a.Prio) > 2*f.Max {
		a = a.trim(f.Max)
	}
	return a
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

// failFn fails the pipeline with an error found while building it.
type failFn struct{ Err string }

func (f *failFn) ProcessElement(sample) (Codebook, error) {
	return Codebook{}, fmt.Errorf("%s", f.Err)
}

// floats converts the sample's descriptors to float32, or reports that there
// are too few for k words.
func floats(smp sample, k int) ([]float32, error) {
	n := len(smp.Prio)
	if n < k {
		return nil, fmt.Errorf("vocabulary: %d descriptors sampled, fewer than the %d words asked for: lower --vocab or give more images", n, k)
	}
	data := make([]float32, len(smp.Desc))
	for i, b := range smp.Desc {
		data[i] = float32(b)
	}
	return data, nil
}

// trainProgress returns the kmeans.Options.Progress of a vocabulary of k
// words trained from n descriptors since start, which writes its lines
// with logf and reads the time from now: the start of the seeding, then
// how far it has got at most once every period of tr and when it is done
// (a progress.Meter: k-means++ at 10⁴ words can take minutes), then a line
// per Lloyd iteration with its objective and changes.
func trainProgress(tr *progress.Tracker, k, n int, start time.Time, now func() time.Time, logf func(string, ...any)) func(kmeans.Progress) {
	logf("vocabulary: choosing %d initial centroids from %d descriptors", k, n)
	seeding := tr.Meter("vocabulary seeding", "centroids", int64(k), start)
	return func(p kmeans.Progress) {
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

type trainFn struct{ Opt Options }

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
	cb := Codebook{K: res.K, Dim: d, Centroids: res.Centroids, Objective: res.Objective, Iterations: res.Iterations, Sampled: n, Seconds: secs, Converged: res.Converged, Approx: f.Opt.Approx}
	if cb.Approx {
		cb.Forest = f.Opt.forest()
	}
	if f.Opt.useIVF() {
		cb.UseIVF, cb.IVF = true, f.Opt.ivf()
	}
	return cb, nil
}

// state is the trainer's state between iterations: the centroids of
// iteration Iter (after Iter updates).
//
// A state travels as parts of at most stateRows centroids (see maxChunk for
// why): part Block holds the centroids from Block·stateRows on, and every
// part repeats the other fields.
type state struct {
	Iter      int
	K, Dim    int
	Block     int
	Centroids []float32
	// Fingerprint identifies Centroids for the forest cache.
	Fingerprint uint64
	// Objective is J of Centroids once HaveObjective; Prev is J of the
	// previous iteration's centroids, if Iter > 0.
	Objective     float64
	HaveObjective bool
	Prev          float64
	Converged     bool
	// Reseeded reports that the last update had empty clusters.
	Reseeded bool
	Sampled  int
	Approx   bool
	Forest   kmeans.ForestOptions
	UseIVF   bool
	IVF      kmeans.IVFOptions
	// Start is when training started, in Unix nanoseconds.
	Start int64
	// Chunks is the number of chunks of the sample (chunkCount).
	Chunks int
}

// stateRows is the number of centroids in a part of a state: 256 KB of
// float32 at D = 128.
const stateRows = 512

// parts cuts st into its parts, which share st's centroids, and emits them.
func (st state) parts(emit func(state)) {
	for b := 0; b == 0 || b*stateRows < st.K; b++ {
		p := st
		p.Block = b
		p.Centroids = st.Centroids[min(b*stateRows, st.K)*st.Dim : min((b+1)*stateRows, st.K)*st.Dim]
		emit(p)
	}
}

// readState assembles the state whose parts iter yields. It reports false
// if there are none.
func readState(iter func(*state) bool) (state, bool, error) {
	var st, p state
	var seen []bool
	n, rows := 0, 0
	for iter(&p) {
		if n == 0 {
			st = p
			st.Block = 0
			st.Centroids = make([]float32, p.K*p.Dim)
			seen = make([]bool, (p.K+stateRows-1)/stateRows)
		}
		n++
		lo := p.Block * stateRows * p.Dim
		switch {
		case p.Iter != st.Iter || p.K != st.K || p.Dim != st.Dim || p.Fingerprint != st.Fingerprint || p.Converged != st.Converged:
			return state{}, false, fmt.Errorf("vocabulary: parts of the states of iterations %d and %d mixed", st.Iter, p.Iter)
		case p.Block < 0 || p.Block >= len(seen) || seen[p.Block] || p.Dim <= 0 || len(p.Centroids)%p.Dim != 0 || lo+len(p.Centroids) > len(st.Centroids):
			return state{}, false, fmt.Errorf("vocabulary: iteration %d: part %d of the state is repeated or malformed", st.Iter, p.Block)
		}
		seen[p.Block] = true
		copy(st.Centroids[lo:], p.Centroids)
		rows += len(p.Centroids) / p.Dim
	}
	if n == 0 {
		return state{}, false, nil
	}
	if rows != st.K {
		return state{}, false, fmt.Errorf("vocabulary: iteration %d: the state has %d of its %d centroids", st.Iter, rows, st.K)
	}
	return st, true, nil
}

// fingerprint is the FNV-1a hash of the centroids' bits.
func fingerprint(c []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range c {
		b := math.Float32bits(v)
		for range 4 {
			h = (h ^ uint64(b&0xff)) * 1099511628211
			b >>= 8
		}
	}
	return h
}

// initFn chooses the initial centroids on the whole sample, on one worker.
type initFn struct{ Opt Options }

func (f *initFn) ProcessElement(ctx context.Context, smp sample, emit func(state)) error {
	const d = formats.DescriptorSize
	start := time.Now()
	data, err := floats(smp, f.Opt.K)
	if err != nil {
		return err
	}
	opt := f.Opt.kmeans()
	opt.Progress = logProgress(ctx, f.Opt.K, len(smp.Prio), start)
	cent, err := kmeans.Initialize(data, d, opt)
	if err != nil {
		return fmt.Errorf("vocabulary: %w", err)
	}
	log.Infof(ctx, "vocabulary: %d initial centroids from %d descriptors in %.1fs", f.Opt.K, len(smp.Prio), time.Since(start).Seconds())
	st := state{K: f.Opt.K, Dim: d, Centroids: cent, Fingerprint: fingerprint(cent), Sampled: len(smp.Prio), Approx: f.Opt.Approx, Start: start.UnixNano(),
		Chunks: chunkCount(f.Opt.Chunks, len(smp.Prio))}
	if st.Approx {
		st.Forest = f.Opt.forest()
	}
	if f.Opt.useIVF() {
		st.UseIVF, st.IVF = true, f.Opt.ivf()
	}
	st.parts(emit)
	return nil
}

// chunk is a run of sample descriptors, 128 bytes each, and their labels
// (clusters) in the last iteration that assigned them; nil before the first.
// Index numbers the chunks of the sample, for error messages.
type chunk struct {
	Index  int
	Desc   []byte
	Labels []int32
}

// maxChunk bounds the descriptors of a chunk: 512 KB of bytes. The SDK
// harness keeps, in every cached bundle plan, an encoding buffer as large as
// the largest element the plan has emitted, and a runner like Prism runs
// every unrolled iteration as its own stage with plans of its own: large
// chunks would pin their size in each of them for the rest of the job.
const maxChunk = 4096

// splitFn cuts the sample into contiguous chunks of equal size (±1): Chunks
// of them, fewer if the sample has fewer descriptors, more if that is what
// keeps them within maxChunk descriptors.
type splitFn struct{ Chunks int }

func (f *splitFn) ProcessElement(smp sample, emit func(chunk)) {
	const d = formats.DescriptorSize
	n := len(smp.Prio)
	c := chunkCount(f.Chunks, n)
	for i := range c {
		lo, hi := i*n/c, (i+1)*n/c
		emit(chunk{Index: i, Desc: smp.Desc[lo*d : hi*d]})
	}
}

// chunkCount is the number of chunks splitFn cuts a sample of n
// descriptors into when asked for chunks.
func chunkCount(chunks, n int) int {
	return max(min(chunks, n), (n+maxChunk-1)/maxChunk)
}

// partial holds the sufficient statistics of a set of descriptors for the
// clusters they fall in: for Words[j] (ascending), Count[j] descriptors
// summing to Sum[j*Dim:(j+1)*Dim]. SSE is the total squared distance in
// units of 2⁻⁸, N the number of descriptors and Changed the number whose
// label changed. The zero partial (Dim = 0) is the empty sum.
//
// Partials travel keyed by block of sumBlock words, so that no element is
// larger than a block's sums (see maxChunk for why that matters); the
// scalars N, Changed and SSE ride on one block of each bundle, and only
// their totals over all blocks mean anything.
type partial struct {
	Iter    int
	Dim     int
	N       int64
	Changed int64
	SSE     int64
	Words   []int32
	Count   []int64
	Sum     []int64
}

// sseScale is the fixed-point unit of partial.SSE. A squared distance
// between 128-byte descriptors is below 128·255² < 2²³, so a descriptor adds
// less than 2³¹ units and 2³² descriptors cannot overflow; rounding to 2⁻⁸
// changes J by at most 2⁻⁹, nothing against SIFT distances of 10⁴–10⁵.
const sseScale = 256

// sumBlock is the number of words whose sums share a key: 256 KB of sums
// in memory at D = 128, a quarter of that or less encoded.
const sumBlock = 256

// blocks cuts p, whose words ascend, into the partials of words
// [b·sumBlock, (b+1)·sumBlock), keyed by b, and calls emit for each. The
// partials share p's arrays. The first carries p's N, Changed and SSE, the
// others zeros, so the totals over the blocks are p's.
func (p partial) blocks(emit func(int, partial)) {
	if len(p.Words) == 0 {
		emit(0, p)
		return
	}
	d := p.Dim
	for i := 0; i < len(p.Words); {
		key := int(p.Words[i]) / sumBlock
		j := i + 1
		for j < len(p.Words) && int(p.Words[j])/sumBlock == key {
			j++
		}
		b := partial{Iter: p.Iter, Dim: d, Words: p.Words[i:j], Count: p.Count[i:j], Sum: p.Sum[i*d : j*d]}
		if i == 0 {
			b.N, b.Changed, b.SSE = p.N, p.Changed, p.SSE
		}
		emit(key, b)
		i = j
	}
}

// merge returns the sum of a and b, which it may reuse.
func merge(a, b partial) partial {
	switch {
	case a.Dim == 0:
		return b
	case b.Dim == 0:
		return a
	case a.Iter != b.Iter || a.Dim != b.Dim:
		panic(fmt.Sprintf("vocabulary: merging sums of iteration %d, dim %d with iteration %d, dim %d", b.Iter, b.Dim, a.Iter, a.Dim))
	}
	d := a.Dim
	n := len(a.Words) + len(b.Words) // at most; shared words are fewer
	out := partial{Iter: a.Iter, Dim: d, N: a.N + b.N, Changed: a.Changed + b.Changed, SSE: a.SSE + b.SSE,
		Words: make([]int32, 0, n), Count: make([]int64, 0, n), Sum: make([]int64, 0, n*d)}
	i, j := 0, 0
	for i < len(a.Words) || j < len(b.Words) {
		switch {
		case j == len(b.Words) || (i < len(a.Words) && a.Words[i] < b.Words[j]):
			out.Words = append(out.Words, a.Words[i])
			out.Count = append(out.Count, a.Count[i])
			out.Sum = append(out.Sum, a.Sum[i*d:(i+1)*d]...)
			i++
		case i == len(a.Words) || b.Words[j] < a.Words[i]:
			out.Words = append(out.Words, b.Words[j])
			out.Count = append(out.Count, b.Count[j])
			out.Sum = append(out.Sum, b.Sum[j*d:(j+1)*d]...)
			j++
		default:
			out.Words = append(out.Words, a.Words[i])
			out.Count = append(out.Count, a.Count[i]+b.Count[j])
			row := len(out.Sum)
			out.Sum = append(out.Sum, a.Sum[i*d:(i+1)*d]...)
			for k, v := range b.Sum[j*d : (j+1)*d] {
				out.Sum[row+k] += v
			}
			i++
			j++
		}
	}
	return out
}

// mergeFn adds partial sums. merge is associative and, on byte
// descriptors, exact, so the result does not depend on the grouping.
type mergeFn struct{}

func (mergeFn) CreateAccumulator() partial             { return partial{} }
func (mergeFn) AddInput(a, b partial) partial          { return merge(a, b) }
func (mergeFn) MergeAccumulators(a, b partial) partial { return merge(a, b) }
func (mergeFn) ExtractOutput(a partial) partial        { return a }

// bundleSums accumulates the partial sums of a bundle sparsely: memory grows
// with the clusters the bundle touches, not with K.
type bundleSums struct {
	dim   int
	slot  []int32 // slot[c] is the row of cluster c, or −1
	words []int32 // clusters touched, in order of first touch
	count []int64
	sum   []int64
	sse   int64
	n     int64
	moved int64
}

func (b *bundleSums) add(desc []byte, label int32, dist float32) {
	if b.slot == nil {
		return
	}
	r := b.slot[label]
	if r < 0 {
		r = int32(len(b.words))
		b.slot[label] = r
		b.words = append(b.words, label)
		b.count = append(b.count, 0)
		b.sum = append(b.sum, make([]int64, b.dim)...)
	}
	b.count[r]++
	row := b.sum[int(r)*b.dim : int(r+1)*b.dim]
	for j, v := range desc[:len(row)] {
		row[j] += int64(v)
	}
	b.sse += int64(math.Round(float64(dist) * sseScale))
	b.n++
}

// flush returns the bundle's sums for iteration iter, words ascending, and
// empties b.
func (b *bundleSums) flush(iter int) partial {
	order := make([]int, len(b.words))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return int(b.words[x]) - int(b.words[y]) })
	p := partial{Iter: iter, Dim: b.dim, N: b.n, Changed: b.moved, SSE: b.sse,
		Words: make([]int32, len(order)), Count: make([]int64, len(order)), Sum: make([]int64, len(order)*b.dim)}
	for i, r := range order {
		p.Words[i] = b.words[r]
		p.Count[i] = b.count[r]
		copy(p.Sum[i*b.dim:], b.sum[r*b.dim:(r+1)*b.dim])
		b.slot[b.words[r]] = -1
	}
	b.words, b.count, b.sum = b.words[:0], b.count[:0], b.sum[:0]
	b.sse, b.n, b.moved = 0, 0, 0
	return p
}

// indexSlot holds the search index (a forest or an IVF) of the latest
// iteration assigned in this process. One slot is enough — every bundle of
// an iteration needs the same index, and the previous iteration's is dead —
// and bounds a worker's memory to one index however many iterations the
// graph holds.
type indexSlot[O comparable, T any] struct {
	sync.Mutex
	key indexKey[O]
	v   *T
}

type indexKey[O comparable] struct {
	iter        int
	k, dim      int
	fingerprint uint64
	opt         O
}

// get returns the index over st's centroids for iteration st.Iter,
// building it with build(st.Centroids, st.Dim, opt for the iteration) if
// the slot holds another.
func (c *indexSlot[O, T]) get(st *state, opt O, forIter func(O, int) O, build func([]float32, int, O) (*T, error)) (*T, error) {
	key := indexKey[O]{st.Iter, st.K, st.Dim, st.Fingerprint, opt}
	c.Lock()
	defer c.Unlock()
	if c.v != nil && c.key == key {
		return c.v, nil
	}
	c.v = nil // let the old index go before building the new one
	v, err := build(st.Centroids, st.Dim, forIter(opt, st.Iter))
	if err != nil {
		return nil, err
	}
	c.key, c.v = key, v
	return v, nil
}

var (
	forestSlot indexSlot[kmeans.ForestOptions, kmeans.Forest]
	ivfSlot    indexSlot[kmeans.IVFOptions, kmeans.IVF]
)

// cachedForest returns the forest over st's centroids for iteration st.Iter.
func cachedForest(st *state, opt kmeans.ForestOptions) (*kmeans.Forest, error) {
	return forestSlot.get(st, opt, kmeans.ForestOptions.ForIteration, kmeans.NewForest)
}

// cachedIVF returns the IVF over st's centroids for iteration st.Iter.
func cachedIVF(st *state, opt kmeans.IVFOptions) (*kmeans.IVF, error) {
	return ivfSlot.get(st, opt, kmeans.IVFOptions.ForIteration, kmeans.NewIVF)
}

// assignFn assigns chunks to the centroids of the state side input, emits
// each chunk with its new labels for the next iteration, and emits the
// partial sums of each bundle, by block of words, when it finishes.
type assignFn struct {
	Iter   int
	Approx bool
	Forest kmeans.ForestOptions
	UseIVF bool
	IVF    kmeans.IVFOptions

	// Per bundle, dropped in FinishBundle: the SDK harness caches the DoFn
	// with its bundle plan, one or more per unrolled iteration, for the
	// rest of the job.
	ready    bool // the state has been read
	skip     bool // training has converged
	cent     []float32
	forest   *kmeans.Forest
	ivf      *kmeans.IVF
	exact    *kmeans.Exact // without Approx
	sums     bundleSums
	descs    beam.Counter
	searches []kmeans.Search
	scratch  []kmeans.ExactScratch
	ivfs     []kmeans.IVFScratch
	x        []float32
	dist     []float32
}

func (f *assignFn) ProcessElement(ctx context.Context, c chunk, stateSide func(*state) bool, emitChunk func(chunk), emitSums func(int, partial)) error {
	const d = formats.DescriptorSize
	if !f.ready {
		st, ok, err := readState(stateSide)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("vocabulary: iteration %d has no centroids", f.Iter)
		}
		f.ready = true
		if st.Converged {
			f.skip = true
			return nil
		}
		if st.Iter != f.Iter || st.Dim != d {
			return fmt.Errorf("vocabulary: iteration %d received the centroids of iteration %d, dimension %d", f.Iter, st.Iter, st.Dim)
		}
		f.cent = st.Centroids
		if f.Approx && f.UseIVF {
			v, err := cachedIVF(&st, f.IVF)
			if err != nil {
				return fmt.Errorf("vocabulary: iteration %d: %w", f.Iter, err)
			}
			f.ivf = v
		} else if f.Approx {
			fr, err := cachedForest(&st, f.Forest)
			if err != nil {
				return fmt.Errorf("vocabulary: iteration %d: %w", f.Iter, err)
			}
			f.forest = fr
		} else {
			f.exact = kmeans.NewExact(f.cent, d)
		}
		f.sums = bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, st.K)}
		f.descs = beam.NewCounter("kmeans", "descriptors_assigned")
	}
	if f.skip {
		return nil
	}
	n := len(c.Desc) / d
	if len(c.Desc)%d != 0 || (c.Labels != nil && len(c.Labels) != n) {
		return fmt.Errorf("vocabulary: chunk %d has %d bytes and %d labels, want %d-byte descriptors and a label each", c.Index, len(c.Desc), len(c.Labels), d)
	}
	f.x = slices.Grow(f.x[:0], n*d)[:n*d]
	for i, b := range c.Desc {
		f.x[i] = float32(b)
	}
	// The input element is not ours to modify: the new labels go into a
	// fresh slice that leaves with the output chunk.
	labels := make([]int32, n)
	if c.Labels != nil {
		copy(labels, c.Labels)
	} else {
		for i := range labels {
			labels[i] = -1
		}
	}
	f.dist = slices.Grow(f.dist[:0], n)[:n]
	// Labels depend only on each descriptor and its previous label, so
	// splitting the chunk over goroutines changes nothing but the time.
	w := max(1, min(runtime.GOMAXPROCS(0), n))
	if len(f.searches) < w {
		f.searches = make([]kmeans.Search, w)
	}
	if f.exact != nil && len(f.scratch) < w {
		f.scratch = make([]kmeans.ExactScratch, w)
	}
	if f.ivf != nil && len(f.ivfs) < w {
		f.ivfs = make([]kmeans.IVFScratch, w)
	}
	changed := make([]int, w)
	var wg sync.WaitGroup
	for g := range w {
		lo, hi := g*n/w, (g+1)*n/w
		wg.Go(func() {
			if f.ivf != nil {
				changed[g] = f.ivf.Assign(f.x[lo*d:hi*d], labels[lo:hi], f.dist[lo:hi], &f.ivfs[g])
			} else if f.forest != nil {
				changed[g] = f.forest.Assign(f.x[lo*d:hi*d], labels[lo:hi], f.dist[lo:hi], &f.searches[g])
			} else {
				changed[g] = f.exact.Assign(f.x[lo*d:hi*d], labels[lo:hi], f.dist[lo:hi], &f.scratch[g])
			}
		})
	}
	wg.Wait()
	for i, l := range labels {
		f.sums.add(c.Desc[i*d:(i+1)*d], l, f.dist[i])
	}
	for _, m := range changed {
		f.sums.moved += int64(m)
	}
	f.descs.Inc(ctx, int64(n))
	emitChunk(chunk{Index: c.Index, Desc: c.Desc, Labels: labels})
	return nil
}

func (f *assignFn) FinishBundle(_ func(*state) bool, _ func(chunk), emitSums func(int, partial)) {
	if f.sums.n > 0 {
		f.sums.flush(f.Iter).blocks(emitSums)
	}
	// Drop the bundle's centroids, sums and scratch, so that a worker
	// keeps only the cached forest between bundles.
	*f = assignFn{Iter: f.Iter, Approx: f.Approx, Forest: f.Forest, UseIVF: f.UseIVF, IVF: f.IVF}
}

// updateFn applies an iteration's merged sums to the state.
type updateFn struct {
	Iter, MaxIter int
	Tol           float64
}

func (f *updateFn) ProcessElement(ctx context.Context, _ []byte, stateSide func(*state) bool, sumsSide func(*int, *partial) bool, emit func(state)) error {
	st, ok, err := readState(stateSide)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("vocabulary: iteration %d has no centroids", f.Iter)
	}
	next, err := f.update(ctx, st, sumsSide)
	if err != nil {
		return err
	}
	next.parts(emit)
	return nil
}

func (f *updateFn) update(ctx context.Context, st state, sumsSide func(*int, *partial) bool) (state, error) {
	if st.Converged {
		return st, nil
	}
	if st.Iter != f.Iter {
		return state{}, fmt.Errorf("vocabulary: iteration %d received the centroids of iteration %d", f.Iter, st.Iter)
	}
	// The blocks of sums come in any order, and whether to move the
	// centroids is known only after the last: the means go to a buffer.
	d := st.Dim
	count := make([]int64, st.K)
	mean := make([]float32, len(st.Centroids))
	var (
		key             int
		p               partial
		n, changed, sse int64
	)
	for sumsSide(&key, &p) {
		if p.Iter != f.Iter || p.Dim != d {
			return state{}, fmt.Errorf("vocabulary: iteration %d received the sums of iteration %d, dimension %d", f.Iter, p.Iter, p.Dim)
		}
		n, changed, sse = n+p.N, changed+p.Changed, sse+p.SSE
		for j, w := range p.Words {
			if count[w] != 0 {
				return state{}, fmt.Errorf("vocabulary: iteration %d received the sums of word %d twice", f.Iter, w)
			}
			count[w] = p.Count[j]
			c := float64(p.Count[j])
			row := mean[int(w)*d : int(w+1)*d]
			for k, v := range p.Sum[j*d : (j+1)*d] {
				row[k] = float32(float64(v) / c)
			}
		}
	}
	if int(n) != st.Sampled {
		return state{}, fmt.Errorf("vocabulary: iteration %d assigned %d of %d descriptors", f.Iter, n, st.Sampled)
	}
	// The same stopping rules as kmeans.Train, in the same order.
	obj := float64(sse) / sseScale / float64(n)
	st.Objective, st.HaveObjective = obj, true
	fixed := changed == 0 && !st.Reseeded
	if (st.Iter > 0 && (fixed || st.Prev-obj <= f.Tol*st.Prev)) || obj == 0 {
		st.Converged = true
		log.Infof(ctx, "vocabulary: converged after %d iterations, mean squared distance %.1f", st.Iter, obj)
		return st, nil
	}
	if st.Iter == f.MaxIter {
		log.Infof(ctx, "vocabulary: stopped after %d iterations, mean squared distance %.1f", st.Iter, obj)
		return st, nil
	}
	var empty []int
	for c, m := range count {
		if m == 0 {
			empty = append(empty, c)
		} else {
			copy(st.Centroids[c*d:(c+1)*d], mean[c*d:(c+1)*d])
		}
	}
	kmeans.Split(st.Centroids, d, count, empty)
	log.Infof(ctx, "vocabulary: iteration %d: mean squared distance %.1f, %d labels changed, %d empty clusters split", st.Iter, obj, changed, len(empty))
	st.Reseeded = len(empty) > 0
	st.Prev = obj
	st.Iter++
	st.Fingerprint = fingerprint(st.Centroids)
	return st, nil
}

// codebookFn turns the final state into the codebook.
func codebookFn(_ []byte, stateSide func(*state) bool) (Codebook, error) {
	st, ok, err := readState(stateSide)
	if err != nil {
		return Codebook{}, err
	}
	if !ok {
		return Codebook{}, fmt.Errorf("vocabulary: no centroids")
	}
	return Codebook{K: st.K, Dim: st.Dim, Centroids: st.Centroids, Objective: st.Objective, Iterations: st.Iter,
		Sampled: st.Sampled, Seconds: time.Since(time.Unix(0, st.Start)).Seconds(), Converged: st.Converged,
		Approx: st.Approx, Forest: st.Forest, UseIVF: st.UseIVF, IVF: st.IVF, Chunks: st.Chunks}, nil
}
