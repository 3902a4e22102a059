package spatial

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// scene describes a synthetic pair of images: n random keypoints in the
// query; the candidate holds the planted ones mapped by truth (with noise),
// outliers random keypoints, and bursts extra words seen burst times in
// each image at random places.
type scene struct {
	n, planted, outliers int
	vocab                int
	bursts, burst        int
	truth                Affine
	noise                float64 // position noise in pixels; scale and angle noise follow
	w, h                 float32
}

type point struct{ x, y float32 }

// randomKeypoint draws a keypoint of a w×h image: uniform position and
// angle, scale log-uniform over σ ∈ [1.6, 25.6] as SIFT's four octaves.
func randomKeypoint(rng *rand.Rand, g *Geometry, word uint32, w, h float32) {
	g.Append(word, rng.Float32()*w, rng.Float32()*h, float32(1.6*math.Exp2(4*rng.Float64())),
		float32(2*math.Pi*rng.Float64()))
}

// build returns the two geometries, sorted, and the planted pairs as
// (query point, candidate point), by which a test finds their indices
// after sorting.
func (s scene) build(seed uint64) (q, c *Geometry, planted [][2]point) {
	rng := rand.New(rand.NewPCG(seed, 7))
	q, c = &Geometry{Width: s.w, Height: s.h}, &Geometry{Width: s.w, Height: s.h}
	for range s.n {
		randomKeypoint(rng, q, uint32(rng.IntN(s.vocab)), s.w, s.h)
	}
	det := s.truth.A11*s.truth.A22 - s.truth.A12*s.truth.A21
	for k := range s.planted {
		x, y := float64(q.X[k]), float64(q.Y[k])
		u, v := s.truth.Apply(x, y)
		u += s.noise * rng.NormFloat64()
		v += s.noise * rng.NormFloat64()
		// A gradient direction φ maps to A's image of (cos φ, sin φ); areas
		// scale by det A, so σ by its square root.
		sin, cos := math.Sincos(float64(q.Angle[k]))
		dx, dy := s.truth.A11*cos+s.truth.A12*sin, s.truth.A21*cos+s.truth.A22*sin
		ang := math.Atan2(dy, dx) + 0.03*s.noise*rng.NormFloat64()
		sc := float64(q.Scale[k]) * math.Sqrt(det) * math.Exp(0.03*s.noise*rng.NormFloat64())
		c.Append(q.Words[k], float32(u), float32(v), float32(sc), float32(ang))
		planted = append(planted, [2]point{{q.X[k], q.Y[k]}, {float32(u), float32(v)}})
	}
	for range s.outliers {
		randomKeypoint(rng, c, uint32(rng.IntN(s.vocab)), s.w, s.h)
	}
	for b := range s.bursts {
		word := uint32(s.vocab + b) // words of their own
		for range s.burst {
			randomKeypoint(rng, q, word, s.w, s.h)
			randomKeypoint(rng, c, word, s.w, s.h)
		}
	}
	q.Sort()
	c.Sort()
	return q, c, planted
}

// index returns the index of the keypoint at p in g, or -1.
func index(g *Geometry, p point) int32 {
	for k := range g.X {
		if g.X[k] == p.x && g.Y[k] == p.y {
			return int32(k)
		}
	}
	return -1
}

func mustMatcher(t testing.TB, opt Options) *Matcher {
	t.Helper()
	m, err := NewMatcher(opt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// maxDisplacement is the largest distance between a's and b's images of
// the corners and centre of a w×h image.
func maxDisplacement(a, b Affine, w, h float64) float64 {
	var d float64
	for _, p := range [][2]float64{{0, 0}, {w, 0}, {0, h}, {w, h}, {w / 2, h / 2}} {
		ax, ay := a.Apply(p[0], p[1])
		bx, by := b.Apply(p[0], p[1])
		d = max(d, math.Hypot(ax-bx, ay-by))
	}
	return d
}

// A pair related by a known similarity or affine map, with planted matches
// among many random outliers and bursty words, is recovered: every planted
// match is an inlier, and the estimated map is within a few pixels of the
// truth over the whole image.
func TestRecoversPlantedTransform(t *testing.T) {
	for _, tc := range []struct {
		name  string
		s     scene
		maxPx float64 // largest displacement from the truth over the image
	}{
		{"similarity", scene{n: 600, planted: 40, outliers: 800, vocab: 5000, bursts: 5, burst: 15,
			truth: Similarity(0.8, 0.5, 120, -40), noise: 1, w: 640, h: 480}, 3},
		{"similarity, 2x and upside down", scene{n: 600, planted: 30, outliers: 800, vocab: 5000, bursts: 5, burst: 15,
			truth: Similarity(2, 3, 900, 700), noise: 0.5, w: 640, h: 480}, 4},
		{"affine, shear", scene{n: 600, planted: 40, outliers: 800, vocab: 5000, bursts: 5, burst: 15,
			truth: Affine{A11: 0.9, A12: 0.25, A21: -0.1, A22: 1.1, Tx: 30, Ty: 20}, noise: 1, w: 640, h: 480}, 3},
		{"affine, foreshortened", scene{n: 600, planted: 40, outliers: 800, vocab: 5000, bursts: 5, burst: 15,
			truth: Affine{A11: 0.6, A12: 0, A21: 0.05, A22: 1, Tx: 100, Ty: 0}, noise: 1, w: 640, h: 480}, 3},
		{"few planted, large vocabulary", scene{n: 2000, planted: 8, outliers: 2000, vocab: 10000, bursts: 3, burst: 30,
			truth: Similarity(1.2, -0.3, -50, 60), noise: 1, w: 640, h: 480}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, c, planted := tc.s.build(1)
			for _, g := range []*Geometry{q, c} {
				if err := g.Validate(); err != nil {
					t.Fatal(err)
				}
			}
			m := mustMatcher(t, DefaultOptions())
			res := m.Verify(q, c)
			t.Logf("%+v", res)
			if !res.Verified || res.Inliers < tc.s.planted {
				t.Fatalf("%d inliers (verified %v), want >= the %d planted", res.Inliers, res.Verified, tc.s.planted)
			}
			inl := m.Inliers(nil)
			if len(inl) != res.Inliers {
				t.Fatalf("Inliers gave %d pairs, Result.Inliers %d", len(inl), res.Inliers)
			}
			for _, p := range planted {
				want := Pair{index(q, p[0]), index(c, p[1])}
				if _, ok := slices.BinarySearchFunc(inl, want, func(a, b Pair) int {
					if a.Query != b.Query {
						return int(a.Query - b.Query)
					}
					return int(a.Candidate - b.Candidate)
				}); !ok {
					t.Errorf("planted match %v is not an inlier", want)
				}
			}
			for _, p := range inl {
				if q.Words[p.Query] != c.Words[p.Candidate] {
					t.Errorf("inlier %v pairs words %d and %d", p, q.Words[p.Query], c.Words[p.Candidate])
				}
			}
			if d := maxDisplacement(res.Transform, tc.s.truth, float64(tc.s.w), float64(tc.s.h)); d > tc.maxPx {
				t.Errorf("transform %+v is %.1f px from the truth %+v, want <= %v", res.Transform, d, tc.s.truth, tc.maxPx)
			}
		})
	}
}

// Unrelated images that share many words (a small vocabulary, bursts) are
// not verified: their correspondences agree on no transform.
func TestUnrelatedImagesAreNotVerified(t *testing.T) {
	m := mustMatcher(t, DefaultOptions())
	most := 0
	for seed := range uint64(20) {
		s := scene{n: 1500, outliers: 1500, vocab: 1000, bursts: 5, burst: 20, w: 640, h: 480}
		q, c, _ := s.build(100 + seed)
		res := m.Verify(q, c)
		if res.Correspondences < 1000 {
			t.Fatalf("seed %d: %d correspondences: the test wants the cap reached", seed, res.Correspondences)
		}
		if res.Verified {
			t.Errorf("seed %d: unrelated pair verified with %d inliers", seed, res.Inliers)
		}
		most = max(most, res.Inliers)
	}
	t.Logf("at most %d inliers between unrelated images", most)
}

// The result depends on the two geometries only: not on what the Matcher
// verified before (the order of the candidates), nor on the order in which
// the keypoints were appended.
func TestDeterministic(t *testing.T) {
	var cands []*Geometry
	var q *Geometry
	for k := range 8 {
		s := scene{n: 800, planted: 5 * k, outliers: 800, vocab: 5000, bursts: 3, burst: 10,
			truth: Similarity(1.1, 0.2*float64(k), 10, 20), noise: 1, w: 640, h: 480}
		var c *Geometry
		q, c, _ = s.build(3) // the same query every time
		cands = append(cands, c)
	}
	type outcome struct {
		res Result
		inl []Pair
	}
	run := func(m *Matcher, order []int) []outcome {
		out := make([]outcome, len(cands))
		for _, k := range order {
			out[k] = outcome{m.Verify(q, cands[k]), m.Inliers(nil)}
		}
		return out
	}
	fwd := []int{0, 1, 2, 3, 4, 5, 6, 7}
	want := run(mustMatcher(t, DefaultOptions()), fwd)
	for _, order := range [][]int{fwd, {7, 6, 5, 4, 3, 2, 1, 0}, {3, 0, 6, 1, 7, 2, 5, 4}} {
		m := mustMatcher(t, DefaultOptions())
		for range 2 { // and the same Matcher again
			got := run(m, order)
			for k := range got {
				if got[k].res != want[k].res || !slices.Equal(got[k].inl, want[k].inl) {
					t.Errorf("order %v, candidate %d: %+v, want %+v", order, k, got[k].res, want[k].res)
				}
			}
		}
	}

	// Shuffle the keypoints and sort again: the same geometry, so the same
	// result.
	rng := rand.New(rand.NewPCG(5, 5))
	shuffled := func(g *Geometry) *Geometry {
		s := &Geometry{Width: g.Width, Height: g.Height}
		for _, k := range rng.Perm(g.Len()) {
			s.Append(g.Words[k], g.X[k], g.Y[k], g.Scale[k], g.Angle[k])
		}
		s.Sort()
		return s
	}
	m := mustMatcher(t, DefaultOptions())
	for k, c := range cands {
		if got := m.Verify(shuffled(q), shuffled(c)); got != want[k].res {
			t.Errorf("candidate %d shuffled: %+v, want %+v", k, got, want[k].res)
		}
	}
	if want[7].res.Inliers < 35 {
		t.Errorf("candidate 7: %d inliers, want the 35 planted: the test would prove little", want[7].res.Inliers)
	}
}

// The grid of cells only prunes: the similarity search, trying every
// hypothesis, finds as many inliers as scoring every correspondence's
// similarity against every other, for tolerances that make 1 or 2 bins as
// well as many.
func TestSearchEqualsBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name             string
		scaleTol, angTol float64
	}{
		{"defaults", 1.5, math.Pi / 6},
		{"fine bins", 1.05, 0.05},
		{"one scale bin, two angle bins", 1e5, math.Pi},
		{"three angle bins", 1.3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.ScaleTolerance, opt.AngleTolerance, opt.RefineIterations = tc.scaleTol, tc.angTol, 0
			m := mustMatcher(t, opt)
			m.exhaustive = true
			for seed := range uint64(4) {
				s := scene{n: 400, planted: 10 * int(seed), outliers: 400, vocab: 200, bursts: 2, burst: 10,
					truth: Similarity(0.9, 1, 5, 5), noise: 2, w: 640, h: 480}
				q, c, _ := s.build(seed + 10)
				res := m.Verify(q, c)
				thr := float32(opt.Threshold * 640)
				brute := 0
				for h := range m.corrs {
					t := similarity(&m.corrs[h])
					brute = max(brute, len(m.inliers(&t, thr*thr, nil)))
				}
				if res.Inliers != brute {
					t.Errorf("seed %d: search found %d inliers, brute force %d (%d correspondences)", seed, res.Inliers, brute, res.Correspondences)
				}
			}
		})
	}
}

// MaxPerWord and MaxCorrespondences bound the correspondences, and each
// word's pairs are distinct.
func TestCorrespondenceCaps(t *testing.T) {
	q, c := &Geometry{}, &Geometry{}
	rng := rand.New(rand.NewPCG(1, 1))
	// word 1: 3×5 keypoints, word 2: 1×1, word 3: 6×2, word 4 only in q.
	for _, wc := range [][3]int{{1, 3, 5}, {2, 1, 1}, {3, 6, 2}, {4, 2, 0}} {
		for range wc[1] {
			randomKeypoint(rng, q, uint32(wc[0]), 100, 100)
		}
		for range wc[2] {
			randomKeypoint(rng, c, uint32(wc[0]), 100, 100)
		}
	}
	q.Sort()
	c.Sort()
	for _, tc := range []struct {
		perWord, total, want int
	}{
		{1, 1000, 3},
		{4, 1000, 4 + 1 + 4},
		{15, 1000, 15 + 1 + 12},
		{100, 1000, 15 + 1 + 12},
		{4, 5, 5},
		{1, 2, 2},
		{4, 1, 1},
	} {
		opt := DefaultOptions()
		opt.MaxPerWord, opt.MaxCorrespondences = tc.perWord, tc.total
		m := mustMatcher(t, opt)
		res := m.Verify(q, c)
		if res.Correspondences != tc.want {
			t.Errorf("MaxPerWord %d, MaxCorrespondences %d: %d correspondences, want %d", tc.perWord, tc.total, res.Correspondences, tc.want)
		}
		seen := map[[2]int32]bool{}
		for _, p := range m.corrs {
			if seen[[2]int32{p.i, p.j}] {
				t.Errorf("MaxPerWord %d: pair (%d, %d) twice", tc.perWord, p.i, p.j)
			}
			seen[[2]int32{p.i, p.j}] = true
			if q.Words[p.i] != c.Words[p.j] {
				t.Errorf("pair (%d, %d) joins words %d and %d", p.i, p.j, q.Words[p.i], c.Words[p.j])
			}
		}
		// The cap keeps the distinctive word, seen once in each image,
		// before any pair of the others.
		if !slices.ContainsFunc(m.corrs, func(p corr) bool { return q.Words[p.i] == 2 }) {
			t.Errorf("MaxPerWord %d, MaxCorrespondences %d: word 2's only pair is left out", tc.perWord, tc.total)
		}
	}
}

// pairOf enumerates each word's pairs once, and its first max(a, b) pairs
// use every keypoint of the longer side.
func TestPairOf(t *testing.T) {
	for a := 1; a <= 7; a++ {
		for b := 1; b <= 7; b++ {
			seen := map[[2]int]bool{}
			long := map[int]bool{}
			for r := range a * b {
				i, j := pairOf(r, a, b)
				if i < 0 || i >= a || j < 0 || j >= b || seen[[2]int{i, j}] {
					t.Fatalf("a=%d b=%d r=%d: pair (%d, %d) out of range or repeated", a, b, r, i, j)
				}
				seen[[2]int{i, j}] = true
				if r < max(a, b) {
					long[max(i*(1-boolInt(a < b)), j*boolInt(a < b))] = true
				}
			}
			if len(long) != max(a, b) {
				t.Errorf("a=%d b=%d: first %d pairs use %d keypoints of the longer side", a, b, max(a, b), len(long))
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Degenerate inputs give few or no inliers and never panic.
func TestDegenerateInputs(t *testing.T) {
	one := func(word uint32, x, y float32) *Geometry {
		g := &Geometry{}
		g.Append(word, x, y, 2, 1)
		return g
	}
	clump := func(n int, word func(k int) uint32) *Geometry {
		g := &Geometry{}
		for k := range n {
			g.Append(word(k), 50, 50, 3, float32(k%7))
		}
		g.Sort()
		return g
	}
	line := &Geometry{Width: 100, Height: 100}
	for k := range 20 {
		line.Append(uint32(k), float32(5*k), float32(5*k), 2, 0)
	}
	nan := &Geometry{}
	nan.Append(1, float32(math.NaN()), 0, 2, 0)
	nan.Append(2, 0, 0, float32(math.Inf(1)), 0)
	nan.Append(3, 0, 0, 0, float32(math.NaN()))
	nan.Append(4, 1, 1, -1, 0)
	for _, tc := range []struct {
		name        string
		q, c        *Geometry
		maxInliers  int
		wantCorresp int
	}{
		{"both empty", &Geometry{}, &Geometry{}, 0, 0},
		{"empty candidate", one(1, 3, 3), &Geometry{}, 0, 0},
		{"no shared word", one(1, 3, 3), one(2, 3, 3), 0, 0},
		{"one keypoint each", one(1, 3, 3), one(1, 30, 30), 1, 1},
		{"all at one point", clump(50, func(k int) uint32 { return uint32(k % 10) }), clump(50, func(k int) uint32 { return uint32(k % 10) }), 1000, 10 * 4}, // 10 words of 5×5 keypoints, 4 pairs each,
		{"one word everywhere", clump(50, func(int) uint32 { return 3 }), clump(50, func(int) uint32 { return 3 }), 4, 4},
		{"collinear", line, line, 20, 20},
		{"non-finite frames", nan, nan, 1, 1}, // only the pair of negative scales has a finite ratio
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustMatcher(t, DefaultOptions())
			res := m.Verify(tc.q, tc.c)
			if res.Inliers > tc.maxInliers {
				t.Errorf("%d inliers, want <= %d", res.Inliers, tc.maxInliers)
			}
			if tc.wantCorresp >= 0 && res.Correspondences != tc.wantCorresp {
				t.Errorf("%d correspondences, want %d", res.Correspondences, tc.wantCorresp)
			}
			for _, v := range []float64{res.Transform.A11, res.Transform.A12, res.Transform.A21, res.Transform.A22, res.Transform.Tx, res.Transform.Ty} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("transform %+v is not finite", res.Transform)
				}
			}
			if len(m.Inliers(nil)) != res.Inliers {
				t.Errorf("Inliers gave %d pairs, Result %d", len(m.Inliers(nil)), res.Inliers)
			}
		})
	}
}

func TestVerifyPanicsOnRaggedGeometry(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "candidate geometry of 1 words has 0 x") {
			t.Errorf("recovered %v, want a panic naming the candidate's lengths", r)
		}
	}()
	m := mustMatcher(t, DefaultOptions())
	m.Verify(&Geometry{}, &Geometry{Words: []uint32{1}})
}

func TestGeometryValidate(t *testing.T) {
	ok := func() *Geometry {
		g := &Geometry{Width: 10, Height: 10}
		g.Append(1, 1, 1, 1, 0)
		g.Append(2, 1, 1, 1, -7)
		return g
	}
	for _, tc := range []struct {
		name string
		edit func(g *Geometry)
		want string
	}{
		{"valid", func(*Geometry) {}, ""},
		{"ragged", func(g *Geometry) { g.Y = g.Y[:1] }, "2 words has 2 x, 1 y"},
		{"unsorted", func(g *Geometry) { g.Words[0] = 3 }, "keypoint 1: word 2 after word 3"},
		{"zero scale", func(g *Geometry) { g.Scale[1] = 0 }, "keypoint 1: scale 0"},
		{"nan x", func(g *Geometry) { g.X[0] = float32(math.NaN()) }, "keypoint 0: x NaN"},
		{"inf angle", func(g *Geometry) { g.Angle[0] = float32(math.Inf(-1)) }, "angle -Inf"},
		{"negative size", func(g *Geometry) { g.Width = -1 }, "size -1×10"},
	} {
		g := ok()
		tc.edit(g)
		err := g.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		edit func(o *Options)
		want string
	}{
		{func(o *Options) { o.MaxPerWord = 0 }, "MaxPerWord = 0"},
		{func(o *Options) { o.MaxCorrespondences = 0 }, "MaxCorrespondences = 0"},
		{func(o *Options) { o.MaxCorrespondences = 1 << 30 }, "MaxCorrespondences = 1073741824"},
		{func(o *Options) { o.Threshold = 0 }, "Threshold = 0"},
		{func(o *Options) { o.Threshold = math.NaN() }, "Threshold = NaN"},
		{func(o *Options) { o.ScaleTolerance = 1 }, "ScaleTolerance = 1,"},
		{func(o *Options) { o.AngleTolerance = 4 }, "AngleTolerance = 4"},
		{func(o *Options) { o.RefineIterations = -1 }, "RefineIterations = -1"},
		{func(o *Options) { o.MinInliers = 0 }, "MinInliers = 0"},
		{func(o *Options) { o.MaxNFA = 0 }, "MaxNFA = 0"},
		{func(o *Options) { o.MaxNFA = math.Inf(1) }, "MaxNFA = +Inf"},
	} {
		o := DefaultOptions()
		tc.edit(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
		if _, err := NewMatcher(o); err == nil {
			t.Errorf("NewMatcher accepted options with %s", tc.want)
		}
	}
}

// Verifying a query's candidates allocates nothing once the Matcher has
// grown its scratch, Inliers into a reused slice included.
func TestVerifyDoesNotAllocate(t *testing.T) {
	var q *Geometry
	var cands []*Geometry
	for k := range 10 {
		s := scene{n: 1000, planted: 3 * k, outliers: 1000, vocab: 500, bursts: 2, burst: 10,
			truth: Similarity(1, 0.1, 0, 0), noise: 1, w: 640, h: 480}
		var c *Geometry
		q, c, _ = s.build(9)
		cands = append(cands, c)
	}
	m := mustMatcher(t, DefaultOptions())
	var inl []Pair
	verifyAll := func() {
		for _, c := range cands {
			m.Verify(q, c)
			inl = m.Inliers(inl[:0])
		}
	}
	verifyAll()
	if a := testing.AllocsPerRun(5, verifyAll); a != 0 {
		t.Errorf("verifying %d candidates allocates %v times", len(cands), a)
	}
}

// Skipping the hypotheses that are inliers of the best so far loses
// almost nothing: after the refinement, the inliers are within 3% of those
// of trying every hypothesis, on pairs from unrelated to nearly all
// planted.
func TestSkippingInliersOfBest(t *testing.T) {
	for seed := range uint64(12) {
		s := scene{n: 800, planted: []int{0, 5, 10, 30, 100, 400}[seed%6], outliers: 800,
			vocab: []int{300, 3000}[seed%2], bursts: 3, burst: 10,
			truth: Affine{A11: 0.9, A12: 0.2, A21: -0.1, A22: 1.1, Tx: 5, Ty: 5}, noise: 2, w: 640, h: 480}
		q, c, _ := s.build(seed + 50)
		fast, all := mustMatcher(t, DefaultOptions()), mustMatcher(t, DefaultOptions())
		all.exhaustive = true
		rf, ra := fast.Verify(q, c), all.Verify(q, c)
		if rf.Inliers*100 < ra.Inliers*97 || rf.Verified != ra.Verified {
			t.Errorf("seed %d, %d planted: %d inliers (verified %v), trying every hypothesis %d (%v)",
				seed, s.planted, rf.Inliers, rf.Verified, ra.Inliers, ra.Verified)
		}
	}
}

// texture adds to g a repeated texture: the words, each on a lattice of
// side×side points spaced step pixels apart from (x0, y0), every element
// of one scale and orientation, as a repeated pattern's are.
func texture(g *Geometry, words []uint32, side int, step, x0, y0 float32) {
	for k, w := range words {
		for i := range side {
			for j := range side {
				g.Append(w, x0+float32(i)*step+float32(k)*step/float32(len(words)), y0+float32(j)*step, 3, 0.5)
			}
		}
	}
}

// patch adds to g a cluster: each word once, all within a few pixels of
// (x, y), of one scale and orientation.
func patch(g *Geometry, words []uint32, x, y float32) {
	for k, w := range words {
		g.Append(w, x+float32(k%4)*2, y+float32(k/4)*2, 2, 1)
	}
}

// Two images of different content that share a repeated texture agree
// under one transform only by the texture: its few words repeated over a
// lattice, or many words packed in one small region. Acceptance counts such
// a burst as the little evidence it is and does not verify the pair; the
// same content under a similarity, texture and all, still verifies.
func TestChanceMatchesOfTextureAreNotVerified(t *testing.T) {
	m := mustMatcher(t, DefaultOptions())
	content := func(seed uint64, first uint32) *Geometry {
		rng := rand.New(rand.NewPCG(seed, 3))
		g := &Geometry{Width: 640, Height: 480}
		for range 300 {
			randomKeypoint(rng, g, first+uint32(rng.IntN(5000)), 640, 480)
		}
		return g
	}
	lattice := []uint32{90001, 90002, 90003}
	cluster := []uint32{91000, 91001, 91002, 91003, 91004, 91005, 91006, 91007, 91008, 91009}
	for _, tc := range []struct {
		name string
		add  func(q, c *Geometry)
	}{
		{"one texture's words on a lattice", func(q, c *Geometry) {
			texture(q, lattice, 8, 30, 40, 60)
			texture(c, lattice, 8, 30, 300, 200)
		}},
		{"many words in one small region", func(q, c *Geometry) {
			patch(q, cluster, 100, 100)
			patch(c, cluster, 420, 300)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Different content: disjoint words, so that only the
			// texture's are shared.
			q, c := content(1, 0), content(2, 10000)
			tc.add(q, c)
			q.Sort()
			c.Sort()
			res := m.Verify(q, c)
			if res.Inliers < DefaultOptions().MinInliers {
				t.Fatalf("the texture gave %d inliers, fewer than MinInliers: the test would prove little", res.Inliers)
			}
			if res.Verified {
				t.Errorf("different content sharing a texture verified: %+v", res)
			}

			// The query's own content and texture under a similarity.
			same := &Geometry{Width: 640, Height: 480}
			truth := Similarity(0.8, 0.3, 120, -40)
			for k := range q.Words {
				x, y := truth.Apply(float64(q.X[k]), float64(q.Y[k]))
				same.Append(q.Words[k], float32(x), float32(y), q.Scale[k]*0.8, q.Angle[k]+0.3)
			}
			same.Sort()
			if res := m.Verify(q, same); !res.Verified {
				t.Errorf("the query under a similarity not verified: %+v", res)
			}
		})
	}
}

// logNFA is ORSA's count, (n − 1)·k·C(n, k)·p^(k−1), here by exact
// binomials; and the least support it accepts grows with the
// correspondences and with the threshold's share of the image.
func TestNFA(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		p    float64
	}{{20, 3, 5e-4}, {60, 4, 5e-4}, {1000, 9, 6e-4}, {7, 7, 0.1}} {
		c := new(big.Int).Binomial(int64(tc.n), int64(tc.k))
		cf, _ := new(big.Float).SetInt(c).Float64()
		want := math.Log10(float64(tc.n-1) * float64(tc.k) * cf * math.Pow(tc.p, float64(tc.k-1)))
		if got := logNFA(tc.n, tc.k, tc.p); math.Abs(got-want) > 1e-9 {
			t.Errorf("logNFA(%d, %d, %g) = %v, want %v", tc.n, tc.k, tc.p, got, want)
		}
	}
	if !math.IsInf(logNFA(10, 1, 0.01), 1) || !math.IsInf(logNFA(3, 4, 0.01), 1) {
		t.Error("one inlier, or more inliers than correspondences, has a finite NFA")
	}
	m := mustMatcher(t, DefaultOptions())
	least := func(w, h float32, n int) int {
		p := m.chance(&Geometry{Width: w, Height: h}, max(m.opt.Threshold*float64(max(w, h)), 1))
		k := 2
		for logNFA(n, k, p) >= 0 {
			k++
		}
		return k
	}
	prev := 0
	for _, n := range []int{10, 30, 100, 300, 1000} {
		k := least(640, 480, n)
		if k < prev {
			t.Errorf("%d correspondences need %d inliers, fewer than with fewer correspondences (%d)", n, k, prev)
		}
		prev = k
	}
	if least(640, 480, 10) >= least(640, 480, 1000) {
		t.Errorf("the least support does not grow from 10 to 1,000 correspondences")
	}
	// A long thin image: the same threshold (a fraction of the longer
	// side) covers more of its area, so chance agrees more often.
	if least(640, 48, 300) <= least(640, 480, 300) {
		t.Errorf("a tenth of the area asks no more support: %d against %d", least(640, 48, 300), least(640, 480, 300))
	}
}
