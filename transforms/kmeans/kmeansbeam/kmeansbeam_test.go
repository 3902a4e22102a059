package kmeansbeam

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*checkFn)(nil)).Elem())
}

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

func features(n int, r *rand.Rand) []formats.Features {
	var out []formats.Features
	for i := 0; i < n; i++ {
		f := formats.Features{ImageID: fmt.Sprintf("img%03d", i)}
		for k := r.IntN(40); k > 0; k-- {
			d := make([]byte, formats.DescriptorSize)
			for j := range d {
				d[j] = byte(r.IntN(256))
			}
			f.Descriptors = append(f.Descriptors, d)
		}
		out = append(out, f)
	}
	return out
}

// planted returns images whose descriptors lie around k centres drawn in
// [40, 216)¹²⁸, with N(0, sigma²) noise per coordinate, and the centres.
func planted(images, k int, sigma float64, r *rand.Rand) ([]formats.Features, [][]float32) {
	centres := make([][]float32, k)
	for c := range centres {
		centres[c] = make([]float32, formats.DescriptorSize)
		for j := range centres[c] {
			centres[c][j] = float32(40 + r.IntN(176))
		}
	}
	var out []formats.Features
	for i := range images {
		f := formats.Features{ImageID: fmt.Sprintf("img%03d", i)}
		for range 20 + r.IntN(20) {
			c := centres[r.IntN(k)]
			d := make([]byte, formats.DescriptorSize)
			for j := range d {
				d[j] = byte(min(max(math.Round(float64(c[j])+sigma*r.NormFloat64()), 0), 255))
			}
			f.Descriptors = append(f.Descriptors, d)
		}
		out = append(out, f)
	}
	return out, centres
}

// The bottom-k sample must not depend on how the runner splits and merges
// the input, or the vocabulary would change with the number of workers.
func TestSampleIndependentOfGrouping(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	feats := features(60, r)
	fn := &sampleFn{Max: 300, Seed: 5}

	one := fn.CreateAccumulator()
	for _, f := range feats {
		one = fn.AddInput(one, f)
	}
	want := fn.ExtractOutput(one)
	if len(want.Prio) != 300 {
		t.Fatalf("sample has %d descriptors, want 300", len(want.Prio))
	}
	for trial := 0; trial < 5; trial++ {
		perm := r.Perm(len(feats))
		parts := make([]sample, 1+r.IntN(7))
		for i := range parts {
			parts[i] = fn.CreateAccumulator()
		}
		for _, i := range perm {
			p := r.IntN(len(parts))
			parts[p] = fn.AddInput(parts[p], feats[i])
		}
		merged := parts[0]
		for _, p := range parts[1:] {
			merged = fn.MergeAccumulators(p, merged)
		}
		if got := fn.ExtractOutput(merged); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: %d parts merged in another order gave another sample", trial, len(parts))
		}
	}
	fn6 := &sampleFn{Max: 300, Seed: 6}
	acc := fn6.CreateAccumulator()
	for _, f := range feats {
		acc = fn6.AddInput(acc, f)
	}
	other := fn6.ExtractOutput(acc)
	if reflect.DeepEqual(other.Prio, want.Prio) {
		t.Fatal("seed does not change the priorities")
	}
}

// localSample draws the sample VocabularyOfParts draws, without a pipeline.
func localSample(feats []formats.Features, opt Options) sample {
	fn := &sampleFn{Max: opt.Sample, Seed: opt.Seed}
	acc := fn.CreateAccumulator()
	for _, f := range feats {
		acc = fn.AddInput(acc, f)
	}
	return fn.ExtractOutput(acc)
}

// checkFn fails the pipeline unless the codebook has exactly the centroids,
// iterations and convergence of Want, an objective within ObjTol of Want's
// (relative), and, if Centres is set, a centroid within Radius of each
// planted centre.
type checkFn struct {
	Name    string
	Want    refBook
	ObjTol  float64
	Centres [][]float32
	Radius  float64
}

func (f *checkFn) ProcessElement(ctx context.Context, cb Codebook) error {
	w := f.Want
	if cb.K != w.K || cb.Dim != w.Dim || cb.Sampled != w.Sampled {
		return fmt.Errorf("%s: K=%d Dim=%d Sampled=%d, want %d, %d, %d", f.Name, cb.K, cb.Dim, cb.Sampled, w.K, w.Dim, w.Sampled)
	}
	cent, err := cb.ReadCentroids(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	switch {
	case !slices.Equal(cent, w.Centroids) || cb.Content != formats.CentroidsContent(w.Centroids):
		return fmt.Errorf("%s: centroids differ from the reference", f.Name)
	case cb.Iterations != w.Iterations || cb.Converged != w.Converged:
		return fmt.Errorf("%s: %d iterations (converged %v), want %d (%v)", f.Name, cb.Iterations, cb.Converged, w.Iterations, w.Converged)
	case math.Abs(cb.Objective-w.Objective) > f.ObjTol*w.Objective || math.IsNaN(cb.Objective):
		return fmt.Errorf("%s: objective %v, want %v within %g", f.Name, cb.Objective, w.Objective, f.ObjTol)
	case cb.Approx != w.Approx || cb.Forest != w.Forest || cb.UseIVF != w.UseIVF || cb.IVF != w.IVF:
		return fmt.Errorf("%s: Approx %v Forest %+v UseIVF %v IVF %+v, want %v %+v %v %+v", f.Name, cb.Approx, cb.Forest, cb.UseIVF, cb.IVF, w.Approx, w.Forest, w.UseIVF, w.IVF)
	}
	for i, c := range f.Centres {
		if _, d := nn.Nearest(cent, cb.Dim, c); math.Sqrt(float64(d)) > f.Radius {
			return fmt.Errorf("%s: planted centre %d is %.2f from the nearest centroid, want ≤ %g", f.Name, i, math.Sqrt(float64(d)), f.Radius)
		}
	}
	return nil
}

// refBook is a reference codebook with its centroids, which a Codebook
// element names files of instead of holding.
type refBook struct {
	Codebook
	Centroids []float32
}

// reference trains the vocabulary of feats with kmeans.Train on one machine.
func reference(t *testing.T, feats []formats.Features, opt Options) refBook {
	t.Helper()
	smp := localSample(feats, opt)
	data, err := floats(smp, opt.K)
	if err != nil {
		t.Fatal(err)
	}
	res, err := kmeans.Train(data, formats.DescriptorSize, opt.kmeans())
	if err != nil {
		t.Fatal(err)
	}
	return codebookOf(res, len(smp.Prio), opt)
}

// codebookOf is the codebook of a training result on sampled descriptors
// with opt.
func codebookOf(res kmeans.Result, sampled int, opt Options) refBook {
	cb := refBook{Codebook: Codebook{K: res.K, Dim: res.Dim, Objective: res.Objective, Iterations: res.Iterations,
		Sampled: sampled, Converged: res.Converged, Approx: opt.Approx}, Centroids: res.Centroids}
	if opt.Approx {
		cb.Forest = opt.forest()
	}
	if opt.useIVF() {
		cb.UseIVF, cb.IVF = true, opt.ivf()
	}
	return cb
}

// TestVocabularyDistributed runs distributed training with one chunk and
// with several, and single-worker training, in one pipeline, and checks
// them against kmeans.Train on the same sample.
//
// The bound is exact for the centroids: descriptors are bytes, so every sum
// is an integer that float64 holds exactly whatever the merge order, and the
// assignment of a descriptor depends only on it, its previous label, the
// centroids and the iteration's forest. Objectives may differ by the
// fixed-point rounding of the distributed sum of squared distances, at most
// 2⁻⁹ per descriptor.
func TestVocabularyDistributed(t *testing.T) {
	const manyWords = 562 // more than a part of the state, stateRows
	r := rand.New(rand.NewPCG(11, 12))
	blobs, centres := planted(60, 6, 4, r)
	noisy := features(40, r)
	// Fewer distinct descriptors than words leaves clusters empty at
	// every iteration: the trainer must split what it can, keep finite
	// centroids, and stop at objective zero.
	var dups []formats.Features
	for i := range 10 {
		f := formats.Features{ImageID: fmt.Sprintf("img%d", i)}
		for j := range 12 {
			f.Descriptors = append(f.Descriptors, slices.Repeat([]byte{byte(50 * ((i + j) % 3))}, formats.DescriptorSize))
		}
		dups = append(dups, f)
	}

	// Half the descriptors one repeated value, half noise: random seeds
	// repeat the value, all but one of its words are left empty, and
	// the update splits large clusters into them.
	var repeated []formats.Features
	for i, f := range features(30, r) {
		for range len(f.Descriptors) {
			f.Descriptors = append(f.Descriptors, slices.Repeat([]byte{byte(100 + i%2)}, formats.DescriptorSize))
		}
		repeated = append(repeated, f)
	}

	p, s := beam.NewPipelineWithRoot()
	for _, tc := range []struct {
		name    string
		feats   []formats.Features
		opt     Options
		chunks  []int
		centres [][]float32
	}{
		// Six well-separated blobs and six words: each blob's mean is
		// within about σ·√(D/m) ≈ 4·√(128/300) ≈ 2.6 of its centre.
		{"planted akm", blobs, Options{K: 6, Sample: 2000, MaxIter: 5, Seed: 3, Approx: true}, []int{0, 7}, centres},
		// Uniform noise into many words with a starved forest or IVF:
		// many iterations, empty clusters, approximate assignments.
		{"noise akm", noisy, Options{K: 40, Sample: 600, MaxIter: 6, Tol: 1e-6, Seed: 4, Approx: true, UseForest: true,
			Forest: nn.ForestOptions{Trees: 2, LeafSize: 2, Checks: 4, Seed: 9}, Init: kmeans.InitRandom}, []int{0, 1, 9}, nil},
		{"noise akm ivf", noisy, Options{K: 40, Sample: 600, MaxIter: 6, Tol: 1e-6, Seed: 4, Approx: true,
			IVF: nn.IVFOptions{Lists: 8, Probes: 1, Seed: 9}, Init: kmeans.InitRandom}, []int{0, 1, 9}, nil},
		// Exact training on one worker re-seeds differently: compare the
		// distributed trainer with itself and with Train's ReseedSplit.
		{"noise exact", noisy, Options{K: 40, Sample: 600, MaxIter: 4, Seed: 5}, []int{1, 64}, nil},
		// Word shards of the update smaller than K, not dividing it, and
		// of one word: the splits of empty clusters cross them.
		{"noise akm shards of 7", noisy, Options{K: 40, Sample: 600, MaxIter: 6, Tol: 1e-6, Seed: 4, Approx: true, ShardWords: 7,
			IVF: nn.IVFOptions{Lists: 8, Probes: 1, Seed: 9}, Init: kmeans.InitRandom}, []int{1, 9}, nil},
		{"noise exact shards of 1", noisy, Options{K: 40, Sample: 600, MaxIter: 4, Seed: 5, ShardWords: 1}, []int{3}, nil},
		// Many words, in shards that cut the parts of the state.
		{"many words", noisy, Options{K: manyWords, Sample: 2000, MaxIter: 3, Seed: 6, Approx: true}, []int{1, 5}, nil},
		{"many words shards", noisy, Options{K: manyWords, Sample: 2000, MaxIter: 3, Seed: 6, Approx: true, ShardWords: 131}, []int{5}, nil},
		// Assigning bundles whose sums leave for files every few rows.
		{"many words rows of 3", noisy, Options{K: manyWords, Sample: 2000, MaxIter: 3, Seed: 6, Approx: true, ShardWords: 131, SumsRows: 3}, []int{1, 5}, nil},
		{"noise akm ivf rows of 1", noisy, Options{K: 40, Sample: 600, MaxIter: 6, Tol: 1e-6, Seed: 4, Approx: true, SumsRows: 1, ShardWords: 7,
			IVF: nn.IVFOptions{Lists: 8, Probes: 1, Seed: 9}, Init: kmeans.InitRandom}, []int{1, 9}, nil},
		{"more words than a state part", noisy, Options{K: stateRows + 40, Sample: 2000, MaxIter: 2, Seed: 6, Approx: true, ShardWords: 200}, []int{4}, nil},
		{"duplicates", dups, Options{K: 7, Sample: 1000, MaxIter: 5, Seed: 1, Approx: true}, []int{5}, nil},
		// k-means‖ seeds over the chunks (seed.go) what
		// kmeans.Initialize seeds over the whole sample: a few chunks,
		// chunks of a few descriptors (most drawing no candidate), more
		// words than the rounds draw candidates among duplicates (the
		// top-up round), and more than a block of sums.
		{"planted kmeans||", blobs, Options{K: 6, Sample: 2000, MaxIter: 5, Seed: 3, Approx: true, Init: kmeans.InitParallel}, []int{0, 1, 7}, centres},
		{"noise exact kmeans||", noisy, Options{K: 40, Sample: 600, MaxIter: 4, Seed: 5, Init: kmeans.InitParallel}, []int{1, 9, 64}, nil},
		{"duplicates kmeans||", dups, Options{K: 7, Sample: 1000, MaxIter: 5, Seed: 1, Approx: true, Init: kmeans.InitParallel}, []int{1, 5}, nil},
		{"many words kmeans||", noisy, Options{K: manyWords, Sample: 2000, MaxIter: 2, Seed: 6, Approx: true, Init: kmeans.InitParallel}, []int{5}, nil},
		{"repeated splits", repeated, Options{K: 40, Sample: 600, MaxIter: 4, Tol: 1e-6, Seed: 4, Approx: true,
			IVF: nn.IVFOptions{Lists: 8, Probes: 1, Seed: 9}, Init: kmeans.InitRandom}, []int{1, 9}, nil},
		// Training probes apart from quantisation's (TestTrainProbes).
		{"noise akm ivf train probes", noisy, Options{K: 40, Sample: 600, MaxIter: 6, Tol: 1e-6, Seed: 4, Approx: true,
			IVF: nn.IVFOptions{Lists: 8, Probes: 3, Seed: 9}, TrainProbes: 1, Init: kmeans.InitRandom}, []int{1, 9}, nil},
		{"duplicates shards of 2", dups, Options{K: 7, Sample: 1000, MaxIter: 5, Seed: 1, Approx: true, ShardWords: 2}, []int{5}, nil},
	} {
		feats := beam.CreateList(s, writeParts(t, tc.feats, t.TempDir(), 3))
		chunked := tc.opt
		chunked.Chunks = 1
		want := reference(t, tc.feats, chunked)
		switch tc.name {
		case "noise akm":
			if want.Iterations < 3 {
				t.Fatalf("%s: reference ran %d iterations; too easy to test merging", tc.name, want.Iterations)
			}
		case "duplicates":
			if want.Objective != 0 || !want.Converged {
				t.Fatalf("%s: reference objective %v converged %v, want 0, true", tc.name, want.Objective, want.Converged)
			}
		}
		for _, chunks := range tc.chunks {
			// Each number of chunks trains as the graph's stages and in
			// one step (loop.go), which must give the same codebook.
			for _, work := range []int64{-1, 0} {
				o := tc.opt
				o.Chunks, o.OneStepWork, o.Output = chunks, work, t.TempDir()
				if chunks > 0 && o.oneStep() != (work == 0) {
					t.Fatalf("%s: OneStepWork %d: one step %v", tc.name, work, o.oneStep())
				}
				cb := VocabularyOfParts(s, feats, o)
				beam.ParDo0(s, &checkFn{Name: fmt.Sprintf("%s, %d chunks, one step %v", tc.name, chunks, work == 0), Want: want, ObjTol: 1e-6, Centres: tc.centres, Radius: 5}, cb)
			}
		}
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// TestTrainProbes checks that Lloyd's iterations search TrainProbes lists
// (by default DefaultTrainProbes of IVF's 8) on every path — one worker,
// the graph's stages and one step — while the codebook keeps IVF's
// probes for its quantisation.
func TestTrainProbes(t *testing.T) {
	noisy := features(40, rand.New(rand.NewPCG(11, 12)))
	ivf := nn.IVFOptions{Lists: 8, Probes: 8, Seed: 9}
	base := Options{K: 40, Sample: 600, MaxIter: 6, Tol: 1e-6, Seed: 4, Approx: true, IVF: ivf, Init: kmeans.InitRandom}
	at := func(probes int) refBook { // kmeans.Train searching probes lists
		o := base
		o.IVF.Probes, o.TrainProbes = probes, probes
		cb := reference(t, noisy, o)
		cb.IVF = base.ivf()
		return cb
	}
	want4, want2 := at(DefaultTrainProbes), at(2)
	if slices.Equal(want4.Centroids, at(8).Centroids) || slices.Equal(want4.Centroids, want2.Centroids) {
		t.Fatal("2, 4 and 8 probes train the same centroids: the test cannot tell them apart")
	}
	p, s := beam.NewPipelineWithRoot()
	feats := beam.CreateList(s, writeParts(t, noisy, t.TempDir(), 3))
	for _, tc := range []struct {
		trainProbes int
		want        refBook
	}{{0, want4}, {2, want2}} {
		for _, chunks := range []int{0, 5} {
			for _, work := range []int64{-1, 0} {
				o := base
				o.TrainProbes, o.Chunks, o.OneStepWork, o.Output = tc.trainProbes, chunks, work, t.TempDir()
				name := fmt.Sprintf("TrainProbes %d, %d chunks, one step %v", tc.trainProbes, chunks, work == 0)
				beam.ParDo0(s, &checkFn{Name: name, Want: tc.want, ObjTol: 1e-6}, VocabularyOfParts(s, feats, o))
			}
		}
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// The default training probes hold where they were measured, up to
// kmeans.KMeansPPMaxK words; above, training searches IVF's probes.
func TestDefaultTrainProbes(t *testing.T) {
	def := nn.DefaultIVFOptions().Probes
	for _, tc := range []struct {
		k, probes, trainProbes int
		train, quantise        int
	}{
		{10_000, 0, 0, DefaultTrainProbes, def},
		{kmeans.KMeansPPMaxK, 0, 0, DefaultTrainProbes, def},
		{kmeans.KMeansPPMaxK, 2, 0, 2, 2},
		{kmeans.KMeansPPMaxK + 1, 0, 0, DefaultTrainProbes, def},
		{1_000_000, 0, 0, DefaultTrainProbes, def},
		{100_000, 16, 0, DefaultTrainProbes, 16},
		{100_000, 2, 0, 2, 2},
		{100_000, 16, 3, 3, 16},
		{1_000, 8, 12, 12, 8},
	} {
		o := Options{K: tc.k, Approx: true, IVF: nn.IVFOptions{Probes: tc.probes}, TrainProbes: tc.trainProbes}
		if train, quantise := o.trainIVF().Probes, o.ivf().Probes; train != tc.train || quantise != tc.quantise {
			t.Errorf("K %d, IVF probes %d, TrainProbes %d: training searches %d lists and quantisation %d, want %d and %d", tc.k, tc.probes, tc.trainProbes, train, quantise, tc.train, tc.quantise)
		}
	}
}

func TestVocabularyInvalidOptionsFail(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	feats := beam.CreateList(s, writeParts(t, features(3, rand.New(rand.NewPCG(1, 2))), t.TempDir(), 2))
	VocabularyOfParts(s, feats, Options{K: 10, Sample: 100, MaxIter: 0, Chunks: 4, Output: t.TempDir()})
	err := ptest.Run(p)
	if err == nil || !strings.Contains(err.Error(), "MaxIter") {
		t.Fatalf("error %v, want one about MaxIter", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	ok := Options{K: 10, Sample: 100, MaxIter: 5}
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"ok", func(*Options) {}, ""},
		{"approx default forest", func(o *Options) { o.Approx, o.Chunks = true, 64 }, ""},
		{"one word", func(o *Options) { o.K = 1 }, "K = 1: must be 2 or more"},
		{"sample < K", func(o *Options) { o.Sample = 5 }, "Sample = 5"},
		{"negative chunks", func(o *Options) { o.Chunks = -1 }, "Chunks"},
		{"negative shard words", func(o *Options) { o.ShardWords = -1 }, "ShardWords"},
		{"negative sums rows", func(o *Options) { o.SumsRows = -1 }, "SumsRows"},
		{"negative train probes", func(o *Options) { o.TrainProbes = -1 }, "TrainProbes"},
		{"negative whole sample", func(o *Options) { o.WholeSample = -1 }, "WholeSample"},
		{"negative sample", func(o *Options) { o.Sample = -1 }, "Sample = -1"},
		{"default sample", func(o *Options) { o.Sample, o.K = 0, 100_000 }, ""},
		{"default sample < K", func(o *Options) { o.Sample, o.K = 0, MaxDefaultSample+1 }, "Sample = 20000000: must be at least K"},
		{"zero MaxIter", func(o *Options) { o.MaxIter = 0 }, "MaxIter"},
		{"bad forest", func(o *Options) { o.Approx, o.Forest = true, nn.ForestOptions{Trees: 1, LeafSize: -1, Checks: 1} }, "LeafSize"},
		{"bad ivf", func(o *Options) { o.Approx, o.IVF = true, nn.IVFOptions{Probes: 1, Lists: -2} }, "Lists"},
		{"bad init sample", func(o *Options) { o.InitSample = 3 }, "InitSample"},
	} {
		o := ok
		tc.mod(&o)
		err := o.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// The default sample follows the vocabulary, 50 descriptors a word,
// within its bounds; an explicit sample wins.
func TestDefaultSample(t *testing.T) {
	for _, tc := range []struct{ k, sample, want int }{
		{1000, 0, 200_000}, {4000, 0, 200_000}, {10_000, 0, 500_000}, {20_000, 0, 1_000_000}, {20_001, 0, 1_000_050},
		{100_000, 0, 5_000_000}, {1_000_000, 0, 20_000_000}, {1_000_000, 1_000_000, 1_000_000}, {10_000, 200_000, 200_000},
	} {
		o := Options{K: tc.k, Sample: tc.sample}
		if got := o.sample(); got != tc.want {
			t.Errorf("K = %d, Sample = %d: sample %d, want %d", tc.k, tc.sample, got, tc.want)
		}
		if drawn := tc.want > MaxOneWorkerSample; o.inParts() != drawn || (o.chunks() > 0) != drawn {
			t.Errorf("K = %d, sample %d: drawn in parts %v, chunks %d, want in parts and distributed %v", tc.k, tc.want, o.inParts(), o.chunks(), drawn)
		}
	}
}

// Only the floor of the default sample is held whole: every default
// sample that grows with the vocabulary is drawn in parts and trains in
// chunks, seeded from at most max(K, MinDefaultSample) descriptors, so no
// worker holds a sample that grows with K. The floor itself, the quick
// start's 1,000 words, trains on one worker.
func TestDefaultSampleAboveItsFloorInParts(t *testing.T) {
	for _, k := range []int{2, 1000, 4000} {
		if o := (Options{K: k}); o.inParts() || o.chunks() != 0 {
			t.Errorf("K = %d, sample %d: drawn in parts %v, chunks %d, want whole on one worker", k, o.sample(), o.inParts(), o.chunks())
		}
	}
	for _, k := range []int{4001, 10_000, 20_000, 100_000, 1_000_000} {
		o := Options{K: k}
		if !o.inParts() || o.chunks() == 0 || o.seedSample() > max(k, MinDefaultSample) {
			t.Errorf("K = %d, sample %d: drawn in parts %v, chunks %d, seeding %d, want in parts, distributed, seeding at most %d", k, o.sample(), o.inParts(), o.chunks(), o.seedSample(), max(k, MinDefaultSample))
		}
	}
}

// labelled returns n random descriptors, labels among the first k words
// and squared distances.
func labelled(r *rand.Rand, n, k int) ([]byte, []int32, []float32) {
	desc := make([]byte, n*formats.DescriptorSize)
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	labels := make([]int32, n)
	dist := make([]float32, n)
	for i := range labels {
		labels[i] = int32(r.IntN(k))
		dist[i] = float32(r.Float64() * 1e5)
	}
	return desc, labels, dist
}

// Partial sums merged in any grouping and order must be identical, and
// equal to the sums of all descriptors at once.
func TestMergeExactInAnyOrder(t *testing.T) {
	const k, d, n = 30, formats.DescriptorSize, 500
	r := rand.New(rand.NewPCG(3, 3))
	desc, labels, dist := labelled(r, n, k)
	sums := func(idx []int) partial {
		b := bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, k)}
		for _, i := range idx {
			b.add(desc[i*d:(i+1)*d], labels[i], dist[i])
		}
		return b.flush(2)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	want := sums(all)
	if !slices.IsSorted(want.Words) || len(want.Words) != k || want.N != n {
		t.Fatalf("flush gave %d words (sorted %v) and N=%d", len(want.Words), slices.IsSorted(want.Words), want.N)
	}
	for trial := range 5 {
		perm := r.Perm(n)
		parts := make([]partial, 1+r.IntN(9))
		cuts := append([]int{0}, slices.Sorted(slices.Values(r.Perm(n)[:len(parts)-1]))...)
		cuts = append(cuts, n)
		for i := range parts {
			parts[i] = sums(perm[cuts[i]:cuts[i+1]])
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		var acc, acc2 partial
		for _, p := range parts[:len(parts)/2] {
			acc = merge(acc, p)
		}
		for _, p := range parts[len(parts)/2:] {
			acc2 = merge(acc2, p)
		}
		got := merge(acc2, acc)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: %d parts merged differ from the sums of all descriptors", trial, len(parts))
		}
	}
}

// TestForestOptionsDefaults: setting only the checks, as --akm_checks
// does, keeps the default trees and leaves; a run once failed with "forest
// Trees = 0".
func TestForestOptionsDefaults(t *testing.T) {
	d := nn.DefaultForestOptions()
	got := Options{Seed: 7, Forest: nn.ForestOptions{Checks: 512}}.forest()
	if got.Trees != d.Trees || got.LeafSize != d.LeafSize || got.Checks != 512 || got.Seed != 7 {
		t.Errorf("forest options %+v, want the defaults with 512 checks and seed 7", got)
	}
	if err := got.Validate(); err != nil {
		t.Error(err)
	}
}

// Chunks stay within maxChunk descriptors and cover the sample in order.
func TestSplitBoundsChunks(t *testing.T) {
	const d = formats.DescriptorSize
	for _, tc := range []struct{ n, chunks, want int }{
		{10, 4, 4}, {3, 8, 3}, {maxChunk, 1, 1}, {maxChunk + 1, 1, 2}, {200_000, 8, (200_000 + maxChunk - 1) / maxChunk}, {200_000, 64, 64},
	} {
		smp := sample{Prio: make([]uint64, tc.n), Desc: make([]byte, tc.n*d)}
		for i := range smp.Desc {
			smp.Desc[i] = byte(i / d)
		}
		var got []chunk
		dir := t.TempDir()
		if err := (&writeChunksFn{Chunks: tc.chunks, K: 1, Dir: dir}).ProcessElement(context.Background(), smp, func(c chunk) { got = append(got, c) }); err != nil {
			t.Fatal(err)
		}
		var all []byte
		for _, c := range got {
			if c.N > maxChunk || c.Lo != len(all)/d || c.Total != tc.n {
				t.Errorf("n=%d chunks=%d: a chunk of %d descriptors from %d of %d", tc.n, tc.chunks, c.N, c.Lo, c.Total)
			}
			desc, err := readDesc(context.Background(), dir, c)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, desc...)
		}
		if len(got) != tc.want || !slices.Equal(all, smp.Desc) {
			t.Errorf("n=%d chunks=%d: %d chunks (covering the sample: %v), want %d", tc.n, tc.chunks, len(got), slices.Equal(all, smp.Desc), tc.want)
		}
	}
}

// A state cut into parts reads back whole in any order; a missing or
// repeated part is an error.
func TestStatePartsRoundTrip(t *testing.T) {
	const d = 4
	r := rand.New(rand.NewPCG(5, 5))
	for _, k := range []int{2, stateRows, stateRows + 1, 3*stateRows - 7} {
		st := state{Iter: 3, K: k, Dim: d, Centroids: make([]float32, k*d), Sampled: 99, Approx: true}
		for i := range st.Centroids {
			st.Centroids[i] = r.Float32()
		}
		var parts []state
		st.parts(func(p state) { parts = append(parts, p) })
		if want := (k + stateRows - 1) / stateRows; len(parts) != want {
			t.Fatalf("K=%d: %d parts, want %d", k, len(parts), want)
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		iter := func(ps []state) func(*state) bool {
			return func(p *state) bool {
				if len(ps) == 0 {
					return false
				}
				*p, ps = ps[0], ps[1:]
				return true
			}
		}
		got, ok, err := readState(iter(parts))
		if err != nil || !ok || !reflect.DeepEqual(got, st) {
			t.Fatalf("K=%d: read back ok=%v err=%v, equal %v", k, ok, err, reflect.DeepEqual(got, st))
		}
		if len(parts) > 1 {
			if _, _, err := readState(iter(parts[1:])); err == nil {
				t.Errorf("K=%d: a missing part went unnoticed", k)
			}
			if _, _, err := readState(iter(append([]state{parts[0]}, parts[:len(parts)-1]...))); err == nil {
				t.Errorf("K=%d: a repeated part went unnoticed", k)
			}
		}
	}
	if _, ok, err := readState(func(*state) bool { return false }); ok || err != nil {
		t.Errorf("no parts: ok=%v err=%v", ok, err)
	}
}

// Features written part by part give the vocabulary of the whole
// sample: the cut-off keeps every descriptor of the sample.
func TestVocabularyOfPartsSampleIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	feats := features(80, r)
	ps := writeParts(t, feats, t.TempDir(), 3)
	total := 0
	for _, p := range ps {
		total += int(p.Keypoints)
	}
	opt := Options{K: 12, Sample: 300, MaxIter: 4, Seed: 7, Approx: true, Chunks: 1}
	if 4*opt.Sample >= total {
		t.Fatalf("%d descriptors: the cut-off would keep them all", total)
	}
	want := reference(t, feats, opt)
	p, s := beam.NewPipelineWithRoot()
	opt.Output = t.TempDir()
	cb := VocabularyOfParts(s, beam.CreateList(s, ps), opt)
	beam.ParDo0(s, &checkFn{Name: "parts", Want: want, ObjTol: 0}, cb)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// The iterations run in one step up to OneStepWork = K × sample: by
// default every vocabulary of up to kmeans.KMeansPPMaxK words at its
// default sample, and none above; a negative bound never.
func TestOneStepBound(t *testing.T) {
	for _, tc := range []struct {
		k, sample int
		work      int64
		want      bool
	}{
		{10_000, 0, 0, true}, {kmeans.KMeansPPMaxK, 0, 0, true}, {kmeans.KMeansPPMaxK + 1, 0, 0, false},
		{100_000, 0, 0, false}, {100_000, 200_000, 0, true}, {1_000_000, 0, 0, false},
		{10_000, 0, -1, false}, {10_000, 0, 5_000_000_000, true}, {10_000, 0, 4_999_999_999, false},
	} {
		o := Options{K: tc.k, Sample: tc.sample, OneStepWork: tc.work}
		if got := o.oneStep(); got != tc.want {
			t.Errorf("K = %d, sample %d, OneStepWork %d: one step %v, want %v", tc.k, o.sample(), tc.work, got, tc.want)
		}
	}
}
