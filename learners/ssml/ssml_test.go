package ssml_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/learners/ssml"
)

// toySet is images whose class shows in the first informative feature
// dimensions (class means, small within-class spread) while the other
// dimensions are high-variance noise; the tags are noisy: each of the
// class's 3 tags with probability 0.7, plus a random tag from any class with
// probability 0.3.
type toySet struct {
	X      *mat.Dense
	tags   []sparse.Vector
	labels []int
}

func makeToy(rng *rand.Rand, n, k, informative, noise int) toySet {
	means := mat.NewDense(k, informative, nil)
	for c := range k {
		for j := range informative {
			means.Set(c, j, 1.5*rng.NormFloat64())
		}
	}
	d := informative + noise
	s := toySet{X: mat.NewDense(n, d, nil), tags: make([]sparse.Vector, n), labels: make([]int, n)}
	for i := range n {
		c := rng.IntN(k)
		s.labels[i] = c
		for j := range informative {
			s.X.Set(i, j, means.At(c, j)+0.5*rng.NormFloat64())
		}
		for j := informative; j < d; j++ {
			s.X.Set(i, j, 2*rng.NormFloat64())
		}
		set := map[uint32]bool{}
		for t := range 3 {
			if rng.Float64() < 0.7 {
				set[uint32(3*c+t)] = true
			}
		}
		if rng.Float64() < 0.3 {
			set[uint32(rng.IntN(3*k))] = true
		}
		var v sparse.Vector
		for t := range set {
			v.Idx = append(v.Idx, t)
		}
		slices.Sort(v.Idx)
		for range v.Idx {
			v.Val = append(v.Val, 1)
		}
		s.tags[i] = v
	}
	return s
}

// split returns rows [lo, hi) of the set.
func (s toySet) split(lo, hi int) toySet {
	_, d := s.X.Dims()
	return toySet{X: mat.DenseCopyOf(s.X.Slice(lo, hi, 0, d)), tags: s.tags[lo:hi], labels: s.labels[lo:hi]}
}

func cosine(a, b sparse.Vector) float64 {
	na, nb := sparse.Norm(a), sparse.Norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	return sparse.Dot(a, b) / (na * nb)
}

// retrieval returns the mAP (relevant = same class, the paper's concept
// ground truth) and NDCG@10 (graded relevance = cosine of the tag vectors,
// the paper's Eqs. 23–25) of ranking db by dist for every query.
func retrieval(dist func(a, b []float64) float64, db, queries toySet) (mAP, ndcg float64) {
	nq, _ := queries.X.Dims()
	ndb, _ := db.X.Dims()
	for qi := range nq {
		q := queries.X.RawRowView(qi)
		order := make([]int, ndb)
		ds := make([]float64, ndb)
		for i := range ndb {
			order[i] = i
			ds[i] = dist(q, db.X.RawRowView(i))
		}
		sort.SliceStable(order, func(a, b int) bool { return ds[order[a]] < ds[order[b]] })
		var hits, ap float64
		for r, i := range order {
			if db.labels[i] == queries.labels[qi] {
				hits++
				ap += hits / float64(r+1)
			}
		}
		if hits > 0 {
			mAP += ap / hits
		}
		gains := make([]float64, ndb)
		for i := range ndb {
			gains[i] = cosine(queries.tags[qi], db.tags[i])
		}
		var dcg float64
		for r, i := range order[:10] {
			dcg += (math.Pow(2, gains[i]) - 1) / math.Log(float64(r+2))
		}
		ideal := slices.Clone(gains)
		slices.Sort(ideal)
		slices.Reverse(ideal)
		var idcg float64
		for r, g := range ideal[:10] {
			idcg += (math.Pow(2, g) - 1) / math.Log(float64(r+2))
		}
		if idcg > 0 {
			ndcg += dcg / idcg
		}
	}
	return mAP / float64(nq), ndcg / float64(nq)
}

func euclidean(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s
}

func TestLearnedMetricSuppressesNoiseAndBeatsEuclidean(t *testing.T) {
	const informative, noise = 4, 16
	all := makeToy(rand.New(rand.NewPCG(1, 2)), 700, 6, informative, noise)
	train, db, queries := all.split(0, 300), all.split(300, 620), all.split(620, 700)
	m, err := ssml.Train(train.X, train.tags, ssml.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	norms := m.RowNorms()
	minInf := slices.Min(norms[:informative])
	maxNoise := slices.Max(norms[informative:])
	t.Logf("row norms: informative %.3f, noise %.3g; sparsity %.2f; %d iterations (converged %v); τ = %.4g",
		norms[:informative], norms[informative:], m.Sparsity(), m.Iterations(), m.Converged(), m.Tau())
	if minInf <= 0 || maxNoise > 0.05*minInf {
		t.Errorf("noise rows did not shrink: smallest informative row norm %.4g, largest noise row norm %.4g", minInf, maxNoise)
	}
	if sp := m.Sparsity(); sp < 0.5 {
		t.Errorf("sparsity %.2f, want ≥ 0.5 of the rows zero (%d of %d dimensions are noise)", sp, noise, informative+noise)
	}

	eucMAP, eucNDCG := retrieval(euclidean, db, queries)
	metMAP, metNDCG := retrieval(m.Distance, db, queries)
	t.Logf("held-out retrieval: mAP Euclidean %.4f, SSML %.4f; NDCG@10 Euclidean %.4f, SSML %.4f", eucMAP, metMAP, eucNDCG, metNDCG)
	if metMAP < eucMAP+0.15 {
		t.Errorf("SSML mAP %.4f does not beat Euclidean %.4f by 0.15", metMAP, eucMAP)
	}
	if metNDCG <= eucNDCG {
		t.Errorf("SSML NDCG@10 %.4f does not beat Euclidean %.4f", metNDCG, eucNDCG)
	}

	// M is PSD, and Distance agrees with the factor: d_M = ‖Uᵀ(a − b)‖².
	M := m.Metric()
	var eig mat.EigenSym
	if !eig.Factorize(M, false) {
		t.Fatal("eigendecomposition failed")
	}
	vals := eig.Values(nil)
	if vals[0] < -1e-10*vals[len(vals)-1] {
		t.Errorf("metric is not PSD: smallest eigenvalue %v", vals[0])
	}
	U := m.Factor()
	for i := range 20 {
		a, b := db.X.RawRowView(i), queries.X.RawRowView(i)
		diff := mat.NewVecDense(len(a), nil)
		diff.SubVec(mat.NewVecDense(len(a), a), mat.NewVecDense(len(b), b))
		var proj mat.VecDense
		proj.MulVec(U.T(), diff)
		want := mat.Dot(&proj, &proj)
		if got := m.Distance(a, b); got < 0 || math.Abs(got-want) > 1e-9*(1+want) {
			t.Fatalf("Distance = %v, ‖Uᵀ(a−b)‖² = %v", got, want)
		}
	}
}

func TestObjectiveNonIncreasing(t *testing.T) {
	s := makeToy(rand.New(rand.NewPCG(3, 4)), 200, 5, 3, 12)
	tests := []ssml.Params{
		ssml.DefaultParams(),
		{Alpha: 0.5, Beta: 2, Epsilon: 1e-3, MaxIter: 200, Tol: 0},
		{Alpha: 3, Beta: 0.1, Epsilon: 1e-8, MaxIter: 200, Tol: 0},
		{Alpha: 1, Beta: 10, Epsilon: 1e-6, MaxIter: 200, Tol: 0},
	}
	for _, p := range tests {
		m, err := ssml.Train(s.X, s.tags, p)
		if err != nil {
			t.Fatal(err)
		}
		obj := m.Objective()
		if len(obj) != m.Iterations()+1 {
			t.Fatalf("%+v: %d objective values for %d iterations", p, len(obj), m.Iterations())
		}
		for i := 1; i < len(obj); i++ {
			if obj[i] > obj[i-1]+1e-12*math.Abs(obj[i-1]) {
				t.Errorf("%+v: objective rose at iteration %d: %.15g -> %.15g", p, i, obj[i-1], obj[i])
				break
			}
		}
		if !(obj[len(obj)-1] < obj[0]) {
			t.Errorf("%+v: objective did not fall: %v -> %v", p, obj[0], obj[len(obj)-1])
		}
	}
}

// denseC computes C = αI − XᵀLX/τ the slow way, from the explicit n×n cosine
// graph and uncentred X, as an independent check of Train's set-up.
func denseC(X *mat.Dense, tags []sparse.Vector, alpha float64) *mat.Dense {
	n, d := X.Dims()
	L := mat.NewDense(n, n, nil)
	for i := range n {
		var deg float64
		for j := range n {
			w := cosine(tags[i], tags[j])
			deg += w
			L.Set(i, j, -w)
		}
		L.Set(i, i, L.At(i, i)+deg)
	}
	var LX, K mat.Dense
	LX.Mul(L, X)
	K.Mul(X.T(), &LX)
	tau := mat.Trace(&K) / float64(d)
	C := mat.NewDense(d, d, nil)
	C.Scale(-1/tau, &K)
	for l := range d {
		C.Set(l, l, C.At(l, l)+alpha)
	}
	return C
}

func TestFixedPointIsGroupSoftThreshold(t *testing.T) {
	s := makeToy(rand.New(rand.NewPCG(5, 6)), 80, 4, 3, 7)
	// Shift the features: XᵀLX must not depend on the mean.
	n, d := s.X.Dims()
	for i := range n {
		for j := range d {
			s.X.Set(i, j, s.X.At(i, j)+10)
		}
	}
	for _, beta := range []float64{0, 0.7, 1.5} {
		p := ssml.Params{Alpha: 1.3, Beta: beta, Epsilon: 1e-12, MaxIter: 5000, Tol: 0, ZeroTol: 0}
		m, err := ssml.Train(s.X, s.tags, p)
		if err != nil {
			t.Fatal(err)
		}
		C := denseC(s.X, s.tags, p.Alpha)
		raw := m.Unprojected()
		checked, killed := 0, 0
		for l := range d {
			c := mat.Row(nil, l, C)
			cn := mat.Norm(mat.NewVecDense(d, c), 2)
			if math.Abs(cn-beta/2) < 0.05 {
				continue // near the threshold the iteration converges slowly
			}
			// ε → 0 fixed point: ‖m_l‖ = max(0, (‖c_l‖ − β/2)/α), m_l ∥ c_l.
			scale := math.Max(0, (cn-beta/2)/p.Alpha) / cn
			checked++
			if scale == 0 {
				killed++
			}
			for j := range d {
				if got, want := raw.At(l, j), scale*c[j]; math.Abs(got-want) > 1e-7*(1+math.Abs(want)) {
					t.Fatalf("β = %v: M[%d,%d] = %.10g, want %.10g (row norm of C %.4g)", beta, l, j, got, want, cn)
				}
			}
		}
		t.Logf("β = %v: %d of %d rows checked, %d of them suppressed", beta, checked, d, killed)
		if checked < d/2 || (beta == 1.5 && killed == 0) {
			t.Errorf("β = %v: only %d rows checked, %d suppressed: the test data do not exercise the threshold", beta, checked, killed)
		}
		if beta == 0 && m.Sparsity() != 0 {
			t.Errorf("β = 0: sparsity %v, want 0", m.Sparsity())
		}
	}
}

func TestValidation(t *testing.T) {
	s := makeToy(rand.New(rand.NewPCG(7, 8)), 20, 2, 2, 2)
	def := ssml.DefaultParams()
	with := func(f func(*ssml.Params)) ssml.Params { p := def; f(&p); return p }
	noShared := make([]sparse.Vector, 20)
	for i := range noShared {
		noShared[i] = sparse.Vector{Idx: []uint32{uint32(i)}, Val: []float32{1}}
	}
	negative := slices.Clone(s.tags)
	negative[4] = sparse.Vector{Idx: []uint32{0}, Val: []float32{-1}}
	unsorted := slices.Clone(s.tags)
	unsorted[2] = sparse.Vector{Idx: []uint32{3, 1}, Val: []float32{1, 1}}
	nan := mat.DenseCopyOf(s.X)
	nan.Set(1, 1, math.Inf(1))
	tests := []struct {
		name string
		X    *mat.Dense
		tags []sparse.Vector
		p    ssml.Params
		want string
	}{
		{"alpha", s.X, s.tags, with(func(p *ssml.Params) { p.Alpha = 0 }), "Alpha"},
		{"beta", s.X, s.tags, with(func(p *ssml.Params) { p.Beta = -1 }), "Beta"},
		{"epsilon", s.X, s.tags, with(func(p *ssml.Params) { p.Epsilon = 0 }), "Epsilon"},
		{"maxiter", s.X, s.tags, with(func(p *ssml.Params) { p.MaxIter = 0 }), "MaxIter"},
		{"tol", s.X, s.tags, with(func(p *ssml.Params) { p.Tol = math.NaN() }), "Tol"},
		{"zerotol", s.X, s.tags, with(func(p *ssml.Params) { p.ZeroTol = 1 }), "ZeroTol"},
		{"nil X", nil, s.tags, def, "nil feature"},
		{"row count", s.X, s.tags[:19], def, "20 rows but there are 19"},
		{"not finite", nan, s.tags, def, "X[1,1] = +Inf"},
		{"negative tag", s.X, negative, def, "negative"},
		{"unsorted tags", s.X, unsorted, def, "tags of image 2"},
		{"no shared tags", s.X, noShared, def, "no two images share a tag"},
		{"constant features", mat.NewDense(20, 4, nil), s.tags, def, "tr(XᵀLX) = 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ssml.Train(tc.X, tc.tags, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// Several bad parameters are all reported.
	err := with(func(p *ssml.Params) { p.Alpha, p.Beta = -1, -1 }).Validate()
	if err == nil || !strings.Contains(err.Error(), "Alpha") || !strings.Contains(err.Error(), "Beta") {
		t.Errorf("Validate = %v, want both Alpha and Beta reported", err)
	}
	m, err := ssml.Train(s.X, s.tags, def)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Distance with the wrong length did not panic")
		}
	}()
	m.Distance([]float64{1}, []float64{2})
}
