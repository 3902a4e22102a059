package ssml_test

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
	"github.com/bowline/bowline/learners/ssml"
)

func TestDenseRegistry(t *testing.T) {
	dims := []int{20, 16}
	m := densetest.NewDense(t, "ssml", dims, nil)
	if m.Name() != "ssml" || m.Metric() != learners.Euclidean || !slices.Equal(m.Dims(), dims) {
		t.Errorf("Name %q, Metric %v, Dims %v", m.Name(), m.Metric(), m.Dims())
	}
	d := ssml.DefaultParams()
	want := map[string]float64{"alpha": d.Alpha, "beta": d.Beta, "epsilon": d.Epsilon,
		"maxiter": float64(d.MaxIter), "tol": d.Tol, "zerotol": d.ZeroTol}
	if p := m.Params(); !maps.Equal(p, want) {
		t.Errorf("default params %v, want %v", p, want)
	}
	set := map[string]float64{"alpha": 2, "beta": 0.5, "epsilon": 1e-8, "maxiter": 10, "tol": 0, "zerotol": 0.01}
	if p := densetest.NewDense(t, "ssml", dims, set).Params(); !maps.Equal(p, set) {
		t.Errorf("params %v, want what was set, %v", p, set)
	}
	bad := []struct {
		params map[string]float64
		want   string
	}{
		{map[string]float64{"lambda": 1}, `unknown parameter "lambda"`},
		{map[string]float64{"maxiter": 10.5}, `"maxiter" must be an integer`},
		{map[string]float64{"maxiter": 0}, "MaxIter"},
		{map[string]float64{"alpha": 0}, "Alpha"},
		{map[string]float64{"zerotol": math.NaN()}, "ZeroTol"},
	}
	for _, tc := range bad {
		_, err := learners.NewDense("ssml", dims, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewDense(ssml, %v) error %v, want one containing %q", tc.params, err, tc.want)
		}
	}
}

// TestDenseRanking checks that SSML, trained with the labels as tags,
// beats the Euclidean baseline by far where the classes sit in a few
// low-variance dimensions under high-variance noise (it suppresses the
// noise dimensions, along which classmates differ most), and stays well
// above chance where the plain features already separate the classes.
func TestDenseRanking(t *testing.T) {
	const k = 6
	chance := 1.0 / k

	db, q := densetest.Split(2, k, 6, 0.3, 30, 3, 300, 80)
	dims := []int{6, 30}
	base := densetest.NewDense(t, "euclidean", dims, nil)
	if err := base.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	baseAP := densetest.MeanAP(t, base, db, q, nil)
	m := densetest.NewDense(t, "ssml", dims, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	got := densetest.MeanAP(t, m, db, q, nil)
	t.Logf("signal under noise: euclidean mAP %.3f, ssml %.3f (chance ≈ %.3f); sparsity %.2f", baseAP, got, chance, m.(*ssml.Dense).Model().Sparsity())
	if got < baseAP+0.3 {
		t.Errorf("ssml mAP %.3f does not beat the euclidean baseline %.3f by 0.3", got, baseAP)
	}

	db, q = densetest.Split(1, k, 20, 1, 0, 0, 300, 80)
	m = densetest.NewDense(t, "ssml", []int{20}, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	got = densetest.MeanAP(t, m, db, q, nil)
	t.Logf("separated classes: ssml mAP %.3f", got)
	if got < 2.5*chance {
		t.Errorf("ssml mAP %.3f is not well above chance %.3f", got, chance)
	}
}

// TestDenseState checks that Item reproduces the learned distance, that
// State restored into a fresh learner gives the same Item bit for bit, that
// the state has the documented layout, and that training is deterministic.
func TestDenseState(t *testing.T) {
	db, q := densetest.Split(3, 4, 10, 0.3, 10, 1, 120, 30)
	dims := []int{10, 10}
	m := densetest.NewDense(t, "ssml", dims, nil)
	// Tags as weights: Fit must accept any non-negative dense bag of tags.
	Y := mat.DenseCopyOf(db.Y)
	Y.Scale(2.5, Y)
	if err := m.Fit(db.X, Y); err != nil {
		t.Fatal(err)
	}
	model := m.(*ssml.Dense).Model()
	U := model.Factor()
	_, r := U.Dims()
	st := m.State()
	if st.Learner != "ssml" || st.Steps != 120 || len(st.Vectors) != 1 || !slices.Equal(st.Vectors[0], U.RawMatrix().Data) {
		t.Fatal("state does not hold the row-major factor")
	}
	fresh := densetest.NewDense(t, "ssml", dims, nil)
	if err := fresh.SetState(st); err != nil {
		t.Fatalf("SetState: %v", err)
	}
	st.Vectors[0][0] += 1 // the learner must not share the state's memory
	if fresh.(*ssml.Dense).Model() != nil {
		t.Error("a restored learner has a trained Model")
	}
	again := densetest.NewDense(t, "ssml", dims, nil)
	if err := again.Fit(db.X, Y); err != nil {
		t.Fatal(err)
	}
	if !densetest.StatesEqual(again.State(), m.State()) {
		t.Error("two fits differ")
	}
	buf := make([]float64, 0, 64)
	for i := range 29 {
		x, y := q.X.RawRowView(i), q.X.RawRowView(i+1)
		a, b := m.Item(nil, x), fresh.Item(nil, x)
		if len(a) != r || !densetest.BitsEqual(a, b) {
			t.Fatalf("restored Item differs for query %d (length %d, rank %d)", i, len(a), r)
		}
		if qv := m.Query(buf, x); !densetest.BitsEqual(qv, a) || &qv[0] != &buf[:1][0] {
			t.Fatal("Query differs from Item or did not reuse dst")
		}
		ay := m.Item(nil, y)
		var d2 float64
		for j := range a {
			d2 += (a[j] - ay[j]) * (a[j] - ay[j])
		}
		if want := model.Distance(x, y); math.Abs(d2-want) > 1e-9*(1+want) {
			t.Fatalf("‖Item(x) − Item(y)‖² = %v, d_M(x, y) = %v", d2, want)
		}
	}
	if !densetest.StatesEqual(fresh.State(), m.State()) {
		t.Error("restored state differs")
	}
}

// TestDenseErrors checks the errors of Fit and SetState and the panics of
// Item, and that a failed Fit or SetState leaves the model as it was.
func TestDenseErrors(t *testing.T) {
	db, q := densetest.Split(4, 3, 8, 0.3, 8, 1, 60, 5)
	dims := []int{8, 8}
	x := q.X.RawRowView(0)
	m := densetest.NewDense(t, "ssml", dims, nil)
	densetest.MustPanic(t, "Item before Fit", "before Fit", func() { m.Item(nil, x) })
	if err := m.SetState(m.State()); err == nil {
		t.Error("SetState of an untrained model's state did not fail")
	}
	if err := m.Fit(mat.NewDense(60, 17, nil), db.Y); err == nil || !strings.Contains(err.Error(), "17 columns, want 16") {
		t.Errorf("Fit with 17 columns: %v", err)
	}
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	before := m.State()
	item := m.Item(nil, x)
	nan := mat.DenseCopyOf(db.X)
	nan.Set(3, 4, math.NaN())
	if err := m.Fit(nan, db.Y); err == nil || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("Fit with NaN: %v", err)
	}
	negY := mat.DenseCopyOf(db.Y)
	negY.Set(2, 0, -1)
	bigY := mat.DenseCopyOf(db.Y)
	bigY.Set(2, 0, 1e300)
	nanY := mat.DenseCopyOf(db.Y)
	nanY.Set(2, 0, math.NaN())
	for name, Y := range map[string]*mat.Dense{
		"nil": nil, "empty": {}, "short": mat.NewDense(59, 3, nil), "negative": negY, "beyond float32": bigY, "NaN": nanY,
		"no shared tags": mat.NewDense(60, 3, nil),
	} {
		if err := m.Fit(db.X, Y); err == nil {
			t.Errorf("Fit with %s Y did not fail", name)
		} else {
			t.Logf("%s Y: %v", name, err)
		}
	}
	if err := m.Fit(nil, db.Y); err == nil {
		t.Error("Fit(nil) did not fail")
	}
	densetest.MustPanic(t, "Item of a short vector", "want 16", func() { m.Item(nil, x[:15]) })
	v := before.Vectors[0]
	bad := []learners.State{
		{Learner: "itq", Vectors: before.Vectors},
		{Learner: "ssml", Vectors: [][]float64{v, v}},
		{Learner: "ssml", Vectors: [][]float64{v[:len(v)-1]}},
		{Learner: "ssml", Vectors: [][]float64{{}}},
		{Learner: "ssml", Vectors: [][]float64{append(slices.Clone(v[1:]), math.Inf(-1))}},
		{Learner: "ssml", Steps: -1, Vectors: before.Vectors},
	}
	for i, st := range bad {
		if err := m.SetState(st); err == nil {
			t.Errorf("bad state %d accepted", i)
		}
	}
	if !densetest.StatesEqual(m.State(), before) || !densetest.BitsEqual(m.Item(nil, x), item) {
		t.Error("a failed Fit or SetState changed the model")
	}
}
