package main

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/bowline/bowline/transforms/sift"
)

// Scoring, the same code for both extractors. For a reference image A, a
// transformed image B and the homography H that maps A's pixel coordinates
// to B's:
//
//   - The overlap: A′ is the keypoints of A whose image H(a) lies inside B at
//     least margin pixels from its edges; B′ is the keypoints of B whose
//     preimage H⁻¹(b) lies inside A at least margin pixels from its edges.
//     (The margin keeps out keypoints caused by the image edge or by the edge
//     of the warped region, which have no counterpart.)
//   - Two keypoints a, b correspond if dist(a, b) = max(‖H(a) − b‖,
//     ‖a − H⁻¹(b)‖) ≤ tol pixels: within tol in both images' frames, so
//     the criterion is symmetric and does not favour either side of a scale
//     change.
//   - Repeatability = (pairs of a one-to-one matching between A′ and B′ of
//     corresponding keypoints, made greedily closest pair first) /
//     min(|A′|, |B′|). Scale and orientation are not compared.
//   - Matching score = (keypoints a ∈ A′ whose nearest neighbour b in all of
//     B by Euclidean descriptor distance passes Lowe's ratio test, d₁ < 0.8·d₂,
//     and corresponds to a) / min(|A′|, |B′|).
//
// Per family, numerators and denominators are summed over all pairs before
// dividing, so a pair with many keypoints weighs more than one with few.
const (
	tol    = 3.0
	margin = 10.0
	ratio  = 0.8
)

// score is one pair's counts.
type score struct {
	nA, nB       int // keypoints in A and B
	inA, inB     int // |A′|, |B′|
	den          int // min(|A′|, |B′|), summed per pair when pooling
	repeated     int
	matched      int // ratio-test matches from A′
	correctMatch int
}

func (s *score) add(t score) {
	s.nA += t.nA
	s.nB += t.nB
	s.inA += t.inA
	s.inB += t.inB
	s.den += t.den
	s.repeated += t.repeated
	s.matched += t.matched
	s.correctMatch += t.correctMatch
}

func (s score) denom() float64 { return float64(max(1, s.den)) }

// Repeatability and MatchingScore are as defined above.
func (s score) Repeatability() float64 { return float64(s.repeated) / s.denom() }
func (s score) MatchingScore() float64 { return float64(s.correctMatch) / s.denom() }

func inside(x, y float64, w, h int) bool {
	return x >= margin && y >= margin && x <= float64(w-1)-margin && y <= float64(h-1)-margin
}

// evaluate scores a pair: a from the w×h reference, b from the transformed
// image of the same size, H mapping a's coordinates to b's.
func evaluate(a, b features, H homography, w, h int) score {
	inv := H.inverse()
	s := score{nA: len(a.kps), nB: len(b.kps)}

	// Positions mapped into the other frame, and overlap membership.
	type pt struct{ x, y, mx, my float64 }
	mapAll := func(kps []sift.Keypoint, m homography) ([]pt, []bool, int) {
		p := make([]pt, len(kps))
		in := make([]bool, len(kps))
		n := 0
		for i, k := range kps {
			x, y := float64(k.X), float64(k.Y)
			mx, my := m.apply(x, y)
			p[i] = pt{x, y, mx, my}
			if inside(mx, my, w, h) {
				in[i] = true
				n++
			}
		}
		return p, in, n
	}
	pa, inA, nA := mapAll(a.kps, H)
	pb, inB, nB := mapAll(b.kps, inv)
	s.inA, s.inB, s.den = nA, nB, min(nA, nB)
	dist := func(i, j int) float64 {
		// ‖H(a) − b‖ in B's frame and ‖a − H⁻¹(b)‖ in A's frame.
		d1 := math.Hypot(pa[i].mx-pb[j].x, pa[i].my-pb[j].y)
		d2 := math.Hypot(pa[i].x-pb[j].mx, pa[i].y-pb[j].my)
		return max(d1, d2)
	}

	// Repeatability: candidate pairs through a grid over B's frame with
	// cells of 2·tol, so only neighbouring cells need looking at.
	const cell = 2 * tol
	grid := map[[2]int][]int{}
	for j, p := range pb {
		if inB[j] {
			k := [2]int{int(math.Floor(p.x / cell)), int(math.Floor(p.y / cell))}
			grid[k] = append(grid[k], j)
		}
	}
	type pair struct {
		d    float64
		i, j int
	}
	var pairs []pair
	for i, p := range pa {
		if !inA[i] {
			continue
		}
		cx, cy := int(math.Floor(p.mx/cell)), int(math.Floor(p.my/cell))
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				for _, j := range grid[[2]int{cx + dx, cy + dy}] {
					if d := dist(i, j); d <= tol {
						pairs = append(pairs, pair{d, i, j})
					}
				}
			}
		}
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		return cmp.Or(cmp.Compare(x.d, y.d), cmp.Compare(x.i, y.i), cmp.Compare(x.j, y.j))
	})
	usedA := make([]bool, len(pa))
	usedB := make([]bool, len(pb))
	for _, p := range pairs {
		if !usedA[p.i] && !usedB[p.j] {
			usedA[p.i], usedB[p.j] = true, true
			s.repeated++
		}
	}

	// Matching: nearest neighbours of A′ among all of B.
	var query []int
	for i := range pa {
		if inA[i] {
			query = append(query, i)
		}
	}
	nn := nearest(a.desc, query, b.desc)
	for qi, i := range query {
		m := nn[qi]
		if m.j < 0 || !(float64(m.d1) < ratio*ratio*float64(m.d2)) {
			continue
		}
		s.matched++
		if dist(i, m.j) <= tol {
			s.correctMatch++
		}
	}
	return s
}

// neighbour is the nearest and second-nearest squared descriptor distances
// of a query and the index of the nearest (−1 if there is none).
type neighbour struct {
	j      int
	d1, d2 int32
}

// nearest finds, for each descriptor of a listed in query, its two nearest
// neighbours in b by brute force, on all CPUs (scoring is not timed).
func nearest(a []byte, query []int, b []byte) []neighbour {
	const D = sift.DescriptorSize
	nb := len(b) / D
	out := make([]neighbour, len(query))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for qi := w; qi < len(query); qi += workers {
				q := (*[D]byte)(a[query[qi]*D:])
				best := neighbour{j: -1, d1: math.MaxInt32, d2: math.MaxInt32}
				for j := 0; j < nb; j++ {
					d := sqDist(q, (*[D]byte)(b[j*D:]), best.d2)
					if d < best.d1 {
						best.d2, best.d1, best.j = best.d1, d, j
					} else if d < best.d2 {
						best.d2 = d
					}
				}
				out[qi] = best
			}
		})
	}
	wg.Wait()
	return out
}

// sqDist is the squared Euclidean distance of two descriptors, or any value
// ≥ bound once the partial sum reaches bound (it can then be neither nearest
// nor second nearest).
func sqDist(p, q *[sift.DescriptorSize]byte, bound int32) int32 {
	var s int32
	for k := 0; k < sift.DescriptorSize; k += 16 {
		for t := k; t < k+16; t++ {
			d := int32(p[t]) - int32(q[t])
			s += d * d
		}
		if s >= bound {
			return s
		}
	}
	return s
}
