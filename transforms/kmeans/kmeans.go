// Package kmeans clusters dense float32 points with Lloyd's algorithm, exact
// or approximate. Its centroids are the visual words of a bag-of-words
// vocabulary.
//
// Points are stored row-major in one flat slice: point i of dimension dim is
// data[i*dim : (i+1)*dim]. Centroids are stored the same way.
//
// One Lloyd iteration is split into exported pieces — Assign (or
// Forest.Assign, IVF.Assign), Sums and Update, with Split to re-seed empty
// clusters — so that a distributed trainer can assign shards of the data and build
// partial Sums where the data lives, Merge them, and Update centrally.
// Train runs the same pieces on one machine.
//
// # Exact assignment
//
// Exact assignment (Assign, Nearest) compares every point with every
// centroid. Train, and quantisers of many points, do it through Exact,
// which gives Nearest's answers bit for bit but computes most of the
// distances as a float32 matrix product, ‖c‖² − 2·X·Cᵀ, over cache-sized
// tiles with an AVX2/FMA kernel, and re-checks the few near-best centroids
// with Nearest's own distance: 16 multiply-adds a cycle where Nearest's
// scalar loop does about one (on CPUs without AVX2, Exact is Nearest).
//
// # Approximate k-means
//
// Exact assignment compares every point with every centroid: O(n·K·dim) per
// iteration, which at K = 10⁵ words and n = 10⁶ descriptors is 10¹³
// multiply-adds. With Options.Approx, Train instead builds a Forest of
// randomised kd-trees over the current centroids at every iteration and
// assigns each point by a priority search bounded to ForestOptions.Checks
// distance computations (approximate k-means, Philbin et al., "Object
// retrieval with large vocabularies and fast spatial matching", CVPR 2007;
// the forest is FLANN's, Muja & Lowe 2009). An iteration then costs about
// n·(Checks·dim + log K) plus Trees·K·(log K + dim) to build the forest. A
// point keeps its previous cluster unless the forest finds a nearer
// centroid, so the objective falls monotonically as in exact Lloyd.
// Approximate assignment is also available on its own for quantising
// descriptors against a trained vocabulary: NewForest, Forest.Nearest and
// Forest.NearestBytes, and for soft assignment to several words the k
// nearest centroids, exactly (NearestK) or through the forest
// (Forest.NearestK, Forest.NearestKBytes).
//
// An IVF (Options.Index = IndexIVF) is the faster approximate search: the
// words are divided among √(Probes·K) coarse cells, and a batch of points
// is compared with the coarse centroids and then with the words of the
// Probes nearest cells, grouped by cell so that both steps are Exact's
// matrix-product kernel rather than one distance at a time. On real SIFT
// descriptors (cmd/akmbench -mode assign, ETH-80, one core, same run) the
// default 8 probes found the nearest of 10⁴ trained words for 95% of the
// descriptors at 3.8–4.0 µs each (16 probes: 98% at 6.3–6.6 µs), where the
// default forest found 91% at 29 µs (512 checks: 96% at 57 µs); of 10⁵
// sampled descriptors as words, 91% at 9.6–10.0 µs against 85% at 124–138
// µs with 512 checks. Of 10⁶, before the IVF read the points from their
// rows (which made it 1.5–1.6× faster at 10⁴ words, 1.2× at 10⁵), 87% at
// 34 µs (4 probes: 78% at 26 µs) against 60% at 123 µs (512 checks: 71%
// at 213 µs). Quantising the descriptors of real photos against a 10⁴-word
// vocabulary of the pipeline, an image at a time as the bags of words do
// (BenchmarkIVFQuantizeReal/image: 200,000 descriptors, 2,151 an image),
// costs 3.5–3.7 µs of CPU each, 5.7–6.4 µs before: 1.6×. Five AKM iterations at 10⁴ words on 2·10⁵ descriptors
// ended 0.19% above exact Lloyd's objective from the same start in 0.23 of
// its CPU time (the forest: 0.26% above, in 1.24 of it); three at 10⁵
// words on 3·10⁵ descriptors ended 0.92% above it in 1/15 of its CPU time
// (the forest: 2.13% above, in 1/4.8). IVF.Assign serves
// Lloyd iterations and IVF.QuantizeBytes bags of words.
//
// Initialisation is k-means++ below KMeansPPMaxK centroids (optionally on a
// sample of the points, Options.InitSample) and K random distinct points
// above it; KMeansPPMaxK explains why.
//
// # Memory
//
// For K centroids of dimension D = 128 (SIFT), float32:
//
//	K           centroids   Forest (8 trees,   Search (per    Sums
//	            (512·K B)   leaves of ≤ 8)     goroutine)     (1,036·K B)
//	10,000        5.1 MB       0.8 MB            40 kB           10 MB
//	100,000        51 MB       7.6 MB           0.4 MB          104 MB
//	1,000,000     512 MB        76 MB             4 MB          1.0 GB
//
// An Exact adds a packed copy of the centroids (as many bytes again) and an
// ExactScratch about 80 kB per goroutine, whatever K and the number of
// points. An IVF adds the same packed copy plus 4·K bytes of indices, and an
// IVFScratch of about 8·Batch·Probes bytes plus the batch widened to floats
// (2.5 MB by default for SIFT bytes) per goroutine.
//
// A Forest takes 4·K bytes of leaf indices per tree plus 16 bytes per node
// (about K/3 nodes per tree with leaves of at most 8), Forest.Bytes reports
// it; a Search keeps a 4·K-byte mark per centroid and a small queue. Train
// also holds labels and distances for the n points (8·n bytes) besides the
// points themselves (4·D·n bytes). A worker assigning descriptors needs the
// centroids, one Forest and one Search per goroutine: about 0.6 GB at a
// million words. Package kmeansbeam states the memory of the distributed
// trainer.
package kmeans

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// pcgStream is the second PCG seed word. Fixing it makes Options.Seed the
// only source of randomness, so equal seeds give identical vocabularies.
const pcgStream = 0x9e3779b97f4a7c15

// Options configures Train.
type Options struct {
	// K is the number of clusters. It must be at least 1 and at most the
	// number of points.
	K int

	// MaxIter bounds the number of Lloyd iterations (centroid updates). It
	// must be at least 1.
	MaxIter int

	// Tol stops training once an iteration lowers the objective by less than
	// Tol relative to its previous value: (J_prev − J) ≤ Tol·J_prev. Zero
	// runs until the assignment stops changing or MaxIter is reached.
	Tol float64

	// Seed seeds the k-means++ initialisation. Train is deterministic for a
	// given Seed and data.
	Seed uint64

	// Workers is the number of goroutines used for the assignment step;
	// 0 means runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int

	// Approx selects approximate k-means (AKM, Philbin et al., 2007): each
	// assignment step searches a Forest built with Forest.ForIteration(i)
	// over the current centroids instead of comparing every point with
	// every centroid. False keeps the exact assignment.
	Approx bool

	// Forest configures the forests of an approximate assignment; it is
	// ignored when Approx is false or Index is IndexIVF.
	Forest ForestOptions

	// Index chooses the structure an approximate assignment searches:
	// a Forest (the zero value) or an IVF, built with
	// IVFOptions.ForIteration(i) over the current centroids at every
	// iteration and configured by IVF.
	Index Index
	IVF   IVFOptions

	// Init chooses how the initial centroids are drawn.
	Init Init

	// InitSample, if positive, runs k-means++ on that many points drawn
	// uniformly without replacement instead of on all of them, which
	// divides its O(n·K·dim) cost by n/InitSample. It must then be at least
	// K. Zero uses every point.
	InitSample int

	// Reseed chooses how clusters left empty by an update are re-seeded.
	Reseed Reseed

	// Progress, if not nil, is told how far Train, TrainFrom and
	// Initialize have got (see Progress), on their goroutine, so that a
	// caller can tell a person: this package logs nothing. k-means++
	// calls it once per centroid chosen, so it must be cheap; a caller
	// rate-limits its lines. It does not change the result.
	Progress func(Progress)
}

// Progress is a step of the training, as Options.Progress is told it.
type Progress struct {
	// Seeding is true while the initial centroids are chosen, of which
	// Seeded of K are: k-means++ tells every centroid it chooses, a random
	// start its K points once drawn.
	Seeding   bool
	Seeded, K int

	// Iteration is the Lloyd iteration whose assignment has just ended:
	// 0 for the initial centroids', i after the i-th update. Objective is
	// its J, Changed the number of points whose cluster it changed (all of
	// them at 0), and Reseeded the empty clusters re-seeded by the update
	// before it.
	Iteration, Changed, Reseeded int
	Objective                    float64
}

// report tells o.Progress p, if o has one.
func (o Options) report(p Progress) {
	if o.Progress != nil {
		o.Progress(p)
	}
}

// Index is a structure for approximate assignment.
type Index int

const (
	// IndexForest searches a Forest of randomised kd-trees.
	IndexForest Index = iota

	// IndexIVF searches an IVF, an inverted file over coarse cells of the
	// centroids, with Exact's kernel.
	IndexIVF
)

// Init is an initialisation method.
type Init int

const (
	// InitAuto is InitKMeansPP for K < KMeansPPMaxK and InitRandom above.
	InitAuto Init = iota

	// InitKMeansPP seeds by k-means++ (KMeansPP) on all points or on
	// Options.InitSample of them.
	InitKMeansPP

	// InitRandom takes K distinct points drawn uniformly without
	// replacement: O(n) work, and Lloyd's first iterations refine it.
	InitRandom
)

// KMeansPPMaxK is the largest K for which InitAuto uses k-means++.
//
// k-means++ scans every (sampled) point once per centre chosen, O(n·K·dim)
// in all and inherently sequential over the K centres: at K = 10⁵ on 10⁶
// points that is 10¹³ multiply-adds, more than a hundred exact Lloyd
// iterations' worth, and at K = 10⁶ a hundred times more again. k-means‖
// (Bahmani et al., 2012) parallelises the passes but still needs the
// distance from every point to a candidate set of ~2K·rounds centres per
// round and then a weighted k-means++ over those candidates, O(K²) — too
// slow for a million words as well. Above this size the vocabulary is
// seeded with K distinct random points instead (as Philbin et al. did for
// their 10⁶-word AKM vocabularies): with ≥ 10 points per cluster the random
// seeds are dense wherever the data are, which is where a vocabulary needs
// words, and the cost of a worse start is paid in a few cheap AKM
// iterations rather than in the seeding.
const KMeansPPMaxK = 20000

// Reseed is a rule for re-seeding empty clusters.
type Reseed int

const (
	// ReseedAuto is ReseedFarthest for exact assignment and ReseedSplit
	// for approximate assignment.
	ReseedAuto Reseed = iota

	// ReseedFarthest moves each empty cluster's centroid onto one of the
	// points farthest from their centroids. It needs every point's
	// distance, so it suits a trainer that holds all points.
	ReseedFarthest

	// ReseedSplit splits the largest clusters (Split). It needs only the
	// cluster counts, so a distributed trainer can apply it from merged
	// Sums; kmeansbeam does.
	ReseedSplit
)

// Validate reports whether o is usable, independently of any data.
func (o Options) Validate() error {
	switch {
	case o.K < 1:
		return fmt.Errorf("kmeans: K = %d, want at least 1", o.K)
	case o.MaxIter < 1:
		return fmt.Errorf("kmeans: MaxIter = %d, want at least 1", o.MaxIter)
	case !(o.Tol >= 0): // also rejects NaN
		return fmt.Errorf("kmeans: Tol = %v, want a non-negative number", o.Tol)
	case o.Workers < 0:
		return fmt.Errorf("kmeans: Workers = %d, want 0 (GOMAXPROCS) or more", o.Workers)
	case o.Init < InitAuto || o.Init > InitRandom:
		return fmt.Errorf("kmeans: Init = %d, want InitAuto, InitKMeansPP or InitRandom", o.Init)
	case o.InitSample < 0 || (o.InitSample > 0 && o.InitSample < o.K):
		return fmt.Errorf("kmeans: InitSample = %d, want 0 (all points) or at least K = %d", o.InitSample, o.K)
	case o.Reseed < ReseedAuto || o.Reseed > ReseedSplit:
		return fmt.Errorf("kmeans: Reseed = %d, want ReseedAuto, ReseedFarthest or ReseedSplit", o.Reseed)
	}
	if o.Approx {
		switch o.Index {
		case IndexForest:
			return o.Forest.Validate()
		case IndexIVF:
			return o.IVF.Validate()
		default:
			return fmt.Errorf("kmeans: Index = %d, want IndexForest or IndexIVF", o.Index)
		}
	}
	return nil
}

// initMethod resolves InitAuto.
func (o Options) initMethod() Init {
	if o.Init == InitAuto {
		if o.K < KMeansPPMaxK {
			return InitKMeansPP
		}
		return InitRandom
	}
	return o.Init
}

// reseedRule resolves ReseedAuto.
func (o Options) reseedRule() Reseed {
	if o.Reseed == ReseedAuto {
		if o.Approx {
			return ReseedSplit
		}
		return ReseedFarthest
	}
	return o.Reseed
}

// Result is a trained clustering.
type Result struct {
	// Centroids holds K centroids of dimension Dim, row-major.
	Centroids []float32
	K, Dim    int

	// Objective is the mean squared Euclidean distance from each point to
	// its nearest centroid in Centroids: J = (1/n) Σ_i min_c ‖x_i − c‖².
	Objective float64

	// Iterations is the number of Lloyd updates performed (at most
	// Options.MaxIter).
	Iterations int

	// Converged reports whether training stopped because the assignment
	// reached a fixed point, the objective reached zero, or the relative
	// improvement fell to Options.Tol — rather than because it ran out of
	// iterations.
	Converged bool
}

// Train clusters the n = len(data)/dim points of data into opt.K clusters.
//
// Centroids start from Initialize — by default k-means++ (KMeansPP) seeded
// by opt.Seed — and are then refined by Lloyd iterations, as TrainFrom
// describes: Train(data, dim, opt) is TrainFrom(data, dim, Initialize(data,
// dim, opt), opt).
//
// K greater than the number of points is an error rather than being clamped:
// callers size downstream structures (the vocabulary) by K, so silently
// returning fewer centroids would move the error somewhere harder to find.
// Data with fewer distinct points than K is accepted; some centroids are then
// duplicates and their clusters stay empty, and the objective is zero.
func Train(data []float32, dim int, opt Options) (Result, error) {
	n, err := check(data, dim, opt)
	if err != nil {
		return Result{}, err
	}
	return train(data, dim, n, initialize(data, dim, n, opt), opt), nil
}

// Initialize returns the K×dim initial centroids, row-major, that Train
// starts from, chosen by opt.Init from the n = len(data)/dim points of data
// and seeded by opt.Seed:
//
//   - InitKMeansPP: KMeansPP over all points, or over opt.InitSample points
//     drawn uniformly without replacement;
//   - InitRandom: K distinct points drawn uniformly without replacement, in
//     the order drawn;
//   - InitAuto: InitKMeansPP if K < KMeansPPMaxK, else InitRandom.
//
// Only opt.K, opt.Seed, opt.Init and opt.InitSample matter, so the same
// start can be refined with exact and approximate assignment and the two
// compared.
func Initialize(data []float32, dim int, opt Options) ([]float32, error) {
	n, err := check(data, dim, opt)
	if err != nil {
		return nil, err
	}
	return initialize(data, dim, n, opt), nil
}

// TrainFrom refines the K×dim centroids (row-major, as Initialize returns
// them; TrainFrom works on a copy) by Lloyd iterations over the
// n = len(data)/dim points of data.
//
// Each iteration assigns every point to its nearest centroid — exactly, or
// with a Forest built with opt.Forest.ForIteration(i) over the current
// centroids if opt.Approx, keeping a point's previous cluster unless the
// forest finds a nearer one (see Forest.Assign) — and moves every centroid
// to the mean of its points. Training stops after opt.MaxIter updates, when
// the objective J = (1/n) Σ_i ‖x_i − c(x_i)‖² reaches zero, when an update
// lowers J by at most opt.Tol·J_prev, or when no label changes and no
// cluster was re-seeded (a fixed point).
//
// A cluster left empty by an update is re-seeded by opt.Reseed:
// ReseedFarthest moves its centroid onto the point farthest from its
// assigned centroid (the largest-distance points, ties to the lower index,
// one per empty cluster in ascending cluster order), the point the current
// clustering explains worst; ReseedSplit splits the largest clusters (Split).
//
// With opt.Approx, Result.Objective is measured with the approximate
// assignment, an upper bound on the exact objective of the centroids
// returned.
func TrainFrom(data []float32, dim int, centroids []float32, opt Options) (Result, error) {
	n, err := check(data, dim, opt)
	if err != nil {
		return Result{}, err
	}
	if len(centroids) != opt.K*dim {
		return Result{}, fmt.Errorf("kmeans: %d initial centroid values, want K×dim = %d×%d", len(centroids), opt.K, dim)
	}
	if i := nonFinite(centroids); i >= 0 {
		return Result{}, fmt.Errorf("kmeans: initial centroid %d coordinate %d is %v, want a finite value", i/dim, i%dim, centroids[i])
	}
	return train(data, dim, n, slices.Clone(centroids), opt), nil
}

// check validates opt and data and returns the number of points.
func check(data []float32, dim int, opt Options) (int, error) {
	if err := opt.Validate(); err != nil {
		return 0, err
	}
	n, err := checkData(data, dim)
	if err != nil {
		return 0, err
	}
	if opt.K > n {
		return 0, fmt.Errorf("kmeans: K = %d exceeds the number of points %d", opt.K, n)
	}
	if i := nonFinite(data); i >= 0 {
		return 0, fmt.Errorf("kmeans: point %d coordinate %d is %v, want a finite value", i/dim, i%dim, data[i])
	}
	return n, nil
}

// nonFinite returns the index of the first NaN or infinite value of x, or −1.
func nonFinite(x []float32) int {
	for i, v := range x {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}

// initialize is Initialize on checked arguments.
func initialize(data []float32, dim, n int, opt Options) []float32 {
	rng := rand.New(rand.NewPCG(opt.Seed, pcgStream))
	switch opt.initMethod() {
	case InitRandom:
		idx := distinctSample(n, opt.K, rng)
		cent := make([]float32, opt.K*dim)
		for j, i := range idx {
			copy(cent[j*dim:(j+1)*dim], data[int(i)*dim:])
		}
		opt.report(Progress{Seeding: true, Seeded: opt.K, K: opt.K})
		return cent
	default:
		seeded := func(j int) { opt.report(Progress{Seeding: true, Seeded: j, K: opt.K}) }
		if opt.Progress == nil {
			seeded = nil
		}
		if opt.InitSample == 0 || opt.InitSample >= n {
			// Drawing nothing before KMeansPP keeps the centroids of
			// earlier versions, which always seeded on every point.
			return kmeansPP(data, dim, opt.K, rng, seeded)
		}
		idx := distinctSample(n, opt.InitSample, rng)
		// Ascending order reads data sequentially; the sample is a set.
		slices.Sort(idx)
		sub := make([]float32, len(idx)*dim)
		for j, i := range idx {
			copy(sub[j*dim:(j+1)*dim], data[int(i)*dim:])
		}
		return kmeansPP(sub, dim, opt.K, rng, seeded)
	}
}

// distinctSample returns m distinct indices in [0, n) drawn uniformly, in
// the order drawn, by a partial Fisher–Yates shuffle.
func distinctSample(n, m int, rng *rand.Rand) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	for i := range m {
		j := i + rng.IntN(n-i)
		p[i], p[j] = p[j], p[i]
	}
	return p[:m:m]
}

// train runs Lloyd iterations from cent, which it owns.
func train(data []float32, dim, n int, cent []float32, opt Options) Result {
	workers := opt.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	t := &trainer{
		data:      data,
		dim:       dim,
		n:         n,
		workers:   min(workers, n),
		centroids: cent,
		labels:    make([]int32, n),
		dist:      make([]float32, n),
		sums:      NewSums(opt.K, dim),
	}
	if opt.Approx && opt.Index == IndexIVF {
		t.ivf = opt.IVF
		t.ivfScratch = make([]IVFScratch, t.workers)
	} else if opt.Approx {
		t.forest = opt.Forest
		t.searches = make([]Search, t.workers)
	}
	for i := range t.labels {
		t.labels[i] = -1
	}

	changed := t.assign(0)
	t.accumulate()
	res := Result{K: opt.K, Dim: dim}
	obj := t.sums.SSE / float64(n)
	opt.report(Progress{K: opt.K, Seeded: opt.K, Changed: changed, Objective: obj})
	rule := opt.reseedRule()
	for obj > 0 && res.Iterations < opt.MaxIter {
		empty := Update(t.centroids, t.sums)
		if rule == ReseedSplit {
			Split(t.centroids, dim, t.sums.Count, empty)
		} else {
			t.reseed(empty)
		}
		res.Iterations++
		changed := t.assign(res.Iterations)
		t.accumulate()
		prev := obj
		obj = t.sums.SSE / float64(n)
		opt.report(Progress{K: opt.K, Seeded: opt.K, Iteration: res.Iterations, Changed: changed, Reseeded: len(empty), Objective: obj})
		// Unchanged labels with no re-seeding mean the next update would
		// reproduce the same centroids: a fixed point, whatever Tol says.
		// (With approximate assignment the next forest could still find
		// nearer centroids for a few points, but the objective would not
		// have moved either.)
		if (changed == 0 && len(empty) == 0) || prev-obj <= opt.Tol*prev {
			res.Converged = true
			break
		}
	}
	if obj == 0 {
		res.Converged = true
	}
	res.Centroids = t.centroids
	res.Objective = obj
	return res
}

// checkData returns the number of points in data, or an error if data is not
// a non-empty whole number of points of dimension dim.
func checkData(data []float32, dim int) (int, error) {
	if dim < 1 {
		return 0, fmt.Errorf("kmeans: dimension %d, want at least 1", dim)
	}
	if len(data)%dim != 0 {
		return 0, fmt.Errorf("kmeans: %d values is not a whole number of %d-dimensional points", len(data), dim)
	}
	if len(data) == 0 {
		return 0, errors.New("kmeans: no points")
	}
	return len(data) / dim, nil
}

// trainer holds the state of one Train call.
type trainer struct {
	data      []float32
	dim, n    int
	workers   int
	centroids []float32
	labels    []int32   // labels[i] is the cluster of point i
	dist      []float32 // dist[i] is ‖x_i − centroid(labels[i])‖²
	sums      *Sums
	order     []int32 // scratch for reseed, allocated on first use

	// forest is the configuration of approximate assignment, used only
	// when searches is non-nil; searches holds one scratch per worker.
	forest   ForestOptions
	searches []Search

	// ivf is the configuration of approximate assignment through an IVF,
	// used only when ivfScratch (one per worker) is non-nil.
	ivf        IVFOptions
	ivfScratch []IVFScratch

	// exact holds one scratch per worker for exact assignment (Exact),
	// allocated on first use.
	exact []ExactScratch
}

// assign runs Assign (through Exact, which gives the same labels and
// distances faster), or a Forest's or an IVF's Assign for approximate
// training, over contiguous shards of the points, one per worker, for Lloyd
// iteration iter (0 for the initial centroids). Each point's label depends
// only on that point, the centroids and the iteration's forest or IVF, so
// the sharding does not affect the result.
func (t *trainer) assign(iter int) (changed int) {
	var f *Forest
	var e *Exact
	var v *IVF
	if t.ivfScratch != nil {
		var err error
		if v, err = NewIVF(t.centroids, t.dim, t.ivf.ForIteration(iter)); err != nil {
			// As for the forest below.
			panic(err)
		}
	} else if t.searches == nil {
		e = NewExact(t.centroids, t.dim)
		if len(t.exact) < max(1, t.workers) {
			t.exact = make([]ExactScratch, max(1, t.workers))
		}
	} else {
		var err error
		f, err = NewForest(t.centroids, t.dim, t.forest.ForIteration(iter))
		if err != nil {
			// Options were validated and centroids are means of finite
			// points or split copies of them.
			panic(err)
		}
	}
	run := func(w, lo, hi int) int {
		if v != nil {
			return v.Assign(t.data[lo*t.dim:hi*t.dim], t.labels[lo:hi], t.dist[lo:hi], &t.ivfScratch[w])
		}
		if f != nil {
			return f.Assign(t.data[lo*t.dim:hi*t.dim], t.labels[lo:hi], t.dist[lo:hi], &t.searches[w])
		}
		return e.Assign(t.data[lo*t.dim:hi*t.dim], t.labels[lo:hi], t.dist[lo:hi], &t.exact[w])
	}
	if t.workers <= 1 {
		return run(0, 0, t.n)
	}
	counts := make([]int, t.workers)
	var wg sync.WaitGroup
	for w := range t.workers {
		lo, hi := w*t.n/t.workers, (w+1)*t.n/t.workers
		wg.Go(func() { counts[w] = run(w, lo, hi) })
	}
	wg.Wait()
	for _, c := range counts {
		changed += c
	}
	return changed
}

// accumulate rebuilds t.sums from the current assignment.
//
// Floating-point addition is not associative, so per-worker partial sums
// over point ranges that depend on Workers would make the centroids depend
// on Workers in their last bits. Instead each worker owns a range of
// coordinates (columns) and adds every point in ascending order: each sum is
// formed in exactly the order Sums.Add uses, whatever the number of workers,
// and no K×Dim partial buffers are needed. This step costs O(n·Dim) against
// O(n·K·Dim) for assignment.
func (t *trainer) accumulate() {
	s := t.sums
	s.Reset()
	for i, c := range t.labels {
		s.Count[c]++
		s.SSE += float64(t.dist[i])
	}
	// Column ranges are multiples of 8 float64s (64 bytes) so that, for the
	// usual dimensions (multiples of 8, like SIFT's 128), workers do not
	// write to the same cache lines of s.Sum.
	const align = 8
	blocks := (t.dim + align - 1) / align
	w := min(t.workers, blocks)
	if w <= 1 {
		addColumns(s.Sum, t.dim, t.data, t.labels, 0, t.dim)
		return
	}
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*blocks/w*align, min((i+1)*blocks/w*align, t.dim)
		wg.Go(func() { addColumns(s.Sum, t.dim, t.data, t.labels, lo, hi) })
	}
	wg.Wait()
}

// reseed moves the centroid of each empty cluster onto one of the points
// farthest from their assigned centroids: the i-th empty cluster (ascending)
// gets the i-th farthest point, ties broken by lower point index.
func (t *trainer) reseed(empty []int) {
	if len(empty) == 0 {
		return
	}
	if t.order == nil {
		t.order = make([]int32, t.n)
	}
	for i := range t.order {
		t.order[i] = int32(i)
	}
	dist := t.dist
	slices.SortFunc(t.order, func(a, b int32) int {
		switch {
		case dist[a] > dist[b]:
			return -1
		case dist[a] < dist[b]:
			return 1
		}
		return int(a) - int(b)
	})
	for j, c := range empty {
		p := int(t.order[j]) // len(empty) < K ≤ n
		copy(t.centroids[c*t.dim:(c+1)*t.dim], t.data[p*t.dim:(p+1)*t.dim])
	}
}

// KMeansPP chooses k initial centroids from the n = len(data)/dim points by
// k-means++ seeding (Arthur & Vassilvitskii, 2007): the first uniformly at
// random, each next one with probability proportional to D(x)², the squared
// distance from x to the nearest centroid chosen so far. When every point
// already coincides with a chosen centroid (D ≡ 0) the next one is drawn
// uniformly, so duplicates appear only if the data has fewer than k distinct
// points. It returns the k×dim centroids, row-major.
//
// The choice depends only on data and the state of rng, not on the number
// of goroutines that compute the distances (up to GOMAXPROCS, with at least
// 4,096 points each). KMeansPP panics if dim < 1, len(data) is not a
// positive multiple of dim, or k is not in [1, n].
func KMeansPP(data []float32, dim, k int, rng *rand.Rand) []float32 {
	return kmeansPP(data, dim, k, rng, nil)
}

// kmeansPP is KMeansPP that calls seeded (if not nil) with the number of
// centroids chosen after each.
func kmeansPP(data []float32, dim, k int, rng *rand.Rand, seeded func(int)) []float32 {
	n, err := checkData(data, dim)
	if err != nil {
		panic(err)
	}
	if k < 1 || k > n {
		panic(fmt.Sprintf("kmeans: KMeansPP k = %d, want 1 ≤ k ≤ %d points", k, n))
	}
	cent := make([]float32, k*dim)
	d2 := make([]float32, n)
	workers := min(runtime.GOMAXPROCS(0), n/kmeansPPGrain)
	copy(cent, data[rng.IntN(n)*dim:])
	inf := float32(math.Inf(1))
	var total float64
	for i := range n {
		d2[i] = sqDist(data[i*dim:(i+1)*dim], cent[:dim], inf)
		total += float64(d2[i])
	}
	if seeded != nil {
		seeded(1)
	}
	for j := 1; j < k; j++ {
		p := -1
		if total > 0 {
			u := rng.Float64() * total
			var acc float64
			for i, d := range d2 {
				acc += float64(d)
				if acc > u {
					p = i
					break
				}
			}
			if p < 0 {
				// Rounding left u beyond the running sum: take the last
				// point that has any weight.
				for p = n - 1; d2[p] == 0; p-- {
				}
			}
		} else {
			p = rng.IntN(n)
		}
		c := cent[j*dim : (j+1)*dim]
		copy(c, data[p*dim:(p+1)*dim])
		// The distances are independent per point and run in parallel;
		// the total is then summed in point order so that it, and every
		// later choice, does not depend on the number of goroutines.
		if workers <= 1 {
			lowerD2(data, dim, c, d2)
		} else {
			var wg sync.WaitGroup
			for w := range workers {
				lo, hi := w*n/workers, (w+1)*n/workers
				wg.Go(func() { lowerD2(data[lo*dim:hi*dim], dim, c, d2[lo:hi]) })
			}
			wg.Wait()
		}
		total = 0
		for _, d := range d2 {
			total += float64(d)
		}
		if seeded != nil {
			seeded(j + 1)
		}
	}
	return cent
}

// kmeansPPGrain is the fewest points per goroutine in KMeansPP: below it the
// cost of starting goroutines for every centre outweighs the distances.
const kmeansPPGrain = 4096

// lowerD2 lowers d2[i] to the squared distance from point i of data to c
// where that is smaller.
func lowerD2(data []float32, dim int, c []float32, d2 []float32) {
	i := 0
	if useFMA && dim%16 == 0 {
		// Four points at a time, with the same sums bit for bit, so the
		// centres chosen do not depend on the CPU.
		var out [4]float32
		for ; i+4 <= len(d2); i += 4 {
			sqDist4AVX(&data[i*dim : (i+4)*dim][0], dim, &c[:dim][0], &d2[i : i+4][0], &out)
			for p, d := range out {
				if d < d2[i+p] {
					d2[i+p] = d
				}
			}
		}
	}
	for ; i < len(d2); i++ {
		// Bounding by the current D² lets most distances stop early.
		if d := sqDist(data[i*dim:(i+1)*dim], c, d2[i]); d < d2[i] {
			d2[i] = d
		}
	}
}

// Nearest returns the index of the centroid closest to x in squared
// Euclidean distance, and that distance. Ties go to the lowest index.
// centroids holds len(centroids)/dim centroids row-major. Nearest does not
// allocate. It panics if dim < 1, len(x) ≠ dim, or len(centroids) is not a
// positive multiple of dim.
func Nearest(centroids []float32, dim int, x []float32) (int, float32) {
	if dim < 1 || len(x) != dim || len(centroids) == 0 || len(centroids)%dim != 0 {
		panic(fmt.Sprintf("kmeans: Nearest with dim %d, %d centroid values and a point of length %d", dim, len(centroids), len(x)))
	}
	best, bd := 0, sqDist(centroids[:dim], x, float32(math.Inf(1)))
	for c, off := 1, dim; off < len(centroids) && bd > 0; c, off = c+1, off+dim {
		if d := sqDist(centroids[off:off+dim], x, bd); d < bd {
			best, bd = c, d
		}
	}
	return best, bd
}

// sqDist returns ‖a − b‖², or some value ≥ bound as soon as the partial sum
// reaches bound; len(b) must be at least len(a).
//
// Early exit is exact for nearest-neighbour search: every term is
// non-negative and rounding is monotone, so the complete sum can only be at
// least the partial one. Four accumulators break the dependency chain of
// the additions.
func sqDist(a, b []float32, bound float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+16 <= len(a); i += 16 {
		x := a[i : i+16 : i+16]
		y := b[i : i+16 : i+16]
		d0, d1, d2, d3 := x[0]-y[0], x[1]-y[1], x[2]-y[2], x[3]-y[3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		d0, d1, d2, d3 = x[4]-y[4], x[5]-y[5], x[6]-y[6], x[7]-y[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		d0, d1, d2, d3 = x[8]-y[8], x[9]-y[9], x[10]-y[10], x[11]-y[11]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		d0, d1, d2, d3 = x[12]-y[12], x[13]-y[13], x[14]-y[14], x[15]-y[15]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		if s := (s0 + s1) + (s2 + s3); s >= bound {
			return s
		}
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

// Assign sets labels[i] to the index of the centroid nearest to point i of
// data and dist[i] to its squared distance, as Nearest does, and returns how
// many labels changed from their previous value (initialise labels to −1 to
// count every point). It does not allocate. It panics if the lengths of
// data, labels and dist disagree or dim and centroids are inconsistent.
func Assign(centroids []float32, dim int, data []float32, labels []int32, dist []float32) (changed int) {
	if dim < 1 || len(data)%dim != 0 || len(labels) != len(data)/dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("kmeans: Assign with dim %d, %d data values, %d labels, %d distances", dim, len(data), len(labels), len(dist)))
	}
	for i := range labels {
		c, d := Nearest(centroids, dim, data[i*dim:(i+1)*dim])
		if labels[i] != int32(c) {
			labels[i] = int32(c)
			changed++
		}
		dist[i] = d
	}
	return changed
}

// Sums holds the sufficient statistics of an assignment: per-cluster sums of
// the assigned points, their counts, and the total squared distance. Partial
// Sums over disjoint sets of points Merge into the Sums of their union. The
// fields are exported so that Sums can be encoded as a combiner accumulator.
type Sums struct {
	// K and Dim are the number of clusters and the dimension.
	K, Dim int

	// Sum[c*Dim+j] = Σ_{i ∈ cluster c} x_ij, kept in float64 so that large
	// clusters do not lose the low-order bits of their members.
	Sum []float64

	// Count[c] is the number of points assigned to cluster c.
	Count []int64

	// SSE = Σ_i ‖x_i − centroid(i)‖², the unnormalised objective.
	SSE float64
}

// NewSums returns zeroed Sums for k clusters of dimension dim.
// It panics if k or dim is less than 1.
func NewSums(k, dim int) *Sums {
	if k < 1 || dim < 1 {
		panic(fmt.Sprintf("kmeans: NewSums(%d, %d), want positive sizes", k, dim))
	}
	return &Sums{K: k, Dim: dim, Sum: make([]float64, k*dim), Count: make([]int64, k)}
}

// Reset zeroes s, keeping its storage.
func (s *Sums) Reset() {
	clear(s.Sum)
	clear(s.Count)
	s.SSE = 0
}

// Add accumulates the points of data with their labels and squared distances
// (as filled by Assign), in ascending point order. It does not allocate.
// It panics on inconsistent lengths or a label outside [0, K).
func (s *Sums) Add(data []float32, labels []int32, dist []float32) {
	if len(data) != len(labels)*s.Dim || len(dist) != len(labels) {
		panic(fmt.Sprintf("kmeans: Sums.Add with dim %d: %d data values, %d labels, %d distances", s.Dim, len(data), len(labels), len(dist)))
	}
	for i, c := range labels {
		s.Count[c]++
		s.SSE += float64(dist[i])
	}
	addColumns(s.Sum, s.Dim, data, labels, 0, s.Dim)
}

// addColumns adds columns [lo, hi) of each point to the row of sum given by
// its label, in ascending point order.
func addColumns(sum []float64, dim int, data []float32, labels []int32, lo, hi int) {
	for i, c := range labels {
		x := data[i*dim+lo : i*dim+hi]
		row := sum[int(c)*dim+lo : int(c)*dim+hi]
		row = row[:len(x)]
		for j, v := range x {
			row[j] += float64(v)
		}
	}
}

// Merge adds o into s. It panics if their shapes differ.
func (s *Sums) Merge(o *Sums) {
	if s.K != o.K || s.Dim != o.Dim {
		panic(fmt.Sprintf("kmeans: merging Sums of shape %d×%d into %d×%d", o.K, o.Dim, s.K, s.Dim))
	}
	for i, v := range o.Sum {
		s.Sum[i] += v
	}
	for i, v := range o.Count {
		s.Count[i] += v
	}
	s.SSE += o.SSE
}

// Update sets each centroid with a non-empty cluster to the mean of its
// points, Sum[c]/Count[c], and returns the clusters that are empty in
// ascending order (nil if none). Empty clusters keep their centroid; the
// caller decides how to re-seed them. It panics if len(centroids) ≠ K·Dim.
func Update(centroids []float32, s *Sums) (empty []int) {
	if len(centroids) != s.K*s.Dim {
		panic(fmt.Sprintf("kmeans: Update of %d centroid values with Sums of shape %d×%d", len(centroids), s.K, s.Dim))
	}
	for c, cnt := range s.Count {
		if cnt == 0 {
			empty = append(empty, c)
			continue
		}
		n := float64(cnt)
		row := centroids[c*s.Dim : (c+1)*s.Dim]
		sum := s.Sum[c*s.Dim : (c+1)*s.Dim]
		for j := range row {
			row[j] = float32(sum[j] / n)
		}
	}
	return empty
}

// splitEps is the relative perturbation that separates the two halves of a
// split cluster (FAISS's EPS = 1/1024): small against a cluster's radius, so
// the halves start inside the cluster, and large against float32 rounding.
const splitEps = 1.0 / 1024

// Split re-seeds the empty clusters of an update by splitting large ones,
// as FAISS does. It visits empty in the given order (Update returns it
// ascending); for each empty cluster e it takes the cluster m with the
// largest count — counting a cluster already split as two halves, ties to
// the lower index — copies m's centroid to e and pushes the two copies
// apart by ±δ_j in every coordinate j, with alternating signs:
//
//	c_e[j] = c_m[j] + s_j·δ_j,  c_m[j] −= s_j·δ_j,  s_j = (−1)^j,
//	δ_j = ε·max(|c_m[j]|, mean_j |c_m[j]|),  ε = 1/1024
//
// (δ_j = ε if the centroid is zero). The next assignment then divides m's
// points between the two. Clusters with at most one point are never split;
// if no cluster has two, the remaining empty clusters keep their centroids.
//
// Split needs only the counts of the update, so a distributed trainer can
// apply it to merged Sums and get what Train gets. It is deterministic and
// allocates O(K). It panics if len(centroids) ≠ len(count)·dim or an empty
// index is out of range.
func Split(centroids []float32, dim int, count []int64, empty []int) {
	if dim < 1 || len(centroids) != len(count)*dim {
		panic(fmt.Sprintf("kmeans: Split of %d centroid values with dim %d and %d counts", len(centroids), dim, len(count)))
	}
	if len(empty) == 0 {
		return
	}
	h := make(sizeHeap, 0, len(count))
	for c, n := range count {
		if n > 1 {
			h = append(h, clusterSize{n, int32(c)})
		}
	}
	heap.Init(&h)
	for _, e := range empty {
		if e < 0 || e >= len(count) {
			panic(fmt.Sprintf("kmeans: Split of empty cluster %d of %d", e, len(count)))
		}
		if len(h) == 0 {
			return
		}
		top := heap.Pop(&h).(clusterSize)
		m := int(top.c)
		src := centroids[m*dim : (m+1)*dim]
		dst := centroids[e*dim : (e+1)*dim]
		var scale float64
		for _, v := range src {
			scale += math.Abs(float64(v))
		}
		scale /= float64(dim)
		for j, v := range src {
			d := splitEps * max(math.Abs(float64(v)), scale)
			if d == 0 {
				d = splitEps
			}
			if j%2 == 1 {
				d = -d
			}
			dst[j] = float32(float64(v) + d)
			src[j] = float32(float64(v) - d)
		}
		// Each half is expected to get half of the points: offer them to
		// the next empty clusters in that proportion.
		if a := top.n - top.n/2; a > 1 {
			heap.Push(&h, clusterSize{a, int32(m)})
		}
		if b := top.n / 2; b > 1 {
			heap.Push(&h, clusterSize{b, int32(e)})
		}
	}
}

// clusterSize is a cluster and its (expected) number of points.
type clusterSize struct {
	n int64
	c int32
}

// sizeHeap is a max-heap of clusters by size, ties to the lower index, for
// container/heap. The order is total on distinct clusters, so the order of
// the pops does not depend on how the heap arranges its elements.
type sizeHeap []clusterSize

func (h sizeHeap) Len() int { return len(h) }

func (h sizeHeap) Less(i, j int) bool {
	return h[i].n > h[j].n || (h[i].n == h[j].n && h[i].c < h[j].c)
}

func (h sizeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

func (h *sizeHeap) Push(x any) { *h = append(*h, x.(clusterSize)) }

func (h *sizeHeap) Pop() any {
	s := *h
	x := s[len(s)-1]
	*h = s[:len(s)-1]
	return x
}
