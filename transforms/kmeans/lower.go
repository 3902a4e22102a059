package kmeans

import (
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/transforms/nn"
)

// lowering is k-means++'s D²: for each point its squared distance to the
// nearest centre chosen so far, exactly the values that lowering every
// point's D² by nn.LowerSqDist after each centre gives, computed with far
// fewer full distances. A new centre c can lower D²(x) only if
// ‖x − c‖² < D²(x), and for the rows of any matrix P with orthonormal rows
// ‖P(x − c)‖ ≤ ‖x − c‖: so each point is first compared with c in the
// projection onto the top principal axes of the data (projDims of them),
// where SIFT descriptors keep about 60% of their variance on 16 axes and
// 80% on 32, and ‖x − c‖ is computed only where the projected distance
// does not already reach D²(x). On 20,000 k-means‖ candidates of real
// SIFT descriptors seeding 10,000 centres, 16 axes alone rule out 93% of
// the pairs.
//
// The test is made on float32 values with a margin that covers their
// rounding (see skipBound), so a skipped point is one whose computed
// distance would not have been below its D² either: the D² values, and so
// every draw made from them, are those of the plain update bit for bit.
// Data where the rounding bound does not hold (a non-finite value, or
// norms near float32's range), data of fewer than 32 dimensions and fewer
// than minProjK centres take the plain update.
type lowering struct {
	data []float32
	dim  int
	d2   []float32
	// proj holds each point's pdim coordinates on the principal axes
	// (nil for the plain update), skip the projected squared distance at
	// or above which a point is not compared in full (skipBound of its
	// D²), and slack the absolute rounding allowance of the projected
	// distances, β of skipBound.
	proj  []float32
	pdim  int
	skip  []float32
	slack float64
	// buf is the scratch of the projected comparison.
	buf []float32
}

// maxProjDim is the most principal axes points are compared on first.
// nn.LowerSqDist stops a comparison after any block of 16 coordinates
// whose partial sum reaches the bound, so axes beyond the first 16 cost
// only for the points that the first do not rule out, and rule out most
// of those: on 20,000 k-means‖ candidates of real SIFT descriptors seeding
// 10,000 centres, 64 axes take a third of the time of 16 and half that of
// all 128.
const maxProjDim = 64

// projDims returns the number of principal axes of points of dimension
// dim: half the dimensions, in whole blocks of 16, up to maxProjDim; 0
// (the plain update) below 32 dimensions.
func projDims(dim int) int {
	return min(maxProjDim, dim/2/16*16)
}

// pcaSample is the most points whose covariance gives the principal axes:
// any orthonormal axes give a valid bound, the sample only has to find
// the directions of most variance.
const pcaSample = 4096

// minProjK is the fewest centres for which the points are projected:
// projecting costs about as much as comparing every point with
// 2·maxProjDim centres in full.
const minProjK = 4 * maxProjDim

// newLowering returns the D² of the points of data (all +Inf) for the
// choice of k centres.
func newLowering(data []float32, dim, k int) *lowering {
	n := len(data) / dim
	lw := &lowering{data: data, dim: dim, d2: make([]float32, n)}
	inf := float32(math.Inf(1))
	for i := range lw.d2 {
		lw.d2[i] = inf
	}
	m := projDims(dim)
	if m == 0 || k < minProjK {
		return lw
	}
	// norm is the largest |x_j| · √dim, a bound of every point's norm.
	var norm float64
	for _, v := range data {
		if a := math.Abs(float64(v)); !(a <= norm) {
			norm = a
		}
	}
	norm *= math.Sqrt(float64(dim))
	if math.IsNaN(norm) || norm > 0x1p60 {
		return lw
	}
	axes := principalAxes(data, dim, m)
	lw.proj, lw.pdim = make([]float32, n*m), m
	for i := range n {
		x := data[i*dim : (i+1)*dim]
		for a := range m {
			var s float64
			for j, v := range x {
				s += float64(v) * axes[a*dim+j]
			}
			lw.proj[i*m+a] = float32(s)
		}
	}
	// A projected coordinate is a float64 dot product rounded to float32:
	// within 2⁻²⁴·|p| + dim·2⁻⁵³·‖x‖ ≤ 2⁻²³·‖x‖ of its exact value, for
	// axes of norm 1 (to within 2⁻⁴⁰). The difference of two is off by
	// at most 2⁻²²·norm and their projected distance by √m times that.
	lw.slack = math.Sqrt(float64(m)) * norm * 0x1p-22
	lw.skip, lw.buf = make([]float32, n), make([]float32, n)
	for i := range lw.skip {
		lw.skip[i] = inf
	}
	return lw
}

// principalAxes returns the m unit eigenvectors of largest eigenvalue of
// the covariance of (a sample of at most pcaSample of) the points, as m
// rows of dim.
func principalAxes(data []float32, dim, m int) []float64 {
	n := len(data) / dim
	step := max(1, n/pcaSample)
	var cnt float64
	mean := make([]float64, dim)
	for i := 0; i < n; i += step {
		for j, v := range data[i*dim : (i+1)*dim] {
			mean[j] += float64(v)
		}
		cnt++
	}
	for j := range mean {
		mean[j] /= cnt
	}
	cov := mat.NewSymDense(dim, nil)
	x := make([]float64, dim)
	for i := 0; i < n; i += step {
		for j, v := range data[i*dim : (i+1)*dim] {
			x[j] = float64(v) - mean[j]
		}
		cov.SymRankOne(cov, 1, mat.NewVecDense(dim, x))
	}
	var eig mat.EigenSym
	axes := make([]float64, m*dim)
	if !eig.Factorize(cov, true) {
		// Any orthonormal axes bound the distance: the first coordinates.
		for a := range m {
			axes[a*dim+a] = 1
		}
		return axes
	}
	var vec mat.Dense
	eig.VectorsTo(&vec)
	// EigenSym sorts the eigenvalues ascending.
	for a := range m {
		for j := range dim {
			axes[a*dim+j] = vec.At(j, dim-1-a)
		}
	}
	return axes
}

// tinyD2 is the smallest non-zero D² a point is skipped at: below it the
// squares of coordinate differences may be subnormal, whose absolute
// rounding the relative margin of skipBound does not cover.
const tinyD2 = 0x1p-100

// skipBound returns the projected squared distance at or above which a
// point of squared distance d to its nearest centre cannot be nearer to a
// new centre. A float32 squared distance as nn computes it (a rounded
// difference, squared and rounded, summed in four chains of dim/4 terms,
// then pairwise) is within a factor 1 ± ε of the exact one, ε = (dim/4 +
// 5)·2⁻²⁴, as all its terms are non-negative. With α = 8·(dim + 32)·2⁻²⁴
// above every such ε and β the absolute error of a projected distance
// (slack), a computed projected distance p with √p ≥ (√(d·(1 + α)) +
// β)/(1 − α) makes the exact ‖x − c‖ ≥ √(d·(1 + α)) and the computed one
// above d. 0 for d = 0 (nothing is below 0) and +Inf below tinyD2 (never
// skipped).
func (lw *lowering) skipBound(d float32) float32 {
	switch {
	case d == 0:
		return 0
	case d < tinyD2:
		return float32(math.Inf(1))
	}
	alpha := 8 * float64(lw.dim+32) / (1 << 24)
	r := (math.Sqrt(float64(d)*(1+alpha)) + lw.slack) / (1 - alpha)
	// Rounded up to a float32.
	return float32(r * r * (1 + 0x1p-22))
}

// lower lowers every point's D² to its distance to point p (a new
// centre) where that is smaller, on up to GOMAXPROCS goroutines of at
// least kmeansPPGrain points each.
func (lw *lowering) lower(p int) {
	n := len(lw.d2)
	workers := min(runtime.GOMAXPROCS(0), n/kmeansPPGrain)
	if workers <= 1 {
		lw.lowerRange(p, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { lw.lowerRange(p, lo, hi) })
	}
	wg.Wait()
}

// lowerRange is lower on the points lo to hi.
func (lw *lowering) lowerRange(p, lo, hi int) {
	dim := lw.dim
	c := lw.data[p*dim : (p+1)*dim]
	if lw.proj == nil {
		nn.LowerSqDist(lw.data[lo*dim:hi*dim], dim, c, lw.d2[lo:hi])
		return
	}
	// buf[i] falls below skip[i] for the points whose projected distance
	// does not rule c out; those are compared in full.
	buf := lw.buf[lo:hi]
	copy(buf, lw.skip[lo:hi])
	m := lw.pdim
	nn.LowerSqDist(lw.proj[lo*m:hi*m], m, lw.proj[p*m:(p+1)*m], buf)
	// The survivors are copied side by side in batches, so that
	// nn.LowerSqDist compares them with its vector kernel, four at a time.
	rows := make([]float32, 0, lowerBatch*dim)
	idx := make([]int, 0, lowerBatch)
	d := make([]float32, lowerBatch)
	flush := func() {
		d := d[:len(idx)]
		for k, i := range idx {
			d[k] = lw.d2[i]
		}
		nn.LowerSqDist(rows, dim, c, d)
		for k, i := range idx {
			if d[k] < lw.d2[i] {
				lw.d2[i], lw.skip[i] = d[k], lw.skipBound(d[k])
			}
		}
		rows, idx = rows[:0], idx[:0]
	}
	for k, b := range buf {
		if i := lo + k; b < lw.skip[i] {
			rows, idx = append(rows, lw.data[i*dim:(i+1)*dim]...), append(idx, i)
			if len(idx) == lowerBatch {
				flush()
			}
		}
	}
	if len(idx) > 0 {
		flush()
	}
}

// lowerBatch is the most points lowering compares in full in one call.
const lowerBatch = 64
