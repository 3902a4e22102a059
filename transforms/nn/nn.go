// Package nn answers nearest-neighbour queries against a fixed set of
// centroids of dense float32 points, in squared Euclidean distance: the
// nearest centroid of a point, exactly (Nearest, Exact) or approximately
// (Forest, IVF), and its k nearest (NearestK, Forest.NearestK). It is the
// search that k-means (package kmeans) assigns points with and that
// quantises descriptors against a trained vocabulary, kept apart from the
// clustering as FAISS keeps IndexFlat and IndexIVF apart from Clustering.
//
// Points and centroids are stored row-major in one flat slice: point i of
// dimension dim is data[i*dim : (i+1)*dim].
//
// # Exact search
//
// Nearest compares a point with every centroid. Exact gives Nearest's
// answers bit for bit but computes most of the distances as a float32
// matrix product, ‖c‖² − 2·X·Cᵀ, over cache-sized tiles with an AVX2/FMA
// kernel, and re-checks the few near-best centroids with Nearest's own
// distance: 16 multiply-adds a cycle where Nearest's scalar loop does about
// one (on CPUs without AVX2, or built with the purego tag, Exact is
// Nearest).
//
// # Approximate search
//
// Exact search costs O(K·dim) per point, which at K = 10⁵ words is the
// whole cost of a Lloyd iteration or of quantising a photo. A Forest of
// randomised kd-trees (FLANN's, Muja & Lowe 2009) answers by a priority
// search bounded to ForestOptions.Checks distance computations, about
// Checks·dim + log K per point plus Trees·K·(log K + dim) to build. An IVF
// (Jégou et al. 2011, FAISS's IndexIVFFlat) divides the words among
// √(Probes·K) coarse cells and compares a batch of points with the coarse
// centroids and then with the words of the Probes nearest cells, grouped
// by cell so that both steps are Exact's matrix-product kernel rather than
// one distance at a time; it is the faster of the two at equal recall.
// Both return a centroid at least as far as the nearest, never nearer, and
// their Assign keeps a point's previous label unless the search finds a
// nearer centroid, so that Lloyd's objective falls monotonically under
// approximate assignment as under exact. The coarse cells of an IVF are a
// clustering of its words: kmeans.TrainIVF trains them, and NewIVF builds
// the lists from them.
//
// # Memory
//
// For K centroids of dimension D = 128 (SIFT), float32:
//
//	K           centroids   Forest (8 trees,   Search (per
//	            (512·K B)   leaves of ≤ 8)     goroutine)
//	10,000        5.1 MB       0.8 MB            40 kB
//	100,000        51 MB       7.6 MB           0.4 MB
//	1,000,000     512 MB        76 MB             4 MB
//
// An Exact adds a packed copy of the centroids (as many bytes again) and an
// ExactScratch about 80 kB per goroutine, whatever K and the number of
// points. An IVF adds the same packed copy plus 4·K bytes of indices, and an
// IVFScratch of about 8·Batch·Probes bytes plus the batch widened to floats
// (2.5 MB by default for SIFT bytes) per goroutine.
//
// A Forest takes 4·K bytes of leaf indices per tree plus 16 bytes per node
// (about K/3 nodes per tree with leaves of at most 8), Forest.Bytes reports
// it; a Search keeps a 4·K-byte mark per centroid and a small queue. A
// worker assigning descriptors needs the centroids, one Forest and one
// Search per goroutine: about 0.6 GB at a million words.
package nn

import (
	"fmt"
	"math"
)

// pcgStream is the second PCG seed word of the forests' generators, so that
// ForestOptions.Seed is their only source of randomness.
const pcgStream = 0x9e3779b97f4a7c15

// Nearest returns the index of the centroid closest to x in squared
// Euclidean distance, and that distance. Ties go to the lowest index.
// centroids holds len(centroids)/dim centroids row-major. Nearest does not
// allocate. It panics if dim < 1, len(x) ≠ dim, or len(centroids) is not a
// positive multiple of dim.
func Nearest(centroids []float32, dim int, x []float32) (int, float32) {
	if dim < 1 || len(x) != dim || len(centroids) == 0 || len(centroids)%dim != 0 {
		panic(fmt.Sprintf("nn: Nearest with dim %d, %d centroid values and a point of length %d", dim, len(centroids), len(x)))
	}
	best, bd := 0, sqDist(centroids[:dim], x, float32(math.Inf(1)))
	for c, off := 1, dim; off < len(centroids) && bd > 0; c, off = c+1, off+dim {
		if d := sqDist(centroids[off:off+dim], x, bd); d < bd {
			best, bd = c, d
		}
	}
	return best, bd
}

// LowerSqDist lowers d2[i] to ‖x_i − c‖², the squared distance from point i
// of data to c, where that is smaller: the update of every point's distance
// to its nearest chosen centre that k-means++ makes after each choice. The
// values are those of Nearest's distance bit for bit, whether the AVX
// kernel computes them four points at a time or not, so what a caller
// derives from them does not depend on the CPU. A d2[i] of +Inf receives
// the distance itself. It panics if dim < 1, len(c) ≠ dim or len(data) ≠
// len(d2)·dim.
func LowerSqDist(data []float32, dim int, c []float32, d2 []float32) {
	if dim < 1 || len(c) != dim || len(data) != len(d2)*dim {
		panic(fmt.Sprintf("nn: LowerSqDist with dim %d, %d data values, a centre of length %d and %d distances", dim, len(data), len(c), len(d2)))
	}
	i := 0
	if useFMA && dim%16 == 0 {
		// Four points at a time, with the same sums bit for bit.
		var out [4]float32
		for ; i+4 <= len(d2); i += 4 {
			sqDist4AVX(&data[i*dim : (i+4)*dim][0], dim, &c[0], &d2[i : i+4][0], &out)
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
