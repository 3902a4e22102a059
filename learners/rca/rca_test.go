package rca_test

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
	_ "github.com/bowline/bowline/learners/euclidean"
	"github.com/bowline/bowline/learners/internal/densetest"
	"github.com/bowline/bowline/learners/rca"
)

// mustNew makes the registered model and checks its type.
func mustNew(t *testing.T, dims []int, params map[string]float64) *rca.Model {
	t.Helper()
	b := densetest.NewDense(t, "rca", dims, params)
	m, ok := b.(*rca.Model)
	if !ok {
		t.Fatalf("NewDense(rca) is a %T, want *rca.Model", b)
	}
	return m
}

// toy is the hand-worked example of TestCovarianceByHand: two chunklets in
// 2-D, a singleton and an image without a label. The tag rows exercise the
// arg-max: row 1 ties columns 0 and 1 (the first wins), row 4 has graded
// tags whose largest is column 1.
func toy() (X, Y *mat.Dense) {
	X = mat.NewDense(7, 2, []float64{
		0, 0, // chunklet 0
		2, 2, // chunklet 0
		4, 0, // chunklet 1
		4, 2, // chunklet 1
		7, 1, // chunklet 1
		9, 9, // label 2, alone: no chunklet
		-3, 8, // no label
	})
	Y = mat.NewDense(7, 3, []float64{
		1, 0, 0,
		1, 1, 0,
		0, 1, 0,
		0, 1, 0,
		0.5, 1, 0.25,
		0, 0, 1,
		0, 0, 0,
	})
	return X, Y
}

// maxDiff returns the largest |A_ij − want_ij|.
func maxDiff(A mat.Matrix, want []float64) float64 {
	r, c := A.Dims()
	var m float64
	for i := range r {
		for j := range c {
			m = max(m, math.Abs(A.At(i, j)-want[i*c+j]))
		}
	}
	return m
}

// TestCovarianceByHand checks Ĉ, W and the embedding's distances against
// the within-chunklet covariance and its inverse worked out by hand.
func TestCovarianceByHand(t *testing.T) {
	X, Y := toy()
	// Chunklet 0: (0, 0), (2, 2), mean (1, 1), deviations ±(1, 1):
	//   Σ = 2·[[1, 1], [1, 1]] = [[2, 2], [2, 2]].
	// Chunklet 1: (4, 0), (4, 2), (7, 1), mean (5, 1), deviations (−1, −1),
	// (−1, 1), (2, 0):
	//   Σ = [[1, 1], [1, 1]] + [[1, −1], [−1, 1]] + [[4, 0], [0, 0]] = [[6, 0], [0, 2]].
	// p = 5: Ĉ = [[8, 2], [2, 4]] / 5 = [[1.6, 0.4], [0.4, 0.8]].
	// det Ĉ = 1.28 − 0.16 = 1.12, Ĉ⁻¹ = [[0.8, −0.4], [−0.4, 1.6]] / 1.12
	//       = [[5/7, −5/14], [−5/14, 10/7]].
	wantC := []float64{1.6, 0.4, 0.4, 0.8}
	wantInv := []float64{5.0 / 7, -5.0 / 14, -5.0 / 14, 10.0 / 7}
	m := mustNew(t, []int{1, 1}, map[string]float64{"epsilon": 0})
	if err := m.Fit(X, Y); err != nil {
		t.Fatal(err)
	}
	if k, p := m.Chunklets(); k != 2 || p != 5 {
		t.Errorf("Chunklets() = %d, %d; want 2 chunklets of 5 images", k, p)
	}
	if m.Ridge() != 0 {
		t.Errorf("Ridge() = %v with epsilon 0", m.Ridge())
	}
	C, W := m.Covariance(), m.Whitening()
	if e := maxDiff(C, wantC); e > 1e-15 {
		t.Errorf("Ĉ = %v, want %v", mat.Formatted(C), wantC)
	}
	var WCW, WW mat.Dense
	WCW.Product(W, C, W)
	if e := maxDiff(&WCW, []float64{1, 0, 0, 1}); e > 1e-14 {
		t.Errorf("W Ĉ W = %v, want I", mat.Formatted(&WCW))
	}
	WW.Mul(W, W)
	if e := maxDiff(&WW, wantInv); e > 1e-14 {
		t.Errorf("W² = %v, want Ĉ⁻¹ = %v", mat.Formatted(&WW), wantInv)
	}
	// ‖W a − W b‖² = (a − b)ᵀĈ⁻¹(a − b) for the pairs of the toy's rows.
	for i := range 7 {
		for j := range 7 {
			a, b := X.RawRowView(i), X.RawRowView(j)
			ea, eb := m.Item(nil, a), m.Query(nil, b)
			got := (ea[0]-eb[0])*(ea[0]-eb[0]) + (ea[1]-eb[1])*(ea[1]-eb[1])
			z0, z1 := a[0]-b[0], a[1]-b[1]
			want := wantInv[0]*z0*z0 + 2*wantInv[1]*z0*z1 + wantInv[3]*z1*z1
			if math.Abs(got-want) > 1e-13*(1+want) {
				t.Errorf("rows %d, %d: ‖Wa − Wb‖² = %v, want (a − b)ᵀĈ⁻¹(a − b) = %v", i, j, got, want)
			}
		}
	}

	// With the default ridge: Ĉ is unchanged, ρ = 10⁻³·tr(Ĉ)/2 = 1.2·10⁻³,
	// and W whitens Ĉ + ρI.
	m = mustNew(t, []int{2}, nil)
	if err := m.Fit(X, Y); err != nil {
		t.Fatal(err)
	}
	if e := maxDiff(m.Covariance(), wantC); e > 1e-15 {
		t.Errorf("Ĉ with a ridge = %v, want %v", mat.Formatted(m.Covariance()), wantC)
	}
	if math.Abs(m.Ridge()-1.2e-3) > 1e-18 {
		t.Errorf("Ridge() = %v, want 1.2e-3", m.Ridge())
	}
	Cr := mat.NewSymDense(2, []float64{1.6 + 1.2e-3, 0.4, 0.4, 0.8 + 1.2e-3})
	WCW.Product(m.Whitening(), Cr, m.Whitening())
	if e := maxDiff(&WCW, []float64{1, 0, 0, 1}); e > 1e-14 {
		t.Errorf("W (Ĉ + ρI) W = %v, want I", mat.Formatted(&WCW))
	}
}

// TestSingular checks a Ĉ of rank p − k < d: without a ridge Fit fails,
// with the default one it whitens Ĉ + ρI and embeds finitely.
func TestSingular(t *testing.T) {
	// Two chunklets of two images in 5-D: Ĉ has rank 2.
	X := mat.NewDense(4, 5, []float64{
		1, 0, 0, 0, 0,
		0, 1, 0, 0, 0,
		0, 0, 1, 0, 0,
		0, 0, 2, 1, 1,
	})
	Y := mat.NewDense(4, 2, []float64{1, 0, 1, 0, 0, 1, 0, 1})
	m := mustNew(t, []int{5}, map[string]float64{"epsilon": 0})
	if err := m.Fit(X, Y); err == nil || !strings.Contains(err.Error(), "singular") {
		t.Errorf("Fit of a singular Ĉ without a ridge: %v", err)
	} else {
		t.Log(err)
	}
	if m.Whitening() != nil {
		t.Error("a failed Fit left a model")
	}
	m = mustNew(t, []int{5}, nil)
	if err := m.Fit(X, Y); err != nil {
		t.Fatal(err)
	}
	Cr := m.Covariance()
	for i := range 5 {
		Cr.SetSym(i, i, Cr.At(i, i)+m.Ridge())
	}
	var WCW mat.Dense
	WCW.Product(m.Whitening(), Cr, m.Whitening())
	if !mat.EqualApprox(&WCW, mat.NewDiagDense(5, []float64{1, 1, 1, 1, 1}), 1e-9) {
		t.Errorf("W (Ĉ + ρI) W = %v, want I", mat.Formatted(&WCW))
	}
	for _, v := range m.Item(nil, []float64{1, 2, 3, 4, 5}) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatal("embedding is not finite")
		}
	}
}

// TestRanking checks that RCA beats the Euclidean baseline by far where
// the classes sit in a few low-variance dimensions under high-variance
// within-class noise (it whitens the noise away), by mean average
// precision and by nearest-neighbour label accuracy, and stays well above
// chance where the plain features already separate the classes.
func TestRanking(t *testing.T) {
	const k = 6
	chance := 1.0 / k
	db, q := densetest.Split(2, k, 6, 0.3, 30, 3, 300, 80)
	dims := []int{6, 30}
	base := densetest.NewDense(t, "euclidean", dims, nil)
	if err := base.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	m := mustNew(t, dims, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	baseAP, got := densetest.MeanAP(t, base, db, q, nil), densetest.MeanAP(t, m, db, q, nil)
	baseNN, gotNN := nnAccuracy(base, db, q), nnAccuracy(m, db, q)
	t.Logf("signal under noise: euclidean mAP %.3f, 1-NN %.3f; rca mAP %.3f, 1-NN %.3f (chance ≈ %.3f)", baseAP, baseNN, got, gotNN, chance)
	if got < baseAP+0.3 {
		t.Errorf("rca mAP %.3f does not beat the euclidean baseline %.3f by 0.3", got, baseAP)
	}
	if gotNN < baseNN+0.3 {
		t.Errorf("rca 1-NN accuracy %.3f does not beat the euclidean baseline %.3f by 0.3", gotNN, baseNN)
	}

	db, q = densetest.Split(1, k, 20, 1, 0, 0, 300, 80)
	m = mustNew(t, []int{20}, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	got = densetest.MeanAP(t, m, db, q, nil)
	t.Logf("separated classes: rca mAP %.3f", got)
	if got < 2.5*chance {
		t.Errorf("rca mAP %.3f is not well above chance %.3f", got, chance)
	}
}

// nnAccuracy returns the share of queries whose nearest database image
// under m's embedding (squared Euclidean distance) has the query's label,
// the label being the arg-max of the one-hot Y.
func nnAccuracy(m learners.DenseModel, db, q densetest.Labelled) float64 {
	label := func(Y *mat.Dense, i int) int {
		row := Y.RawRowView(i)
		return slices.Index(row, slices.Max(row))
	}
	n, _ := db.X.Dims()
	nq, _ := q.X.Dims()
	items := make([][]float64, n)
	for i := range n {
		items[i] = m.Item(nil, db.X.RawRowView(i))
	}
	hits := 0
	for qi := range nq {
		e := m.Query(nil, q.X.RawRowView(qi))
		best, arg := math.Inf(1), -1
		for i, it := range items {
			var s float64
			for j := range e {
				s += (e[j] - it[j]) * (e[j] - it[j])
			}
			if s < best {
				best, arg = s, i
			}
		}
		if label(db.Y, arg) == label(q.Y, qi) {
			hits++
		}
	}
	return float64(hits) / float64(nq)
}

// TestFitErrors checks that Fit rejects data it cannot learn from, and
// that a failed Fit keeps the previous model; and that Item panics before
// Fit and on a wrong length.
func TestFitErrors(t *testing.T) {
	db, q := densetest.Split(4, 3, 8, 0.3, 8, 1, 60, 5)
	dims := []int{8, 8}
	x := q.X.RawRowView(0)
	m := mustNew(t, dims, nil)
	densetest.MustPanic(t, "Item before Fit", "before Fit", func() { m.Item(nil, x) })
	if err := m.SetState(m.State()); err == nil {
		t.Error("SetState of an untrained model's state did not fail")
	}
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	before, item := m.State(), m.Item(nil, x)

	nanX := mat.DenseCopyOf(db.X)
	nanX.Set(3, 4, math.NaN())
	nanY := mat.DenseCopyOf(db.Y)
	nanY.Set(2, 1, math.Inf(1))
	distinct := mat.NewDense(60, 60, nil) // every image its own label
	for i := range 60 {
		distinct.Set(i, i, 1)
	}
	same := mat.NewDense(60, 16, nil) // identical images in each chunklet
	for i := range 60 {
		same.Set(i, 0, db.Y.At(i, 0))
	}
	for _, tc := range []struct {
		name string
		X, Y *mat.Dense
		want string
	}{
		{"nil X", nil, db.Y, "no training data"},
		{"wide X", mat.NewDense(60, 17, nil), db.Y, "17 columns, want 16"},
		{"NaN in X", nanX, db.Y, "X[3,4] = NaN"},
		{"nil Y", db.X, nil, "no labels"},
		{"short Y", db.X, mat.NewDense(59, 3, nil), "X has 60 rows but Y has 59"},
		{"Inf in Y", db.X, nanY, "Y[2,1] = +Inf"},
		{"no labels", db.X, mat.NewDense(60, 3, nil), "no two of the 60 images share a label"},
		{"distinct labels", db.X, distinct, "no two of the 60 images share a label"},
		{"one image", db.X.Slice(0, 1, 0, 16).(*mat.Dense), db.Y.Slice(0, 1, 0, 3).(*mat.Dense), "no two of the 1 images"},
		{"no variation", same, db.Y, "do not vary within their chunklets"},
	} {
		if err := m.Fit(tc.X, tc.Y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Fit with %s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if !densetest.StatesEqual(m.State(), before) || !densetest.BitsEqual(m.Item(nil, x), item) {
		t.Error("a failed Fit changed the model")
	}
	densetest.MustPanic(t, "Item of a short vector", "want 16", func() { m.Item(nil, x[:15]) })
}

// TestState checks State's layout, that a restored model embeds bit for
// bit like the fitted one and shares no memory with the state, that Fit is
// deterministic, and that invalid states are rejected without changing the
// model.
func TestState(t *testing.T) {
	db, q := densetest.Split(3, 4, 5, 0.3, 5, 1, 120, 30)
	dims := []int{5, 5}
	m := mustNew(t, dims, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	st := m.State()
	if st.Learner != "rca" || st.Steps != 120 || len(st.Vectors) != 1 || !slices.Equal(st.Vectors[0], m.Whitening().RawSymmetric().Data) {
		t.Fatalf("state %+v does not hold W row-major and 120 steps", st)
	}
	fresh := mustNew(t, dims, nil)
	if err := fresh.SetState(st); err != nil {
		t.Fatal(err)
	}
	st.Vectors[0][0] += 1 // the model must not share the state's memory
	if fresh.Covariance() != nil || fresh.Ridge() != 0 {
		t.Error("a restored model reports what only Fit knows")
	}
	if !densetest.StatesEqual(fresh.State(), m.State()) {
		t.Error("restored state differs")
	}
	for i := range 30 {
		x := q.X.RawRowView(i)
		if !densetest.BitsEqual(fresh.Item(nil, x), m.Item(nil, x)) {
			t.Fatal("restored Item differs")
		}
	}
	again := mustNew(t, dims, nil)
	if err := again.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	if !densetest.StatesEqual(again.State(), m.State()) {
		t.Error("two fits differ")
	}
	x := q.X.RawRowView(0)
	want := m.Item(nil, x)
	big := make([]float64, 20)
	if got := m.Item(big, x); &got[0] != &big[0] || !densetest.BitsEqual(got, want) {
		t.Error("Item did not use a large enough dst")
	}
	if got := m.Query(make([]float64, 1), x); !densetest.BitsEqual(got, want) {
		t.Error("Query into a short dst differs from Item")
	}

	before := m.State()
	v := before.Vectors[0]
	asym := slices.Clone(v)
	asym[1] = asym[10] + 1 // W[0,1] ≠ W[1,0]
	nanV := slices.Clone(v)
	nanV[7] = math.NaN()
	for i, bad := range []learners.State{
		{Learner: "lego", Vectors: before.Vectors},
		{Learner: "rca", Steps: -1, Vectors: before.Vectors},
		{Learner: "rca"},
		{Learner: "rca", Vectors: [][]float64{v, v}},
		{Learner: "rca", Vectors: [][]float64{v[:99]}},
		{Learner: "rca", Vectors: [][]float64{nanV}},
		{Learner: "rca", Vectors: [][]float64{asym}},
	} {
		if err := m.SetState(bad); err == nil {
			t.Errorf("bad state %d accepted", i)
		} else {
			t.Logf("bad state %d: %v", i, err)
		}
	}
	if !densetest.StatesEqual(m.State(), before) || m.Covariance() == nil {
		t.Error("a failed SetState changed the model")
	}
}

// TestRegistry checks the registered factory: the type, name, metric,
// dimensions and parameters, and the rejection of unknown names and values
// out of range.
func TestRegistry(t *testing.T) {
	dims := []int{3, 4}
	m := mustNew(t, dims, nil)
	if m.Name() != "rca" || m.Metric() != learners.Euclidean || !slices.Equal(m.Dims(), dims) {
		t.Errorf("Name %q, Metric %v, Dims %v", m.Name(), m.Metric(), m.Dims())
	}
	if p := m.Params(); !maps.Equal(p, map[string]float64{"epsilon": rca.DefaultParams().Epsilon}) {
		t.Errorf("default Params %v", p)
	}
	set := map[string]float64{"epsilon": 0}
	if p := mustNew(t, dims, set).Params(); !maps.Equal(p, set) {
		t.Errorf("Params %v, want %v", p, set)
	}
	if p := mustNew(t, dims, m.Params()).Params(); !maps.Equal(p, m.Params()) {
		t.Errorf("NewDense with Params() gave %v", p)
	}
	for _, tc := range []struct {
		dims   []int
		params map[string]float64
		want   string
	}{
		{dims, map[string]float64{"eps": 1}, `rca: unknown parameter "eps" (want epsilon)`},
		{dims, map[string]float64{"epsilon": -1}, "epsilon must be finite and >= 0"},
		{dims, map[string]float64{"epsilon": math.NaN()}, "epsilon must be finite and >= 0"},
		{[]int{1 << 15, 1}, nil, "exceeds 32768"},
	} {
		m, err := learners.NewDense("rca", tc.dims, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) || m != nil {
			t.Errorf("NewDense(rca, %v) = %v, %v; want a nil model and an error containing %q", tc.params, m, err, tc.want)
		}
	}
	if _, err := rca.New(nil, rca.DefaultParams()); err == nil {
		t.Error("New without modalities did not fail")
	}
	if _, err := rca.New([]int{2, 0}, rca.DefaultParams()); err == nil {
		t.Error("New with a zero dimension did not fail")
	}
}

// TestConcurrentItem has several goroutines embed at once after Fit (the
// race detector checks that Item only reads): each must get the
// sequential result.
func TestConcurrentItem(t *testing.T) {
	db, q := densetest.Split(5, 3, 4, 0.5, 3, 1, 60, 8)
	m := mustNew(t, []int{7}, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	xs, want := make([][]float64, 8), make([][]float64, 8)
	for k := range want {
		xs[k] = q.X.RawRowView(k)
		want[k] = m.Item(nil, xs[k])
	}
	// Fit invalidates nothing after the first embedding, so embed with a
	// second, identically fitted model whose embedding is not computed yet.
	par := mustNew(t, []int{7}, nil)
	if err := par.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	densetest.ConcurrentEmbeddings(t, par, xs, want)
}
