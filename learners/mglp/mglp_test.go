package mglp_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners/itq"
	"github.com/bowline/bowline/learners/mglp"
)

// multimodal is a toy multimodal set: images (X) and their tags (Y, dense
// 0/1), with ground-truth classes for evaluation only.
type multimodal struct {
	X, Y   *mat.Dense
	labels []int
}

// makeMultimodal draws n images of k classes. Each class lies on a curved
// 1-D manifold, an arc of radius 2 around a class centre (sd 0.5 per
// coordinate) in a plane of its own in a 16-dimensional signal subspace;
// the arcs of different classes pass close to each other. 48 further
// dimensions are noise with sd 1.5, which dominate the variance, so that
// PCA-based codes see little of the classes. Each image has each of its
// class's 3 tags with probability 0.5 and one tag of any class with
// probability 0.5: the text is informative but noisy.
func makeMultimodal(rng *rand.Rand, n, k int) multimodal {
	const sig, noise, radius, tagsPer = 16, 48, 2.0, 3
	type arc struct{ c, u, v []float64 }
	arcs := make([]arc, k)
	for c := range arcs {
		a := arc{make([]float64, sig), make([]float64, sig), make([]float64, sig)}
		for j := range sig {
			a.c[j] = 0.5 * rng.NormFloat64()
			a.u[j] = rng.NormFloat64()
			a.v[j] = rng.NormFloat64()
		}
		orthonormalise(a.u, a.v)
		arcs[c] = a
	}
	d, t := sig+noise, tagsPer*k
	s := multimodal{X: mat.NewDense(n, d, nil), Y: mat.NewDense(n, t, nil), labels: make([]int, n)}
	for i := range n {
		c := rng.IntN(k)
		s.labels[i] = c
		th := math.Pi * rng.Float64()
		a := arcs[c]
		for j := range sig {
			s.X.Set(i, j, a.c[j]+radius*(math.Cos(th)*a.u[j]+math.Sin(th)*a.v[j])+0.1*rng.NormFloat64())
		}
		for j := sig; j < d; j++ {
			s.X.Set(i, j, 1.5*rng.NormFloat64())
		}
		for tg := range tagsPer {
			if rng.Float64() < 0.5 {
				s.Y.Set(i, tagsPer*c+tg, 1)
			}
		}
		if rng.Float64() < 0.5 {
			s.Y.Set(i, rng.IntN(t), 1)
		}
	}
	return s
}

// orthonormalise makes u and v orthonormal (Gram–Schmidt).
func orthonormalise(u, v []float64) {
	norm := func(x []float64) float64 {
		var s float64
		for _, e := range x {
			s += e * e
		}
		return math.Sqrt(s)
	}
	nu := norm(u)
	for j := range u {
		u[j] /= nu
	}
	var dot float64
	for j := range u {
		dot += u[j] * v[j]
	}
	for j := range v {
		v[j] -= dot * u[j]
	}
	nv := norm(v)
	for j := range v {
		v[j] /= nv
	}
}

func (s multimodal) rows(lo, hi int) multimodal {
	_, d := s.X.Dims()
	_, t := s.Y.Dims()
	return multimodal{
		X:      mat.DenseCopyOf(s.X.Slice(lo, hi, 0, d)),
		Y:      mat.DenseCopyOf(s.Y.Slice(lo, hi, 0, t)),
		labels: s.labels[lo:hi],
	}
}

type encoder interface {
	EncodeAll(*mat.Dense) ([]itq.Code, error)
}

// hammingRanking returns the mAP and the precision of the top 10 (the
// paper's measure) of ranking db by Hamming distance to each query,
// relevant = same class.
func hammingRanking(t *testing.T, e encoder, db, queries multimodal) (mAP, p10 float64) {
	t.Helper()
	dbc, err := e.EncodeAll(db.X)
	if err != nil {
		t.Fatal(err)
	}
	qc, err := e.EncodeAll(queries.X)
	if err != nil {
		t.Fatal(err)
	}
	for qi, c := range qc {
		var hits, ap float64
		for r, i := range itq.Rank(c, dbc) {
			if db.labels[i] == queries.labels[qi] {
				hits++
				ap += hits / float64(r+1)
				if r < 10 {
					p10++
				}
			}
		}
		if hits > 0 {
			mAP += ap / hits
		}
	}
	return mAP / float64(len(qc)), p10 / float64(10*len(qc))
}

// TestComparison is the paper's experiment on toy data: Hamming ranking of a
// database by image queries, with codes from ITQ, CCA-ITQ, uGLP, mGLP⁻ (no
// refinement) and mGLP.
func TestComparison(t *testing.T) {
	const k, bits = 16, 16
	all := makeMultimodal(rand.New(rand.NewPCG(1, 2)), 1200, k)
	db, queries := all.rows(0, 1000), all.rows(1000, 1200)
	opt := itq.DefaultOptions()
	p := mglp.DefaultParams()
	pMinus := p
	pMinus.Iterations = 0

	type result struct{ mAP, p10 float64 }
	res := map[string]result{}
	run := func(name string, e encoder, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, p10 := hammingRanking(t, e, db, queries)
		res[name] = result{m, p10}
		t.Logf("%-8s mAP %.4f  P@10 %.4f", name, m, p10)
	}
	e1, err := itq.Train(db.X, bits, opt)
	run("itq", e1, err)
	e2, err := itq.TrainCCA(db.X, db.Y, bits, opt)
	run("cca-itq", e2, err)
	e3, err := mglp.Train(db.X, nil, bits, p)
	run("uglp", e3, err)
	e4, err := mglp.Train(db.X, db.Y, bits, pMinus)
	run("mglp-", e4, err)
	m, err := mglp.Train(db.X, db.Y, bits, p)
	run("mglp", m, err)
	t.Logf("chance ≈ %.4f; sparse codes %+v; image share of the eigenvectors %.2f", 1.0/k, m.Coding(), m.ImageShare())

	// Multimodal learning pays: mGLP beats the uni-modal codes.
	for _, base := range []string{"itq", "uglp"} {
		if res["mglp"].mAP < res[base].mAP+0.3 {
			t.Errorf("mGLP mAP %.4f does not beat %s (%.4f) by 0.3", res["mglp"].mAP, base, res[base].mAP)
		}
	}
	// The quantisation refinement pays (the paper's mGLP vs mGLP⁻).
	if res["mglp"].mAP < res["mglp-"].mAP+0.05 {
		t.Errorf("mGLP mAP %.4f does not beat mGLP⁻ %.4f by 0.05", res["mglp"].mAP, res["mglp-"].mAP)
	}
	for _, c := range m.Coding() {
		if c.Unconverged > 0 {
			t.Errorf("%d sparse codes did not converge", c.Unconverged)
		}
	}
	loss := m.Loss()
	for i := 1; i < len(loss); i++ {
		if loss[i] > loss[i-1]*(1+1e-12) {
			t.Errorf("refinement loss rose at iteration %d: %v -> %v", i, loss[i-1], loss[i])
		}
	}
}

// TestLargeEtaIsCCA checks the paper's remark after Eq. (16): as η → ∞ the
// problem becomes CCA, so every eigenvector splits its norm evenly between
// the views and the eigenvalues approach η(1 − r_i) for the canonical
// correlations r_i (here compared with itq's CCA).
func TestLargeEtaIsCCA(t *testing.T) {
	all := makeMultimodal(rand.New(rand.NewPCG(3, 4)), 400, 6)
	const bits, eta = 6, 1e6
	p := mglp.DefaultParams()
	p.Eta, p.Iterations = eta, 0
	m, err := mglp.Train(all.X, all.Y, bits, p)
	if err != nil {
		t.Fatal(err)
	}
	cca, err := itq.TrainCCA(all.X, all.Y, bits, itq.Options{Reg: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	r := cca.Correlations()
	for i, v := range m.Eigenvalues() {
		if got, want := 1-v/eta, r[i]; math.Abs(got-want) > 1e-3 {
			t.Errorf("eigenvalue %d: 1 − ν/η = %.5f, canonical correlation %.5f", i, got, want)
		}
		if s := m.ImageShare()[i]; math.Abs(s-0.5) > 1e-3 {
			t.Errorf("eigenvector %d: image share %.4f, want 0.5", i, s)
		}
	}
}

// TestBitsBeyondTextRank checks that a code longer than the texts have
// principal directions learns only that many relaxed directions (the
// paper's constraint BᵀỸᵀỸB ∝ I admits no more): without the refinement
// the other bits' projections are zero, so those bits are constant and add
// nothing to a Hamming distance, and with it the projection still has the
// texts' rank, the extra bits being further rotations of the same
// directions.
func TestBitsBeyondTextRank(t *testing.T) {
	all := makeMultimodal(rand.New(rand.NewPCG(9, 10)), 400, 4)
	const bits = 20
	_, r := all.Y.Dims() // 12 tags, not one-hot: rank 12 after centring
	p := mglp.DefaultParams()
	p.Iterations = 0
	minus, err := mglp.Train(all.X, all.Y, bits, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(minus.Eigenvalues()); n != r {
		t.Fatalf("%d relaxed directions, want the texts' %d", n, r)
	}
	A := minus.Projection()
	d, _ := A.Dims()
	for j := range bits {
		norm := mat.Norm(A.Slice(0, d, j, j+1), 2)
		if (j < r) != (norm > 0) {
			t.Errorf("column %d of A has norm %v", j, norm)
		}
	}
	codes, err := minus.EncodeAll(all.X)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range codes {
		if want := uint64(1)<<bits - 1<<r; c[0]&want != want {
			t.Fatalf("image %d: code %b, want bits %d… set", i, c[0], r)
		}
	}

	p.Iterations = 50
	m, err := mglp.Train(all.X, all.Y, bits, p)
	if err != nil {
		t.Fatal(err)
	}
	var svd mat.SVD
	if !svd.Factorize(m.Projection(), mat.SVDNone) {
		t.Fatal("SVD failed")
	}
	sv := svd.Values(nil)
	if sv[r-1] < 1e-6*sv[0] || sv[r] > 1e-9*sv[0] {
		t.Errorf("singular values of the refined A %v: want rank %d", sv, r)
	}
}

func TestEncodeDeterminismAndShapes(t *testing.T) {
	all := makeMultimodal(rand.New(rand.NewPCG(5, 6)), 300, 4)
	p := mglp.DefaultParams()
	for _, bits := range []int{5, 64} {
		m, err := mglp.Train(all.X, all.Y, bits, p)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := mglp.Train(all.X, all.Y, bits, p)
		if !mat.Equal(m.Projection(), again.Projection()) {
			t.Errorf("%d bits: same data and seed, different projections", bits)
		}
		if m.Bits() != bits || m.Dim() != 64 || !m.Multimodal() {
			t.Errorf("Bits %d, Dim %d, Multimodal %v; want %d, 64, true", m.Bits(), m.Dim(), m.Multimodal(), bits)
		}
		if r, c := m.TextProjection().Dims(); r != 12 || c != bits {
			t.Errorf("text projection is %d×%d, want 12×%d", r, c, bits)
		}
		codes, err := m.EncodeAll(all.X)
		if err != nil {
			t.Fatal(err)
		}
		var buf itq.Code
		for i := range 300 {
			buf = m.Encode(all.X.RawRowView(i), buf)
			if len(buf) != itq.Words(bits) || itq.Hamming(buf, codes[i]) != 0 {
				t.Fatalf("%d bits: row %d: Encode %b, EncodeAll %b", bits, i, buf, codes[i])
			}
		}
	}
	other := p
	other.Seed = 2
	a, _ := mglp.Train(all.X, all.Y, 8, p)
	b, _ := mglp.Train(all.X, all.Y, 8, other)
	if mat.Equal(a.Projection(), b.Projection()) {
		t.Error("seeds 1 and 2 give the same projection")
	}
	u, err := mglp.Train(all.X, nil, 8, p)
	if err != nil {
		t.Fatal(err)
	}
	if u.Multimodal() || u.TextProjection() != nil || len(u.Coding()) != 1 {
		t.Errorf("uni-modal model: Multimodal %v, text projection %v, %d coding stats", u.Multimodal(), u.TextProjection(), len(u.Coding()))
	}
	for _, s := range u.ImageShare() {
		if s != 1 {
			t.Fatalf("uni-modal image shares %v, want all 1", u.ImageShare())
		}
	}
}

func TestValidation(t *testing.T) {
	all := makeMultimodal(rand.New(rand.NewPCG(7, 8)), 40, 2)
	def := mglp.DefaultParams()
	with := func(f func(*mglp.Params)) mglp.Params { p := def; f(&p); return p }
	nan := mat.DenseCopyOf(all.X)
	nan.Set(2, 3, math.NaN())
	tests := []struct {
		name string
		X, Y *mat.Dense
		bits int
		p    mglp.Params
		want string
	}{
		{"lambda", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Lambda = 1.5 }), "Lambda"},
		{"eta", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Eta = -1 }), "Eta"},
		{"eta zero with text", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Eta = 0 }), "Eta must be > 0"},
		{"tau", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Tau = math.Inf(1) }), "Tau"},
		{"neighbors", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Neighbors = 0 }), "Neighbors"},
		{"lsh bits", all.X, all.Y, 4, with(func(p *mglp.Params) { p.LSHBits = 65 }), "LSHBits"},
		{"reg", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Reg = 0 }), "Reg"},
		{"iterations", all.X, all.Y, 4, with(func(p *mglp.Params) { p.Iterations = -1 }), "Iterations"},
		{"coding iter", all.X, all.Y, 4, with(func(p *mglp.Params) { p.CodingIter = 0 }), "CodingIter"},
		{"coding tol", all.X, all.Y, 4, with(func(p *mglp.Params) { p.CodingTol = 0 }), "CodingTol"},
		{"nil X", nil, all.Y, 4, def, "nil X"},
		{"nan", nan, all.Y, 4, def, "X[2,3] = NaN"},
		{"rows", all.X, mat.NewDense(39, 6, nil), 4, def, "40 rows but Y has 39"},
		{"one row", mat.NewDense(1, 3, []float64{1, 2, 3}), nil, 1, def, "at least 2"},
		{"bits zero", all.X, all.Y, 0, def, "bits must be >= 1"},
		{"bits above rank", all.X, all.Y, 40, def, "exceeds the 39 principal directions"},
		{"constant X", mat.NewDense(10, 3, nil), nil, 1, def, "no variance"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mglp.Train(tc.X, tc.Y, tc.bits, tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	m, err := mglp.Train(all.X, all.Y, 4, def)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.EncodeAll(mat.NewDense(2, 3, nil)); err == nil {
		t.Error("EncodeAll with the wrong width: no error")
	}
	defer func() {
		if recover() == nil {
			t.Error("Encode with the wrong length did not panic")
		}
	}()
	m.Encode(make([]float64, 3), nil)
}
