// Package kmeans clusters dense float32 points with Lloyd's algorithm, exact
// or approximate. Its centroids are the visual words of a bag-of-words
// vocabulary.
//
// Points are stored row-major in one flat slice: point i of dimension dim is
// data[i*dim : (i+1)*dim]. Centroids are stored the same way.
//
// The search that assigns points to centroids is package nn's: Train
// assigns through an nn.Exact, which gives nn.Nearest's answers bit for bit
// with a matrix-product kernel, or with Options.Approx through an nn.IVF or
// an nn.Forest rebuilt over the centroids at every iteration.
//
// # One iteration, in pieces
//
// Lloyd's iteration is split into exported pieces so that a distributed
// trainer runs what Train runs: an assignment (nn.Exact.Assign,
// nn.Forest.Assign or nn.IVF.Assign over the index of Options.Index for
// the iteration), Sums of the assigned points (Add where the points are,
// Merge the partial sums), Update to the means, Split to re-seed empty
// clusters, and Options.Stop, the one stopping rule. Train runs the same
// pieces on one machine; package kmeansbeam distributes them.
//
// # Approximate k-means
//
// Exact assignment compares every point with every centroid: O(n·K·dim) per
// iteration, which at K = 10⁵ words and n = 10⁶ descriptors is 10¹³
// multiply-adds. With Options.Approx each assignment step instead searches
// an index over the current centroids (approximate k-means, Philbin et al.,
// "Object retrieval with large vocabularies and fast spatial matching",
// CVPR 2007): an nn.Forest of randomised kd-trees bounded to
// nn.ForestOptions.Checks distance computations, or an nn.IVF
// (Options.Index = IndexIVF), whose coarse
// cells TrainIVF clusters. A point keeps its previous cluster unless the
// index finds a nearer centroid, so the objective falls monotonically as in
// exact Lloyd.
//
// Initialisation is k-means‖ (KMeansParallel) below KMeansPPMaxK centroids
// and K random distinct points above it; KMeansPPMaxK explains why.
// k-means++ (optionally on a sample of the points, Options.InitSample)
// remains selectable.
//
// # Memory
//
// Sums take 1,036 bytes per cluster at D = 128 (float64 sums and a count):
// 10 MB at 10⁴ clusters, 104 MB at 10⁵, 1.0 GB at 10⁶. Train also holds
// labels and distances for the n points (8·n bytes) besides the points
// themselves (4·D·n bytes), and the index of its assignment (package nn
// states their memory). Package kmeansbeam states the memory of the
// distributed trainer.
package kmeans

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bowline/bowline/transforms/internal/finite"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/setting"
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
	// assignment step searches an nn.Forest built with
	// nn.ForestOptions.ForIteration(i)
	// over the current centroids instead of comparing every point with
	// every centroid. False keeps the exact assignment.
	Approx bool

	// Forest configures the forests of an approximate assignment; it is
	// ignored when Approx is false or Index is IndexIVF.
	Forest nn.ForestOptions

	// Index chooses the structure an approximate assignment searches:
	// an nn.Forest (the zero value) or an nn.IVF (TrainIVF), built with
	// nn.IVFOptions.ForIteration(i) over the current centroids at every
	// iteration and configured by IVF.
	Index Index
	IVF   nn.IVFOptions

	// Init chooses how the initial centroids are drawn.
	Init Init

	// InitSample, if positive, runs k-means++ on that many points drawn
	// uniformly without replacement instead of on all of them, which
	// divides its O(n·K·dim) cost by n/InitSample. It must then be at least
	// K. Zero uses every point. InitParallel ignores it: its rounds see
	// every point.
	InitSample int

	// SeedRounds and SeedOversampling configure InitParallel: the number
	// of oversampling rounds and the expected candidates a round draws,
	// as a multiple ℓ/K of K. Zero takes DefaultSeedRounds and
	// DefaultSeedOversampling.
	SeedRounds       int
	SeedOversampling float64

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

	// Round is, while InitParallel samples its candidates, the round of
	// Rounds just ended (0 outside them), after which the candidates
	// number Candidates.
	Round, Rounds, Candidates int

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
	// IndexForest searches an nn.Forest of randomised kd-trees.
	IndexForest Index = iota

	// IndexIVF searches an nn.IVF, an inverted file over coarse cells of
	// the centroids, with nn.Exact's kernel.
	IndexIVF
)

// Init is an initialisation method.
type Init int

const (
	// InitAuto is InitParallel for K < KMeansPPMaxK and InitRandom above.
	InitAuto Init = iota

	// InitKMeansPP seeds by k-means++ (KMeansPP) on all points or on
	// Options.InitSample of them.
	InitKMeansPP

	// InitRandom takes K distinct points drawn uniformly without
	// replacement: O(n) work, and Lloyd's first iterations refine it.
	InitRandom

	// InitParallel seeds by k-means‖ (Bahmani et al., 2012; KMeansParallel):
	// Options.SeedRounds rounds that each sample about
	// Options.SeedOversampling·K candidates by D², then a weighted
	// k-means++ of the candidates. Its rounds are maps over the points,
	// with every point's draw a hash of (Seed, round, point), so they can
	// run where the points are.
	InitParallel
)

// initNames are the names of the Init methods, as String gives them and
// ParseInit reads them.
var initNames = [...]string{InitAuto: "auto", InitKMeansPP: "kmeans++", InitRandom: "random", InitParallel: "kmeans||"}

// String returns the name of i: auto, kmeans++, random or kmeans||.
func (i Init) String() string {
	if i < InitAuto || int(i) >= len(initNames) {
		return fmt.Sprintf("Init(%d)", int(i))
	}
	return initNames[i]
}

// ParseInit returns the Init method that String names s.
func ParseInit(s string) (Init, error) {
	for i, name := range initNames {
		if s == name {
			return Init(i), nil
		}
	}
	return 0, fmt.Errorf("kmeans: initialisation %q, want one of %s", s, strings.Join(initNames[:], ", "))
}

// DefaultSeedRounds and DefaultSeedOversampling are the rounds and ℓ/K of
// InitParallel when Options leave them zero: two rounds of ℓ = K, about 2K
// candidates (Spark MLlib's k-means‖ also defaults to two rounds).
// Bahmani et al.'s five rounds of ℓ = 2K draw about 10K candidates, which
// at the vocabulary's 20 sampled descriptors a word is half the sample,
// and the final k-means++ over them then costs half of k-means++ over the
// whole sample. On 200,000 ETH-80 SIFT descriptors at K = 10⁴ (30,000
// held out), two rounds of ℓ = K seeded in 10 CPU s against 17 s for five
// of ℓ = K/2 and 36 s for five of ℓ = K, with the lowest held-out
// objective of the three after AKM (within 0.4% of each other).
const (
	DefaultSeedRounds       = 2
	DefaultSeedOversampling = 1.0
)

// KMeansPPMaxK is the K from which InitAuto seeds at random rather than
// by k-means‖.
//
// k-means++ scans every point once per centre chosen, O(n·K·dim) in all
// and sequential over the K centres. k-means‖ replaces the scans by a few
// rounds of O(n·ℓ·dim) through the blocked kernel, which run where the
// points are, but its last step is a k-means++ over its ~2K candidates,
// O(K²·dim) on one worker: at K = 10⁴ about 8 of its 10 CPU s on 200,000
// SIFT descriptors (k-means++ took 127 s, for a 0.7% higher held-out
// objective after AKM), which extrapolates to about 800 s at K = 10⁵ and
// 10⁴ times that at 10⁶. Above this size the vocabulary is seeded with K distinct random
// points instead (as Philbin et al. did for their 10⁶-word AKM
// vocabularies): with ≥ 10 points per cluster the random seeds are dense
// wherever the data are, which is where a vocabulary needs words, and the
// cost of a worse start is paid in a few cheap AKM iterations rather than
// in the seeding.
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

// reseedNames are the names of the Reseed rules, as String gives them.
var reseedNames = [...]string{ReseedAuto: "auto", ReseedFarthest: "farthest", ReseedSplit: "split"}

// String returns the name of r: auto, farthest or split.
func (r Reseed) String() string {
	if r < ReseedAuto || int(r) >= len(reseedNames) {
		return fmt.Sprintf("Reseed(%d)", int(r))
	}
	return reseedNames[r]
}

// assign returns the options of the assignment step's search.
func (o Options) assign() AssignOptions {
	return AssignOptions{Approx: o.Approx, Forest: o.Forest, UseIVF: o.Approx && o.Index == IndexIVF, IVF: o.IVF}
}

// Validate reports whether o is usable, independently of any data.
func (o Options) Validate() error {
	switch {
	case o.K < 1:
		return setting.Errorf("kmeans", "K", o.K, "1 or more")
	case o.MaxIter < 1:
		return setting.Errorf("kmeans", "MaxIter", o.MaxIter, "1 or more")
	case !(o.Tol >= 0): // also rejects NaN
		return fmt.Errorf("kmeans: Tol = %v, want a non-negative number", o.Tol)
	case o.Workers < 0:
		return fmt.Errorf("kmeans: Workers = %d, want 0 (GOMAXPROCS) or more", o.Workers)
	case o.Init < InitAuto || o.Init > InitParallel:
		return fmt.Errorf("kmeans: Init = %d, want InitAuto, InitKMeansPP, InitRandom or InitParallel", o.Init)
	case o.SeedRounds < 0:
		return setting.Errorf("kmeans", "SeedRounds", o.SeedRounds, "0 (the default) or more")
	case !(o.SeedOversampling >= 0) || math.IsInf(o.SeedOversampling, 1):
		return fmt.Errorf("kmeans: SeedOversampling = %v, want 0 (the default) or a positive number", o.SeedOversampling)
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

// InitMethod returns the method Initialize uses under o: o.Init, with InitAuto resolved by K.
func (o Options) InitMethod() Init {
	if o.Init == InitAuto {
		if o.K < KMeansPPMaxK {
			return InitParallel
		}
		return InitRandom
	}
	return o.Init
}

// ReseedRule returns the rule in force: o.Reseed, with ReseedAuto
// resolved by Approx.
func (o Options) ReseedRule() Reseed {
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
// Centroids start from Initialize — by default k-means‖ (KMeansParallel)
// seeded by opt.Seed below KMeansPPMaxK centroids — and are then refined by Lloyd iterations, as TrainFrom
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
//   - InitParallel: KMeansParallel with opt.SeedRounds and
//     opt.SeedOversampling;
//   - InitAuto: InitParallel if K < KMeansPPMaxK, else InitRandom.
//
// Only opt.K, opt.Seed, opt.Init, opt.InitSample, opt.SeedRounds and
// opt.SeedOversampling matter, so the same
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
// with an nn.Forest built with opt.Forest.ForIteration(i) over the current
// centroids if opt.Approx, keeping a point's previous cluster unless the
// forest finds a nearer one (see nn.Forest.Assign) — and moves every centroid
// to the mean of its points. Training stops by Options.Stop: after
// opt.MaxIter updates, when the objective J = (1/n) Σ_i ‖x_i − c(x_i)‖²
// reaches zero, when an update lowers J by at most opt.Tol·J_prev, or when
// no label changes and no cluster was re-seeded (a fixed point).
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
	if i := finite.Index(centroids); i >= 0 {
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
	if i := finite.Index(data); i >= 0 {
		return 0, fmt.Errorf("kmeans: point %d coordinate %d is %v, want a finite value", i/dim, i%dim, data[i])
	}
	return n, nil
}

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
	t.search = opt.assign()
	for i := range t.labels {
		t.labels[i] = -1
	}

	changed := t.assign(0)
	t.accumulate()
	res := Result{K: opt.K, Dim: dim}
	var prev float64
	p := Progress{K: opt.K, Seeded: opt.K, Changed: changed, Objective: t.sums.SSE / float64(n)}
	opt.report(p)
	rule := opt.ReseedRule()
	for {
		stop, converged := opt.Stop(p, prev)
		if stop {
			res.Converged = converged
			break
		}
		empty := Update(t.centroids, t.sums)
		if rule == ReseedSplit {
			Split(t.centroids, dim, t.sums.Count, empty)
		} else {
			t.reseed(empty)
		}
		res.Iterations++
		changed := t.assign(res.Iterations)
		t.accumulate()
		prev = p.Objective
		p = Progress{K: opt.K, Seeded: opt.K, Iteration: res.Iterations, Changed: changed, Reseeded: len(empty), Objective: t.sums.SSE / float64(n)}
		opt.report(p)
	}
	res.Centroids = t.centroids
	res.Objective = p.Objective
	return res
}

// Stop is Lloyd's stopping rule, which Train and the distributed trainer
// of package kmeansbeam both apply after each assignment: p is the
// assignment of iteration p.Iteration (0 for the initial centroids, i after
// the i-th update), with objective p.Objective, p.Changed labels changed
// and p.Reseeded clusters re-seeded by the update before it; prev is the
// objective of iteration p.Iteration − 1 (unused at 0). In this order:
//
//   - J = 0: nothing can improve; stop, converged (a J that is not a
//     positive number stops training too, not converged).
//   - After an update, no label changed and no cluster was re-seeded: the
//     next update would reproduce the same centroids, a fixed point
//     whatever Tol says (with approximate assignment the next index could
//     still find nearer centroids for a few points, but the objective
//     would not have moved either); stop, converged.
//   - After an update, J_prev − J ≤ Tol·J_prev; stop, converged.
//   - MaxIter updates made; stop, not converged.
//
// Otherwise training goes on with another update. Only MaxIter and Tol of
// o matter.
func (o Options) Stop(p Progress, prev float64) (stop, converged bool) {
	switch obj := p.Objective; {
	case !(obj > 0):
		return true, obj == 0
	case p.Iteration > 0 && ((p.Changed == 0 && p.Reseeded == 0) || prev-obj <= o.Tol*prev):
		return true, true
	case p.Iteration >= o.MaxIter:
		return true, false
	}
	return false, false
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

	// search chooses the assignment's search, built anew at every
	// iteration (AssignOptions.ForIteration); scratch holds one
	// AssignScratch per worker, allocated on first use.
	search  AssignOptions
	scratch []AssignScratch
}

// assign runs nn.Exact's Assign (nn.Nearest's labels and distances,
// faster), or an nn.Forest's or an nn.IVF's Assign for approximate
// training, on the workers (Assigner.AssignParallel) for Lloyd iteration
// iter (0 for the initial centroids). Each point's label depends only on
// that point, the centroids and the iteration's forest or IVF, so the
// workers do not affect the result.
func (t *trainer) assign(iter int) (changed int) {
	a, err := NewAssigner(t.centroids, t.dim, t.search.ForIteration(iter))
	if err != nil {
		// Options were validated and centroids are means of finite points
		// or split copies of them.
		panic(err)
	}
	if len(t.scratch) < max(1, t.workers) {
		t.scratch = make([]AssignScratch, max(1, t.workers))
	}
	return a.AssignParallel(t.data, t.labels, t.dist, t.scratch[:max(1, t.workers)])
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
