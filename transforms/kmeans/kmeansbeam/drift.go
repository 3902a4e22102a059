package kmeansbeam

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*distortionFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*readCodebookFn)(nil)).Elem())
	beam.RegisterFunction(partIfFn)
	beam.RegisterFunction(passIfFn)
	beam.RegisterFunction(sampleIfFn)
	beam.RegisterType(reflect.TypeOf((*rundir.VocabDecision)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*decideFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*decidedFn)(nil)).Elem())
	beam.RegisterFunction(keepFn)
	beam.RegisterFunction(buildFn)
	beam.RegisterType(reflect.TypeOf((*keptCodebookFn)(nil)).Elem())
}

// DriftSeed is xored into the vocabulary's seed to draw the drift sample
// (DriftSample): a sample other than the one the vocabulary was trained
// on, whose distortion would flatter it.
const DriftSeed = 0x6472696674 // "drift"

// DriftSample draws the bottom-n sample of the descriptors of the
// features parts (PCollection<formats.Part>) under seed ⊕ DriftSeed, as
// VocabularyOfParts draws its training sample: a single-element
// collection for Distortion. Since a descriptor's priority is a hash of
// the seed, its image id and its index, an image carried unchanged from
// one run to the next keeps its descriptors' priorities, and the samples
// of two runs share the descriptors of the images they share. A process
// reads at most loads parts at once (0: no limit; Options.PartLoads).
func DriftSample(s beam.Scope, parts beam.PCollection, n int, seed uint64, loads int) beam.PCollection {
	s = s.Scope("kmeans.DriftSample")
	return sampleOfParts(s, parts, n, seed^DriftSeed, loads)
}

// Distortion returns, for each codebook of codebooks
// (PCollection<Codebook>: none, or one), the mean squared Euclidean
// distance of the descriptors of the sample (from DriftSample) to their
// nearest word: PCollection<float64>. The search is the one quantisation
// uses — exact, or through the codebook's forest if it was trained
// approximately — so the figure measures the quantisation the bags of
// words get, and it is deterministic.
func Distortion(s beam.Scope, sample, codebooks beam.PCollection) beam.PCollection {
	s = s.Scope("kmeans.Distortion")
	return beam.ParDo(s, &distortionFn{}, codebooks, beam.SideInput{Input: sample})
}

type distortionFn struct{}

func (distortionFn) ProcessElement(ctx context.Context, cb Codebook, smp sample) (float64, error) {
	if err := measurable(cb, smp); err != nil {
		return 0, err
	}
	cent, err := cb.ReadCentroids(ctx)
	if err != nil {
		return 0, fmt.Errorf("vocabulary: %w", err)
	}
	return distortion(ctx, cb, cent, smp)
}

// measurable reports an error unless the distortion of codebook cb can be
// measured on smp: checked before the words are read.
func measurable(cb Codebook, smp sample) error {
	if len(smp.Prio) == 0 {
		return fmt.Errorf("vocabulary: no descriptors to measure the distortion on")
	}
	if cb.Dim != formats.DescriptorSize || cb.K < 1 {
		return fmt.Errorf("vocabulary: a codebook of %d words of dimension %d", cb.K, cb.Dim)
	}
	return nil
}

// distortion returns the mean squared distance from the descriptors of
// smp to their nearest of cent, the words of cb (see Distortion).
func distortion(ctx context.Context, cb Codebook, cent []float32, smp sample) (float64, error) {
	const d = formats.DescriptorSize
	n := len(smp.Prio)
	a, err := kmeans.NewAssigner(cent, cb.Dim, cb.Search())
	if err != nil {
		return 0, fmt.Errorf("vocabulary: %w", err)
	}
	w := max(1, min(runtime.GOMAXPROCS(0), n))
	sums := make([]float64, w)
	var wg sync.WaitGroup
	for g := range w {
		lo, hi := g*n/w, (g+1)*n/w
		wg.Go(func() {
			x := byteFloats(smp.Desc[lo*d : hi*d])
			labels := make([]int32, hi-lo)
			for i := range labels {
				labels[i] = -1
			}
			dist := make([]float32, hi-lo)
			a.Assign(x, labels, dist, new(kmeans.AssignScratch))
			for _, v := range dist {
				sums[g] += float64(v)
			}
		})
	}
	wg.Wait()
	var total float64
	for _, v := range sums { // in goroutine order: the same sum every run
		total += v
	}
	mean := total / float64(n)
	log.Infof(ctx, "vocabulary: mean squared distance of %d sampled descriptors to %d words: %.1f", n, cb.K, mean)
	return mean, nil
}

// ReadCodebook reads the codebook of a finished run from its
// codebook-*.parquet files matching pattern, when the job runs, and
// measures its distortion on sample (a single-element PCollection<sample>,
// from DriftSample) as Distortion does, reading the words once: a
// single-element PCollection<Codebook> naming those files, whose K, Approx
// and Forest are opt's (the run that wrote it must have trained with the
// same settings, which are not in the file), and a single-element
// PCollection<float64> of the distortion. The job fails unless the files
// hold words 0…opt.K−1, each once (fileio.ReadCentroids). The codebook's
// training figures (Objective, Iterations, Sampled, Seconds) are zero:
// they belong to the run that trained it.
func ReadCodebook(s beam.Scope, pattern string, opt Options, sample beam.PCollection) (codebook, distortion beam.PCollection) {
	s = s.Scope("kmeans.ReadCodebook")
	f := &readCodebookFn{Pattern: pattern, K: opt.K, Approx: opt.Approx}
	if opt.Approx {
		f.Forest = opt.forest()
	}
	if opt.useIVF() {
		f.UseIVF, f.IVF = true, opt.ivf()
	}
	return beam.ParDo2(s, f, beam.Impulse(s), beam.SideInput{Input: sample})
}

type readCodebookFn struct {
	Pattern string
	// K is the number of words the codebook must hold: opt.K, the
	// settings kept with it (Options.Settings) being opt's.
	K      int
	Approx bool
	Forest nn.ForestOptions
	UseIVF bool
	IVF    nn.IVFOptions
}

func (f *readCodebookFn) ProcessElement(ctx context.Context, _ []byte, smp sample, emit func(Codebook), emitDistortion func(float64)) error {
	paths, err := fileio.Glob(ctx, f.Pattern)
	if err != nil {
		return fmt.Errorf("vocabulary: %w", err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("vocabulary: no codebook in %s", f.Pattern)
	}
	const d = formats.DescriptorSize
	cb := Codebook{K: f.K, Dim: d, Paths: paths, Converged: true, Approx: f.Approx, Forest: f.Forest, UseIVF: f.UseIVF, IVF: f.IVF}
	if err := measurable(cb, smp); err != nil {
		return err
	}
	cent, err := fileio.ReadCentroids(ctx, paths, f.K, d)
	if err != nil {
		return fmt.Errorf("vocabulary: %w", err)
	}
	cb.Content = formats.CentroidsContent(cent)
	mean, err := distortion(ctx, cb, cent, smp)
	if err != nil {
		return err
	}
	emit(cb)
	emitDistortion(mean)
	return nil
}

// VocabularyOfPartsIf is VocabularyOfParts when build (a single-element
// PCollection<bool>, decided while the job runs) is true; when it is
// false no features part is read, nothing is trained, and the result is
// empty. An incremental run that keeps the previous run's vocabulary uses
// it so, the graph of a batch job being fixed before it runs. An empty
// opt.Output fails the pipeline whatever build is.
func VocabularyOfPartsIf(s beam.Scope, parts beam.PCollection, opt Options, build beam.PCollection) beam.PCollection {
	s = s.Scope("kmeans.Vocabulary")
	if opt.Output == "" {
		return failing(s, errNoOutput, beam.Create(s, true))
	}
	// Gated at the source: when build is false no part reaches a step
	// that reads it.
	parts = beam.ParDo(s, partIfFn, parts, beam.SideInput{Input: build})
	start := beam.ParDo(s, passIfFn, beam.Impulse(s), beam.SideInput{Input: build})
	if opt.inParts() {
		return ofParts(s, parts, opt, build, start)
	}
	smp := beam.ParDo(s, sampleIfFn, sampleOfParts(s, parts, opt.sample(), opt.Seed, opt.PartLoads), beam.SideInput{Input: build})
	return fromSample(s, smp, opt, start)
}

func partIfFn(p formats.Part, build bool, emit func(formats.Part)) {
	if build {
		emit(p)
	}
}

func sampleIfFn(smp sample, build bool, emit func(sample)) {
	if build {
		emit(smp)
	}
}

func passIfFn(x []byte, build bool, emit func([]byte)) {
	if build {
		emit(x)
	}
}

// Settings returns what identifies a codebook trained with o besides the
// descriptors it was trained on: how it quantises — the number of words,
// and whether it is searched exactly or through a forest or an IVF and
// which (the options in force) — and how it was built — the sample, the
// stopping rule, the seed, the initialisation and the seeding's prefix,
// and the re-seeding of empty clusters, each as in force. Two runs with
// equal Settings quantise alike, and built from the same descriptors
// train the same centroids, so an incremental run may keep a vocabulary
// only if its settings are the previous run's: one asked to build it
// otherwise builds it again. What changes no centroid is left out: the
// chunk count of distributed training (see the package documentation),
// PartLoads and ShardWords; InitSample unless k-means++ seeds.
func (o Options) Settings() string {
	f := nn.ForestOptions{}
	if o.Approx {
		f = o.forest()
	}
	s := fmt.Sprintf("k=%d approx=%t trees=%d leaf=%d checks=%d seed=%d", o.K, o.Approx, f.Trees, f.LeafSize, f.Checks, f.Seed)
	if o.useIVF() {
		v := o.ivf()
		s += fmt.Sprintf(" ivf_lists=%d ivf_probes=%d ivf_seed=%d ivf_train_probes=%d", v.Lists, v.Probes, v.Seed, o.trainIVF().Probes)
	}
	ko := o.kmeans()
	s += fmt.Sprintf(" sample=%d max_iter=%d tol=%v train_seed=%d init=%s seeding=%d reseed=%s",
		o.sample(), o.MaxIter, o.Tol, o.Seed, ko.InitMethod(), o.seedSample(), ko.ReseedRule())
	if ko.InitMethod() == kmeans.InitKMeansPP {
		s += fmt.Sprintf(" init_sample=%d", o.InitSample)
	}
	return s
}

// Built returns the decision of a vocabulary built without a drift
// check — there is no previous one, or it cannot be kept — for the
// reason given (single-element PCollection<rundir.VocabDecision>);
// settings identify the vocabulary's options (Options.Settings).
func Built(s beam.Scope, settings rundir.Key, reason string) beam.PCollection {
	return beam.ParDo(s, &decidedFn{Settings: settings, Reason: reason}, beam.Impulse(s))
}

type decidedFn struct {
	Settings rundir.Key
	Reason   string
}

func (f *decidedFn) ProcessElement(ctx context.Context, _ []byte) rundir.VocabDecision {
	log.Infof(ctx, "vocabulary: %s", f.Reason)
	return rundir.VocabDecision{Settings: f.Settings, Reason: f.Reason}
}

// Kept is a previous vocabulary a run may keep: the pattern of its
// codebook's files, the settings it was built with (Options.Settings)
// and the distortion measured when it was built (Reference).
type Kept struct {
	Pattern   string
	Settings  rundir.Key
	Reference float64
}

// KeepOrBuild adds the vocabulary stage of a run that may keep prev:
// prev's codebook if its distortion on sample (from DriftSample) passes
// rule (kmeans.Drift.Decide), copied to opt.Output, one built from parts
// with opt otherwise. It
// returns the codebook used (single-element PCollection<Codebook>), the
// codebook built, if any (PCollection<Codebook> of at most one), the
// decision (single-element PCollection<rundir.VocabDecision>) and whether
// prev was kept (single-element PCollection<bool>). An empty opt.Output
// fails the pipeline.
func KeepOrBuild(s beam.Scope, parts, sample beam.PCollection, opt Options, prev Kept, rule kmeans.Drift) (codebook, built, decision, kept beam.PCollection) {
	s = s.Scope("vocabulary.Keep")
	prevCB, measured := ReadCodebook(s, prev.Pattern, opt, sample)
	decision = beam.ParDo(s, &decideFn{Settings: prev.Settings, Reference: prev.Reference, Rule: rule}, measured)
	kept = beam.ParDo(s, keepFn, decision)
	if opt.Output == "" {
		fail := failing(s, errNoOutput, beam.Create(s, true))
		return fail, fail, decision, kept
	}
	built = VocabularyOfPartsIf(s, parts, opt, beam.ParDo(s, buildFn, decision))
	codebook = beam.Flatten(s, beam.ParDo(s, &keptCodebookFn{Output: opt.Output}, prevCB, beam.SideInput{Input: kept}), built)
	return codebook, built, decision, kept
}

// decideFn keeps the previous vocabulary unless Rule refuses the
// distortion measured against it over its Reference.
type decideFn struct {
	Settings  rundir.Key
	Reference float64
	Rule      kmeans.Drift
}

func (f *decideFn) ProcessElement(ctx context.Context, measured float64) rundir.VocabDecision {
	d := rundir.VocabDecision{Settings: f.Settings, Measured: measured, Reference: f.Reference}
	d.Drift, d.Kept, d.Reason = f.Rule.Decide(measured, f.Reference)
	if !d.Kept {
		d.Reference = 0 // the new vocabulary's, measured once it is built
	}
	log.Infof(ctx, "vocabulary: %s", d.Reason)
	return d
}

func keepFn(d rundir.VocabDecision) bool  { return d.Kept }
func buildFn(d rundir.VocabDecision) bool { return !d.Kept }

// keptCodebookFn copies the previous codebook to Output if it is kept:
// a run is self-contained.
type keptCodebookFn struct{ Output string }

func (f *keptCodebookFn) ProcessElement(ctx context.Context, cb Codebook, kept bool, emit func(Codebook)) error {
	if !kept {
		return nil
	}
	cb, err := cb.copyTo(ctx, f.Output)
	if err != nil {
		return err
	}
	emit(cb)
	return nil
}
