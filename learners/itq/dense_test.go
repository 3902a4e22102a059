package itq_test

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
)

// hamming is the Hamming distance of the itq.Pack codes of two embeddings,
// which densetest.MeanAP needs for a learners.Hamming model.
func hamming(a, b []float64) int { return itq.Hamming(itq.Pack(a, nil), itq.Pack(b, nil)) }

var kinds = []string{"itq", "cca-itq", "lsh"}

func TestDenseRegistry(t *testing.T) {
	dims := []int{20, 16}
	want := map[string][]string{
		"itq":     {"bits", "iterations", "seed"},
		"cca-itq": {"bits", "iterations", "reg", "seed"},
		"lsh":     {"bits", "seed"},
	}
	for _, kind := range kinds {
		m := densetest.NewDense(t, kind, dims, nil)
		if m.Name() != kind || m.Metric() != learners.Hamming || !slices.Equal(m.Dims(), dims) {
			t.Errorf("%s: Name %q, Metric %v, Dims %v", kind, m.Name(), m.Metric(), m.Dims())
		}
		p := m.Params()
		var names []string
		for name := range p {
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want[kind]) {
			t.Errorf("%s: params %v, want %v", kind, names, want[kind])
		}
		// The default length is capped at the dimension.
		if p["bits"] != 36 || p["seed"] != 1 {
			t.Errorf("%s: default params %v, want bits 36 (= d < 64) and seed 1", kind, p)
		}
		if p2 := densetest.NewDense(t, kind, []int{500, 300}, nil).Params(); p2["bits"] != itq.DefaultBits {
			t.Errorf("%s: default bits %v for d = 800, want %d", kind, p2["bits"], itq.DefaultBits)
		}
		// Params round-trip through the factory.
		if again := densetest.NewDense(t, kind, dims, p); !maps.Equal(again.Params(), p) {
			t.Errorf("%s: NewDense(Params()) has params %v, want %v", kind, again.Params(), p)
		}
	}
	bad := []struct {
		kind   string
		params map[string]float64
		want   string
	}{
		{"itq", map[string]float64{"bitz": 8}, `unknown parameter "bitz"`},
		{"itq", map[string]float64{"reg": 1e-3}, `unknown parameter "reg"`},
		{"lsh", map[string]float64{"iterations": 3}, `unknown parameter "iterations"`},
		{"itq", map[string]float64{"bits": 8.5}, "integer"},
		{"lsh", map[string]float64{"bits": math.NaN()}, "integer"},
		{"itq", map[string]float64{"bits": 37}, "bits must be in [1, 36]"},
		{"itq", map[string]float64{"bits": 0}, "bits must be in [1, 36]"},
		{"itq", map[string]float64{"iterations": -1}, "Iterations"},
		{"cca-itq", map[string]float64{"seed": -1}, "seed"},
		{"cca-itq", map[string]float64{"reg": 0}, "reg must be > 0"},
	}
	for _, tc := range bad {
		_, err := learners.NewDense(tc.kind, dims, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewDense(%q, %v) error %v, want one containing %q", tc.kind, tc.params, err, tc.want)
		}
	}
	if _, err := itq.NewDense("pca", dims, 8, itq.DefaultOptions()); err == nil {
		t.Error("NewDense of an unknown kind did not fail")
	}
}

// TestDenseRanking checks that every kind ranks held-out queries' classmates
// first far more often than chance on separated classes, and that CCA-ITQ,
// which sees the labels, beats the Euclidean baseline where the classes sit
// in a few low-variance dimensions under high-variance noise.
func TestDenseRanking(t *testing.T) {
	const k, bits = 6, 16
	chance := 1.0 / k
	db, q := densetest.Split(1, k, 20, 1, 0, 0, 400, 100)
	base := densetest.NewDense(t, "euclidean", []int{20}, nil)
	if err := base.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	t.Logf("separated classes: euclidean mAP %.3f (chance ≈ %.3f)", densetest.MeanAP(t, base, db, q, nil), chance)
	for _, kind := range kinds {
		m := densetest.NewDense(t, kind, []int{12, 8}, map[string]float64{"bits": bits})
		if err := m.Fit(db.X, db.Y); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		got := densetest.MeanAP(t, m, db, q, hamming)
		t.Logf("separated classes: %s mAP %.3f", kind, got)
		if got < 2.5*chance {
			t.Errorf("%s: mAP %.3f is not well above chance %.3f", kind, got, chance)
		}
	}

	db, q = densetest.Split(2, k, 6, 0.3, 30, 3, 400, 100)
	dims := []int{6, 30}
	base = densetest.NewDense(t, "euclidean", dims, nil)
	if err := base.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	baseAP := densetest.MeanAP(t, base, db, q, nil)
	m := densetest.NewDense(t, "cca-itq", dims, map[string]float64{"bits": bits})
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	got := densetest.MeanAP(t, m, db, q, hamming)
	t.Logf("signal under noise: euclidean mAP %.3f, cca-itq %.3f", baseAP, got)
	if got < baseAP+0.3 {
		t.Errorf("cca-itq mAP %.3f does not beat the euclidean baseline %.3f by 0.3", got, baseAP)
	}
}

// TestDenseStateAndCodes checks, for every kind, that Item packed with Pack
// is the model's code, that State restored into a fresh learner gives the
// same Item bit for bit (and the same codes from the restored Model), that
// the state has the documented layout, and that training is deterministic.
func TestDenseStateAndCodes(t *testing.T) {
	db, q := densetest.Split(3, 4, 10, 0.3, 10, 1, 120, 30)
	dims := []int{10, 10}
	for _, kind := range kinds {
		params := map[string]float64{"bits": 12, "seed": 5}
		m := densetest.NewDense(t, kind, dims, params)
		if err := m.Fit(db.X, db.Y); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		model := m.(*itq.Dense).Model()
		st := m.State()
		if st.Learner != kind || st.Steps != 120 || len(st.Vectors) != 2 ||
			!slices.Equal(st.Vectors[0], model.Mean()) || !slices.Equal(st.Vectors[1], model.Projection().RawMatrix().Data) {
			t.Fatalf("%s: state does not hold the mean and the row-major projection", kind)
		}
		fresh := densetest.NewDense(t, kind, dims, params)
		if err := fresh.SetState(st); err != nil {
			t.Fatalf("%s: SetState: %v", kind, err)
		}
		st.Vectors[1][0] += 1 // the learner must not share the state's memory
		restored := fresh.(*itq.Dense).Model()
		again := densetest.NewDense(t, kind, dims, params)
		if err := again.Fit(db.X, db.Y); err != nil {
			t.Fatal(err)
		}
		if !densetest.StatesEqual(again.State(), m.State()) {
			t.Errorf("%s: two fits with the same seed differ", kind)
		}
		buf := make([]float64, 0, 64)
		for i := range 30 {
			x := q.X.RawRowView(i)
			a, b := m.Item(nil, x), fresh.Item(nil, x)
			if !densetest.BitsEqual(a, b) {
				t.Fatalf("%s: restored Item differs for query %d", kind, i)
			}
			if qv := m.Query(buf, x); !densetest.BitsEqual(qv, a) || &qv[0] != &buf[:1][0] {
				t.Fatalf("%s: Query differs from Item or did not reuse dst", kind)
			}
			code := model.Encode(x, nil)
			if got := itq.Pack(a, nil); !slices.Equal(got, code) {
				t.Fatalf("%s: Pack(Item) = %b, Encode = %b", kind, got, code)
			}
			if got := restored.Encode(x, nil); !slices.Equal(got, code) {
				t.Fatalf("%s: restored Encode = %b, trained %b", kind, got, code)
			}
		}
		if !densetest.StatesEqual(fresh.State(), m.State()) {
			t.Errorf("%s: restored state differs", kind)
		}
	}
}

// TestDenseErrors checks the errors of Fit and SetState and the panics of
// Item, and that a failed Fit or SetState leaves the model as it was.
func TestDenseErrors(t *testing.T) {
	db, q := densetest.Split(4, 3, 8, 0.3, 8, 1, 60, 5)
	dims := []int{8, 8}
	x := q.X.RawRowView(0)
	for _, kind := range kinds {
		m := densetest.NewDense(t, kind, dims, map[string]float64{"bits": 8})
		densetest.MustPanic(t, kind+" Item before Fit", "before Fit", func() { m.Item(nil, x) })
		if err := m.SetState(m.State()); err == nil {
			t.Errorf("%s: SetState of an untrained model's state did not fail", kind)
		}
		wide := mat.NewDense(60, 17, nil)
		if err := m.Fit(wide, db.Y); err == nil || !strings.Contains(err.Error(), "17 columns, want 16") {
			t.Errorf("%s: Fit with 17 columns: %v", kind, err)
		}
		if err := m.Fit(db.X, db.Y); err != nil {
			t.Fatal(err)
		}
		before := m.State()
		item := m.Item(nil, x)
		nan := mat.DenseCopyOf(db.X)
		nan.Set(3, 4, math.NaN())
		if err := m.Fit(nan, db.Y); err == nil || !strings.Contains(err.Error(), "NaN") {
			t.Errorf("%s: Fit with NaN: %v", kind, err)
		}
		if err := m.Fit(nil, nil); err == nil {
			t.Errorf("%s: Fit(nil) did not fail", kind)
		}
		densetest.MustPanic(t, kind+" Item of a short vector", "want 16", func() { m.Item(nil, x[:15]) })

		bad := []learners.State{
			{Learner: "other", Vectors: before.Vectors},
			{Learner: kind, Vectors: before.Vectors[:1]},
			{Learner: kind, Vectors: [][]float64{before.Vectors[0], before.Vectors[1][:10]}},
			{Learner: kind, Vectors: [][]float64{before.Vectors[0], append(slices.Clone(before.Vectors[1][1:]), math.Inf(1))}},
			{Learner: kind, Steps: -1, Vectors: before.Vectors},
		}
		for i, st := range bad {
			if err := m.SetState(st); err == nil {
				t.Errorf("%s: bad state %d accepted", kind, i)
			}
		}
		if !densetest.StatesEqual(m.State(), before) || !densetest.BitsEqual(m.Item(nil, x), item) {
			t.Errorf("%s: a failed Fit or SetState changed the model", kind)
		}
	}
	cca := densetest.NewDense(t, "cca-itq", dims, map[string]float64{"bits": 4})
	if err := cca.Fit(db.X, nil); err == nil {
		t.Error("cca-itq: Fit without labels did not fail")
	}
	if err := cca.Fit(db.X, mat.NewDense(59, 3, nil)); err == nil {
		t.Error("cca-itq: Fit with a label matrix of the wrong height did not fail")
	}
}
