package mglp_test

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
	"github.com/bowline/bowline/learners/itq"
	"github.com/bowline/bowline/learners/mglp"
)

// hamming is the Hamming distance of the itq.Pack codes of two embeddings,
// which densetest.MeanAP needs for a learners.Hamming model.
func hamming(a, b []float64) int { return itq.Hamming(itq.Pack(a, nil), itq.Pack(b, nil)) }

func TestDenseRegistry(t *testing.T) {
	dims := []int{20, 16}
	m := densetest.NewDense(t, "mglp", dims, nil)
	if m.Name() != "mglp" || m.Metric() != learners.Hamming || !slices.Equal(m.Dims(), dims) {
		t.Errorf("Name %q, Metric %v, Dims %v", m.Name(), m.Metric(), m.Dims())
	}
	d := mglp.DefaultParams()
	want := map[string]float64{
		"bits":   36, // min(DefaultBits, d)
		"lambda": d.Lambda, "eta": d.Eta, "tau": d.Tau, "neighbors": float64(d.Neighbors),
		"lshbits": float64(d.LSHBits), "reg": d.Reg, "iterations": float64(d.Iterations),
		"seed": float64(d.Seed), "codingiter": float64(d.CodingIter), "codingtol": d.CodingTol,
	}
	if p := m.Params(); !maps.Equal(p, want) {
		t.Errorf("default params %v, want %v", p, want)
	}
	if p := densetest.NewDense(t, "mglp", []int{500, 300}, nil).Params(); p["bits"] != mglp.DefaultBits {
		t.Errorf("default bits %v for d = 800, want %d", p["bits"], mglp.DefaultBits)
	}
	set := map[string]float64{"bits": 8, "lambda": 0.3, "eta": 2, "tau": 0.5, "neighbors": 7, "lshbits": 0,
		"reg": 1e-4, "iterations": 3, "seed": 9, "codingiter": 100, "codingtol": 1e-6}
	if p := densetest.NewDense(t, "mglp", dims, set).Params(); !maps.Equal(p, set) {
		t.Errorf("params %v, want what was set, %v", p, set)
	}
	bad := []struct {
		params map[string]float64
		want   string
	}{
		{map[string]float64{"Lambda": 0.5}, `unknown parameter "Lambda"`},
		{map[string]float64{"neighbors": 2.5}, `"neighbors" must be an integer`},
		{map[string]float64{"codingiter": math.Inf(1)}, `"codingiter" must be an integer`},
		{map[string]float64{"lshbits": 65}, "LSHBits"},
		{map[string]float64{"lambda": 2}, "Lambda"},
		{map[string]float64{"bits": 37}, "bits must be in [1, 36]"},
		{map[string]float64{"seed": -1}, "seed"},
	}
	for _, tc := range bad {
		_, err := learners.NewDense("mglp", dims, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewDense(mglp, %v) error %v, want one containing %q", tc.params, err, tc.want)
		}
	}
}

// TestDenseRanking checks that mGLP with the labels as text beats the
// Euclidean baseline by far where the classes sit in a few low-variance
// dimensions under high-variance noise, and that uGLP (no text) ranks
// classmates first far more often than chance on separated classes.
//
// The one-hot labels of k classes have k − 1 principal directions, so mGLP
// has k − 1 relaxed directions (package doc, Bits beyond the text's rank).
// Codes of k − 1 bits, of 16, and of the full 36 must all rank well: longer
// codes once added image-only directions of unit variance, which weighed
// as much as the good ones in the Hamming distance (16 bits fell to mAP ≈
// 0.28 and 36 bits to ≈ 0.22, against 0.91 at 5 bits and 0.20 for the
// baseline).
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
	for _, bits := range []int{k - 1, 16, 36} {
		m := densetest.NewDense(t, "mglp", dims, map[string]float64{"bits": float64(bits)})
		if err := m.Fit(db.X, db.Y); err != nil {
			t.Fatal(err)
		}
		got := densetest.MeanAP(t, m, db, q, hamming)
		t.Logf("signal under noise: euclidean mAP %.3f, mglp %d bits %.3f (chance ≈ %.3f)", baseAP, bits, got, chance)
		model := m.(*mglp.Dense).Model()
		if !model.Multimodal() {
			t.Error("Fit with text did not train a multimodal model")
		}
		if n := len(model.Eigenvalues()); n != k-1 {
			t.Errorf("%d bits: %d relaxed directions, want the labels' k − 1 = %d", bits, n, k-1)
		}
		if got < baseAP+0.3 {
			t.Errorf("%d bits: mglp mAP %.3f does not beat the euclidean baseline %.3f by 0.3", bits, got, baseAP)
		}
	}

	params := map[string]float64{"bits": k - 1}
	db, q = densetest.Split(1, k, 20, 1, 0, 0, 300, 80)
	u := densetest.NewDense(t, "mglp", []int{20}, params)
	if err := u.Fit(db.X, nil); err != nil {
		t.Fatal(err)
	}
	if u.(*mglp.Dense).Model().Multimodal() {
		t.Error("Fit without text trained a multimodal model")
	}
	got := densetest.MeanAP(t, u, db, q, hamming)
	t.Logf("separated classes: uglp mAP %.3f", got)
	if got < 2.5*chance {
		t.Errorf("uglp mAP %.3f is not well above chance %.3f", got, chance)
	}
	// A Y without columns also means no text.
	u2 := densetest.NewDense(t, "mglp", []int{20}, params)
	if err := u2.Fit(db.X, &mat.Dense{}); err != nil {
		t.Fatal(err)
	}
	if !densetest.StatesEqual(u2.State(), u.State()) {
		t.Error("Fit with an empty Y differs from Fit with Y = nil")
	}
}

// TestDenseStateAndCodes checks that Item packed with itq.Pack is the
// model's code, that State restored into a fresh learner gives the same
// Item bit for bit (and the same codes from the restored Model), that the
// state has the documented layout, and that training is deterministic.
func TestDenseStateAndCodes(t *testing.T) {
	db, q := densetest.Split(3, 4, 10, 0.3, 10, 1, 120, 30)
	dims := []int{10, 10}
	params := map[string]float64{"bits": 12, "seed": 5}
	m := densetest.NewDense(t, "mglp", dims, params)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	model := m.(*mglp.Dense).Model()
	st := m.State()
	if st.Learner != "mglp" || st.Steps != 120 || len(st.Vectors) != 2 ||
		!slices.Equal(st.Vectors[0], model.Mean()) || !slices.Equal(st.Vectors[1], model.Projection().RawMatrix().Data) {
		t.Fatal("state does not hold the mean and the row-major projection")
	}
	fresh := densetest.NewDense(t, "mglp", dims, params)
	if err := fresh.SetState(st); err != nil {
		t.Fatalf("SetState: %v", err)
	}
	st.Vectors[1][0] += 1 // the learner must not share the state's memory
	restored := fresh.(*mglp.Dense).Model()
	again := densetest.NewDense(t, "mglp", dims, params)
	if err := again.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	if !densetest.StatesEqual(again.State(), m.State()) {
		t.Error("two fits with the same seed differ")
	}
	buf := make([]float64, 0, 64)
	for i := range 30 {
		x := q.X.RawRowView(i)
		a, b := m.Item(nil, x), fresh.Item(nil, x)
		if !densetest.BitsEqual(a, b) {
			t.Fatalf("restored Item differs for query %d", i)
		}
		if qv := m.Query(buf, x); !densetest.BitsEqual(qv, a) || &qv[0] != &buf[:1][0] {
			t.Fatal("Query differs from Item or did not reuse dst")
		}
		code := model.Encode(x, nil)
		if got := itq.Pack(a, nil); !slices.Equal(got, code) {
			t.Fatalf("Pack(Item) = %b, Encode = %b", got, code)
		}
		if got := restored.Encode(x, nil); !slices.Equal(got, code) {
			t.Fatalf("restored Encode = %b, trained %b", got, code)
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
	m := densetest.NewDense(t, "mglp", dims, map[string]float64{"bits": 8})
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
	if err := m.Fit(db.X, mat.NewDense(59, 3, nil)); err == nil {
		t.Error("Fit with a text matrix of the wrong height did not fail")
	}
	if err := m.Fit(nil, nil); err == nil {
		t.Error("Fit(nil) did not fail")
	}
	densetest.MustPanic(t, "Item of a short vector", "want 16", func() { m.Item(nil, x[:15]) })
	bad := []learners.State{
		{Learner: "itq", Vectors: before.Vectors},
		{Learner: "mglp", Vectors: before.Vectors[:1]},
		{Learner: "mglp", Vectors: [][]float64{before.Vectors[0], before.Vectors[1][:10]}},
		{Learner: "mglp", Vectors: [][]float64{before.Vectors[0], append(slices.Clone(before.Vectors[1][1:]), math.NaN())}},
		{Learner: "mglp", Steps: -1, Vectors: before.Vectors},
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
