package lego_test

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/internal/densetest"
	"github.com/bowline/bowline/learners/lego"
)

// mustNew makes the registered learner and checks its type.
func mustNew(t testing.TB, dims []int, params map[string]float64) *lego.LEGO {
	t.Helper()
	m, err := learners.NewDense("lego", dims, params)
	if err != nil {
		t.Fatalf("NewDense(lego, %v, %v): %v", dims, params, err)
	}
	l, ok := m.(*lego.LEGO)
	if !ok {
		t.Fatalf("NewDense(lego) is a %T, want *lego.LEGO", m)
	}
	return l
}

// checkMatrix fails t unless A equals want (row-major) within tol.
func checkMatrix(t *testing.T, what string, A *mat.SymDense, want []float64, tol float64) {
	t.Helper()
	d := A.SymmetricDim()
	for i := range d {
		for j := range d {
			if got := A.At(i, j); math.Abs(got-want[i*d+j]) > tol {
				t.Errorf("%s: A[%d,%d] = %v, want %v", what, i, j, got, want[i*d+j])
			}
		}
	}
}

// TestUpdatePairByHand checks one step of the paper's pair update against
// the closed form worked out by hand.
func TestUpdatePairByHand(t *testing.T) {
	l := mustNew(t, []int{2}, map[string]float64{"eta": 0.5})
	u, v := []float64{1, 2}, []float64{0, 1}
	// A = I, z = u − v = (1, 1), ŷ = zᵀz = 2, η = 0.5, y = 0:
	//   η y ŷ − 1 = −1,  ȳ = (−1 + √(1 + 4·0.5·2²)) / (2·0.5·2) = (−1 + 3)/2 = 1,
	//   η(ȳ − y) = 0.5,  1 + η(ȳ − y)ŷ = 2,  A z zᵀ A = [[1, 1], [1, 1]],
	//   A ← I − (0.5/2)·[[1, 1], [1, 1]] = [[0.75, −0.25], [−0.25, 0.75]].
	yhat, err := l.UpdatePair(u, v, 0)
	if err != nil {
		t.Fatal(err)
	}
	if yhat != 2 {
		t.Errorf("UpdatePair returned ŷ = %v, want 2", yhat)
	}
	checkMatrix(t, "after the pair step", l.Matrix(), []float64{0.75, -0.25, -0.25, 0.75}, 1e-15)
	if got := l.Distance(u, v); math.Abs(got-1) > 1e-15 {
		t.Errorf("d_A(u, v) after the step = %v, want ȳ = 1", got)
	}
	if l.Steps() != 1 {
		t.Errorf("Steps = %d, want 1", l.Steps())
	}
}

// TestUpdateTripletByHand checks one triplet Update, two LEGO steps toward
// the fixed targets, against the closed form worked out by hand. The
// second step runs on the matrix the first one left.
func TestUpdateTripletByHand(t *testing.T) {
	l := mustNew(t, []int{1, 1}, map[string]float64{"eta": 0.5, "target": 1.5, "margin": 5.5})
	x, pos, neg := []float64{0, 0}, []float64{2, 0}, []float64{1, 1}
	// A = I: z⁺ = x − pos = (−2, 0), d⁺ = 4; z⁻ = x − neg = (−1, −1), d⁻ = 2.
	// ℓ = max(0, 5.5 + 4 − 2) = 7.5 > 0; d⁺ = 4 > u = 1.5 and
	// d⁻ = 2 < u + γ = 7, so both pairs step.
	// Step 1, on (x, pos): ŷ = 4, y = 1.5, η = 0.5:
	//   η y ŷ − 1 = 2,  4ηŷ² = 32,  ȳ = (2 + √(4 + 32)) / (2·0.5·4) = 8/4 = 2,
	//   η(ȳ − y) = 0.25,  1 + η(ȳ − y)ŷ = 2,  A z⁺ z⁺ᵀ A = [[4, 0], [0, 0]],
	//   A' = I − (0.25/2)·[[4, 0], [0, 0]] = [[0.5, 0], [0, 1]].
	// Step 2, on (x, neg) under A': A'z⁻ = (−0.5, −1), ŷ = 1.5, y = 7:
	//   η y ŷ − 1 = 4.25,  4ηŷ² = 4.5,
	//   ȳ = (4.25 + √(18.0625 + 4.5)) / (2·0.5·1.5) = (4.25 + 4.75)/1.5 = 6,
	//   η(ȳ − y) = −0.5,  1 + η(ȳ − y)ŷ = 0.25,
	//   A'' = A' + 2·(A'z⁻)(A'z⁻)ᵀ = A' + 2·[[0.25, 0.5], [0.5, 1]] = [[1, 1], [1, 3]].
	loss, err := l.Update(x, pos, neg)
	if err != nil {
		t.Fatal(err)
	}
	if loss != 7.5 {
		t.Errorf("Update returned loss %v, want 7.5", loss)
	}
	checkMatrix(t, "after the triplet", l.Matrix(), []float64{1, 1, 1, 3}, 1e-14)
	if got := l.Distance(x, neg); math.Abs(got-6) > 1e-14 {
		t.Errorf("d_A(x, neg) = %v, want ȳ = 6", got)
	}
	// Under A'' d⁺ = 4 and d⁻ = 6: the hinge fell from 7.5 to 3.5.
	loss, err = l.Update(x, pos, neg)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(loss-3.5) > 1e-13 {
		t.Errorf("second Update returned loss %v, want 3.5", loss)
	}
	if l.Steps() != 2 {
		t.Errorf("Steps = %d, want 2", l.Steps())
	}
}

// TestOneSidedSteps checks that a violated triplet moves only the pair on
// the wrong side of its target: the result must be the single pair step
// of UpdatePair.
func TestOneSidedSteps(t *testing.T) {
	params := map[string]float64{"eta": 0.2, "target": 1, "margin": 4}
	x := []float64{0.3, -0.2, 0.1}
	for _, tc := range []struct {
		name     string
		pos, neg []float64
		pair     []float64 // the pair UpdatePair steps on with x
		y        float64
	}{
		// d⁺ = 0.25 ≤ u = 1, d⁻ = 1 < u + γ = 5: only the negative pair.
		{"negative only", []float64{0.3, 0.3, 0.1}, []float64{1.3, -0.2, 0.1}, []float64{1.3, -0.2, 0.1}, 5},
		// d⁺ = 9 > 1, d⁻ = 6.25 ≥ 5 (ℓ = 6.75): only the positive pair.
		{"positive only", []float64{3.3, -0.2, 0.1}, []float64{0.3, 2.3, 0.1}, []float64{3.3, -0.2, 0.1}, 1},
	} {
		l, ref := mustNew(t, []int{3}, params), mustNew(t, []int{3}, params)
		if loss, err := l.Update(x, tc.pos, tc.neg); err != nil || !(loss > 0) {
			t.Fatalf("%s: Update = %v, %v; want a positive loss", tc.name, loss, err)
		}
		if _, err := ref.UpdatePair(x, tc.pair, tc.y); err != nil {
			t.Fatal(err)
		}
		want := ref.Matrix().RawSymmetric().Data
		checkMatrix(t, tc.name, l.Matrix(), want, 1e-15)
		if mat.Equal(l.Matrix(), mat.NewDiagDense(3, []float64{1, 1, 1})) {
			t.Errorf("%s: A did not change", tc.name)
		}
	}
}

// TestSatisfiedTriplet checks that a triplet ranked right with the margin
// has zero loss and leaves A alone but counts as a step, even when its
// pairs are on the wrong side of their targets.
func TestSatisfiedTriplet(t *testing.T) {
	l := mustNew(t, []int{2}, map[string]float64{"target": 1, "margin": 1})
	loss, err := l.Update([]float64{0, 0}, []float64{2, 0}, []float64{3, 0}) // d⁺ = 4 > u, d⁻ = 9
	if err != nil || loss != 0 {
		t.Fatalf("Update = %v, %v; want 0, nil", loss, err)
	}
	checkMatrix(t, "after a satisfied triplet", l.Matrix(), []float64{1, 0, 0, 1}, 0)
	if l.Steps() != 1 {
		t.Errorf("Steps = %d, want 1", l.Steps())
	}
}

// checkSPD fails t unless A is exactly symmetric with smallest eigenvalue
// > 0.
func checkSPD(t *testing.T, what string, A *mat.SymDense) {
	t.Helper()
	var eig mat.EigenSym
	if !eig.Factorize(A, false) {
		t.Fatalf("%s: eigendecomposition failed", what)
	}
	if lo := slices.Min(eig.Values(nil)); !(lo > 0) {
		t.Fatalf("%s: smallest eigenvalue %v", what, lo)
	}
	var c mat.Cholesky
	if !c.Factorize(A) {
		t.Fatalf("%s: Cholesky fails", what)
	}
}

// TestStaysPositiveDefinite runs many random triplet and pair updates, with
// an aggressive η, distances spanning orders of magnitude, targets far
// apart and pair targets of 0, and checks that A stays exactly symmetric
// and positive definite, and that SetState accepts its state. The triplets
// are random, so no metric satisfies them: the case where relative targets
// made A blow up (package doc, "Triplets").
func TestStaysPositiveDefinite(t *testing.T) {
	const d = 6
	r := rand.New(rand.NewPCG(1, 2))
	l := mustNew(t, []int{2, 4}, map[string]float64{"eta": 1, "target": 0.01, "margin": 100})
	rnd := func() []float64 {
		s := math.Pow(10, 2*r.Float64()-1) // scale in [0.1, 10)
		v := make([]float64, d)
		for j := range v {
			v[j] = s * r.NormFloat64()
		}
		return v
	}
	updates := 0
	for k := range 3000 {
		if k%5 == 4 {
			y := 0.0
			if r.IntN(2) == 0 {
				y = 100 * r.Float64()
			}
			if _, err := l.UpdatePair(rnd(), rnd(), y); err != nil {
				t.Fatal(err)
			}
		} else {
			loss, err := l.Update(rnd(), rnd(), rnd())
			if err != nil {
				t.Fatal(err)
			}
			if loss > 0 {
				updates++
			}
		}
		if k%250 == 249 {
			st := l.State()
			a := st.Vectors[0]
			for i := range d {
				for j := range d {
					if a[i*d+j] != a[j*d+i] {
						t.Fatalf("after %d steps A is not exactly symmetric at (%d, %d)", k+1, i, j)
					}
				}
			}
			checkSPD(t, "A after random updates", l.Matrix())
			if err := mustNew(t, []int{2, 4}, nil).SetState(st); err != nil {
				t.Fatalf("after %d steps SetState of the learner's own state: %v", k+1, err)
			}
		}
	}
	if updates < 1000 {
		t.Errorf("only %d triplets updated A; the test does not exercise the step", updates)
	}
}

// noisyTriplets draws n triplets over two coordinates: the first carries the
// class (±1 plus noise of sd 0.3), the second is noise of sd 3 whatever the
// class. x and pos share a class, neg has the other.
func noisyTriplets(seed uint64, n int) [][3][]float64 {
	r := rand.New(rand.NewPCG(seed, 3))
	point := func(c float64) []float64 { return []float64{c + 0.3*r.NormFloat64(), 3 * r.NormFloat64()} }
	ts := make([][3][]float64, n)
	for k := range ts {
		c := float64(2*r.IntN(2) - 1)
		ts[k] = [3][]float64{point(c), point(c), point(-c)}
	}
	return ts
}

// accuracy returns the share of triplets with dist(x, pos) < dist(x, neg).
func accuracy(ts [][3][]float64, dist func(a, b []float64) float64) float64 {
	ok := 0
	for _, tr := range ts {
		if dist(tr[0], tr[1]) < dist(tr[0], tr[2]) {
			ok++
		}
	}
	return float64(ok) / float64(len(ts))
}

// TestLearnsInformativeCoordinate trains on triplets where one coordinate
// carries the class and the other is noise of larger spread, and checks
// that the learnt metric ranks held-out triplets far better than the
// identity, that it weighs the informative coordinate more, and that the
// mean loss falls.
func TestLearnsInformativeCoordinate(t *testing.T) {
	l := mustNew(t, []int{1, 1}, nil)
	train, test := noisyTriplets(1, 3000), noisyTriplets(2, 3000)
	var early, late float64
	for k, tr := range train {
		loss, err := l.Update(tr[0], tr[1], tr[2])
		if err != nil {
			t.Fatal(err)
		}
		if k < 300 {
			early += loss / 300
		} else if k >= len(train)-300 {
			late += loss / 300
		}
	}
	euclid := func(a, b []float64) float64 { return (a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) }
	base, got := accuracy(test, euclid), accuracy(test, l.Distance)
	A := l.Matrix()
	t.Logf("triplet accuracy: identity %.3f, lego %.3f; A = %v; mean loss %.3f → %.3f", base, got, mat.Formatted(A), early, late)
	if got < base+0.2 || got < 0.9 {
		t.Errorf("lego triplet accuracy %.3f, identity %.3f: want ≥ 0.9 and 0.2 above the identity", got, base)
	}
	if A.At(0, 0) < 10*A.At(1, 1) {
		t.Errorf("A = %v does not weigh the informative coordinate 0 ten times more than the noise", mat.Formatted(A))
	}
	if late > 0.5*early {
		t.Errorf("mean loss went from %.3f to %.3f, want it at least halved", early, late)
	}
}

// TestUpdateErrors checks that Update and UpdatePair reject wrong lengths,
// non-finite values, negative targets and overflow, and change nothing.
func TestUpdateErrors(t *testing.T) {
	l := mustNew(t, []int{2, 1}, nil)
	for _, tr := range noisyTriplets(4, 20) {
		x := append(slices.Clone(tr[0]), 1)
		if _, err := l.Update(x, append(slices.Clone(tr[1]), 0), append(slices.Clone(tr[2]), 2)); err != nil {
			t.Fatal(err)
		}
	}
	before := l.State()
	item := l.Item(nil, []float64{1, 2, 3})
	ok := []float64{1, 2, 3}
	nan, inf := []float64{1, math.NaN(), 3}, []float64{math.Inf(-1), 2, 3}
	huge := []float64{1e200, 0, 0}
	for _, tc := range []struct {
		x, pos, neg []float64
		want        string
	}{
		{ok[:2], ok, ok, "len(x) = 2, want 3"},
		{ok, append(slices.Clone(ok), 4), ok, "len(pos) = 4, want 3"},
		{ok, ok, nil, "len(neg) = 0, want 3"},
		{nan, ok, ok, "x[1] is NaN"},
		{ok, inf, ok, "pos[0] is -Inf"},
		{ok, ok, nan, "neg[1] is NaN"},
		{huge, ok, ok, "overflows"},
	} {
		if _, err := l.Update(tc.x, tc.pos, tc.neg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Update(%v, %v, %v) error %v, want one containing %q", tc.x, tc.pos, tc.neg, err, tc.want)
		}
	}
	for _, tc := range []struct {
		u, v []float64
		y    float64
		want string
	}{
		{ok, ok[:1], 1, "len(v) = 1, want 3"},
		{nan, ok, 1, "u[1] is NaN"},
		{ok, ok, -1, "target distance -1"},
		{ok, ok, math.NaN(), "target distance NaN"},
		{huge, ok, 1, "overflows"},
	} {
		if _, err := l.UpdatePair(tc.u, tc.v, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("UpdatePair(%v, %v, %v) error %v, want one containing %q", tc.u, tc.v, tc.y, err, tc.want)
		}
	}
	if !densetest.StatesEqual(l.State(), before) || !densetest.BitsEqual(l.Item(nil, []float64{1, 2, 3}), item) {
		t.Error("a failed Update or UpdatePair changed the model")
	}
	densetest.MustPanic(t, "Item of a short vector", "want 3", func() { l.Item(nil, ok[:2]) })
	densetest.MustPanic(t, "Distance of a short vector", "want 3", func() { l.Distance(ok, ok[:2]) })
}

// TestRegistry checks the registered factory: the type, name, metric and
// dimensions, the default and the set parameters, and the rejection of
// unknown names and values out of range.
func TestRegistry(t *testing.T) {
	dims := []int{3, 4}
	m, err := learners.NewDense("lego", dims, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(learners.DenseOnline); !ok {
		t.Fatalf("a %T is not a learners.DenseOnline", m)
	}
	if m.Name() != "lego" || m.Metric() != learners.Euclidean || !slices.Equal(m.Dims(), dims) {
		t.Errorf("Name %q, Metric %v, Dims %v", m.Name(), m.Metric(), m.Dims())
	}
	d := lego.DefaultParams()
	if p := m.Params(); !maps.Equal(p, map[string]float64{"eta": d.Eta, "target": d.Target, "margin": d.Margin}) {
		t.Errorf("default Params %v", p)
	}
	set := map[string]float64{"eta": 0.3, "target": 2, "margin": 0.5}
	if p := mustNew(t, dims, set).Params(); !maps.Equal(p, set) {
		t.Errorf("Params %v, want what was set, %v", p, set)
	}
	// Params() is what a model file records; it must make the same learner.
	if p := mustNew(t, dims, m.Params()).Params(); !maps.Equal(p, m.Params()) {
		t.Errorf("NewDense with Params() gave %v", p)
	}
	for _, tc := range []struct {
		dims   []int
		params map[string]float64
		want   string
	}{
		{dims, map[string]float64{"c": 1}, `lego: unknown parameter "c" (want eta, margin, target)`},
		{dims, map[string]float64{"Eta": 1, "gamma": 1}, `unknown parameter "Eta", "gamma"`},
		{dims, map[string]float64{"eta": 0}, "eta must be finite and > 0"},
		{dims, map[string]float64{"eta": math.Inf(1)}, "eta must be finite and > 0"},
		{dims, map[string]float64{"margin": 0}, "margin must be finite and > 0"},
		{dims, map[string]float64{"margin": math.NaN()}, "margin must be finite and > 0"},
		{dims, map[string]float64{"target": 0}, "target distance must be finite and > 0"},
		{dims, map[string]float64{"target": -1, "eta": -1}, "eta must be finite and > 0"},
		{dims, map[string]float64{"target": math.MaxFloat64, "margin": math.MaxFloat64}, "target + margin overflows"},
		{[]int{1 << 14, 1 << 14, 1}, nil, "exceeds 32768"},
	} {
		m, err := learners.NewDense("lego", tc.dims, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) || m != nil {
			t.Errorf("NewDense(lego, %v) = %v, %v; want a nil model and an error containing %q", tc.params, m, err, tc.want)
		}
	}
	if _, err := lego.New(nil, d); err == nil {
		t.Error("New without modalities did not fail")
	}
	if _, err := lego.New([]int{2, 0}, d); err == nil {
		t.Error("New with a zero dimension did not fail")
	}
}

// trainRandom runs n random 3-class triplets through l.
func trainRandom(t testing.TB, l *lego.LEGO, seed uint64, n int) {
	t.Helper()
	db, _ := densetest.Split(seed, 3, l.Dim(), 0.5, 0, 0, n+2, 1)
	for k := range n {
		x, p, q := db.X.RawRowView(k), db.X.RawRowView(k+1), db.X.RawRowView(k+2)
		if _, err := l.Update(x, p, q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestItem checks that the embedding's squared distances are the learnt
// distance, that Item is the identity before training, that Query is Item,
// and how dst is used.
func TestItem(t *testing.T) {
	dims := []int{3, 5}
	l := mustNew(t, dims, nil)
	_, q := densetest.Split(5, 3, 8, 1, 0, 0, 1, 20)
	x := q.X.RawRowView(0)
	if got := l.Item(nil, x); !densetest.BitsEqual(got, x) {
		t.Errorf("Item before training = %v, want x = %v (A = I)", got, x)
	}
	trainRandom(t, l, 6, 200)
	checkSPD(t, "A", l.Matrix())
	if l.Steps() != 200 {
		t.Errorf("Steps = %d, want 200", l.Steps())
	}
	for i := range 19 {
		a, b := q.X.RawRowView(i), q.X.RawRowView(i+1)
		ea, eb := l.Item(nil, a), l.Query(nil, b)
		var d2 float64
		for j := range ea {
			d2 += (ea[j] - eb[j]) * (ea[j] - eb[j])
		}
		if want := l.Distance(a, b); math.Abs(d2-want) > 1e-10*(1+want) {
			t.Errorf("‖Item(a) − Item(b)‖² = %v, d_A(a, b) = %v", d2, want)
		}
	}
	want := l.Item(nil, x)
	big := make([]float64, 20)
	if got := l.Item(big, x); &got[0] != &big[0] || !densetest.BitsEqual(got, want) {
		t.Errorf("Item into a large dst = %v, want %v in dst", got, want)
	}
	if got := l.Query(make([]float64, 1), x); !densetest.BitsEqual(got, want) {
		t.Errorf("Query into a short dst = %v, want %v", got, want)
	}
}

// TestState checks State's layout, that a restored learner embeds and
// continues training bit for bit like the original, that it shares no
// memory with the state, that an average of states is accepted, and that
// invalid states are rejected without changing the learner.
func TestState(t *testing.T) {
	dims := []int{2, 2}
	l := mustNew(t, dims, map[string]float64{"eta": 0.05})
	trainRandom(t, l, 7, 100)
	st := l.State()
	if st.Learner != "lego" || st.Steps != 100 || len(st.Vectors) != 1 || !slices.Equal(st.Vectors[0], l.Matrix().RawSymmetric().Data) {
		t.Fatalf("state %+v is not A row-major with 100 steps", st)
	}
	fresh := mustNew(t, dims, map[string]float64{"eta": 0.05})
	if err := fresh.SetState(st); err != nil {
		t.Fatal(err)
	}
	st.Vectors[0][0] += 1 // the learner must not share the state's memory
	st = l.State()
	if !densetest.StatesEqual(fresh.State(), st) {
		t.Error("restored state differs")
	}
	_, q := densetest.Split(8, 2, 4, 1, 0, 0, 1, 5)
	for i := range 5 {
		x := q.X.RawRowView(i)
		if !densetest.BitsEqual(fresh.Item(nil, x), l.Item(nil, x)) {
			t.Fatal("restored Item differs")
		}
	}
	trainRandom(t, l, 9, 50)
	trainRandom(t, fresh, 9, 50)
	if !densetest.StatesEqual(fresh.State(), l.State()) {
		t.Error("restored learner continues differently")
	}

	other := mustNew(t, dims, nil)
	trainRandom(t, other, 10, 100)
	avg, err := learners.Average([]learners.State{l.State(), other.State()})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.SetState(avg); err != nil {
		t.Errorf("SetState of an average of states: %v", err)
	}

	before := l.State()
	item := l.Item(nil, q.X.RawRowView(0))
	v := before.Vectors[0]
	asym := slices.Clone(v)
	asym[1] += 1e-9
	nanV := slices.Clone(v)
	nanV[5] = math.NaN()
	indefinite := []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 0, 0, 2, 1} // eigenvalues 1, 1, 3, −1
	for i, bad := range []learners.State{
		{Learner: "oasis-full", Vectors: before.Vectors},
		{Learner: "lego", Steps: -1, Vectors: before.Vectors},
		{Learner: "lego"},
		{Learner: "lego", Vectors: [][]float64{v, v}},
		{Learner: "lego", Vectors: [][]float64{v[:15]}},
		{Learner: "lego", Vectors: [][]float64{nanV}},
		{Learner: "lego", Vectors: [][]float64{asym}},
		{Learner: "lego", Vectors: [][]float64{indefinite}},
		{Learner: "lego", Vectors: [][]float64{make([]float64, 16)}},
	} {
		if err := l.SetState(bad); err == nil {
			t.Errorf("bad state %d accepted", i)
		} else {
			t.Logf("bad state %d: %v", i, err)
		}
	}
	if !densetest.StatesEqual(l.State(), before) || !densetest.BitsEqual(l.Item(nil, q.X.RawRowView(0)), item) {
		t.Error("a failed SetState changed the learner")
	}
}

// TestConcurrentItem has several goroutines compute the invalidated
// embedding at once after training (the race detector checks the
// locking): each must get the sequential result.
func TestConcurrentItem(t *testing.T) {
	dims := []int{4, 3}
	seq, par := mustNew(t, dims, nil), mustNew(t, dims, nil)
	trainRandom(t, seq, 11, 80)
	trainRandom(t, par, 11, 80)
	_, q := densetest.Split(12, 3, 7, 1, 0, 0, 1, 8)
	xs, want := make([][]float64, 8), make([][]float64, 8)
	for k := range want {
		xs[k] = q.X.RawRowView(k)
		want[k] = seq.Item(nil, xs[k])
	}
	densetest.ConcurrentEmbeddings(t, par, xs, want)
}
