package euclidean_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/euclidean"
	"github.com/bowline/bowline/learners/internal/densetest"
)

func TestRegistry(t *testing.T) {
	dims := []int{20, 16}
	m := densetest.NewDense(t, "euclidean", dims, nil)
	if m.Name() != "euclidean" || m.Metric() != learners.Euclidean || !slices.Equal(m.Dims(), dims) || len(m.Params()) != 0 {
		t.Errorf("Name %q, Metric %v, Dims %v, Params %v", m.Name(), m.Metric(), m.Dims(), m.Params())
	}
	densetest.NewDense(t, "euclidean", dims, map[string]float64{}) // an empty map is no parameter
	_, err := learners.NewDense("euclidean", dims, map[string]float64{"scale": 1, "alpha": 2})
	if err == nil || !strings.Contains(err.Error(), `unknown parameter "alpha", "scale"`) {
		t.Errorf("NewDense with parameters: %v", err)
	}
	if _, err := euclidean.New(nil); err == nil {
		t.Error("New without modalities did not fail")
	}
	if _, err := euclidean.New([]int{3, 0}); err == nil {
		t.Error("New with a zero dimension did not fail")
	}
}

// TestRanking checks that the baseline ranks classmates first far more
// often than chance where the plain features separate the classes, and
// that its Item is the input.
func TestRanking(t *testing.T) {
	const k = 6
	chance := 1.0 / k
	db, q := densetest.Split(1, k, 20, 1, 0, 0, 300, 80)
	m := densetest.NewDense(t, "euclidean", []int{12, 8}, nil)
	x := q.X.RawRowView(0)
	if got := m.Item(nil, x); !densetest.BitsEqual(got, x) || &got[0] == &x[0] {
		t.Errorf("Item before Fit = %v, want a copy of %v", got, x)
	}
	if err := m.Fit(db.X, nil); err != nil {
		t.Fatal(err)
	}
	got := densetest.MeanAP(t, m, db, q, nil)
	t.Logf("separated classes: euclidean mAP %.3f (chance ≈ %.3f)", got, chance)
	if got < 2.5*chance {
		t.Errorf("euclidean mAP %.3f is not well above chance %.3f", got, chance)
	}
	buf := make([]float64, 1, 64)
	if qv := m.Query(buf, x); !densetest.BitsEqual(qv, x) || &qv[0] != &buf[0] {
		t.Error("Query is not a copy of x into dst")
	}
}

func TestStateAndErrors(t *testing.T) {
	db, q := densetest.Split(4, 3, 8, 0.3, 8, 1, 60, 5)
	dims := []int{8, 8}
	x := q.X.RawRowView(0)
	m := densetest.NewDense(t, "euclidean", dims, nil)
	if err := m.Fit(db.X, db.Y); err != nil {
		t.Fatal(err)
	}
	st := m.State()
	if st.Learner != "euclidean" || st.Steps != 60 || len(st.Vectors) != 0 {
		t.Errorf("state %+v, want no vectors and 60 steps", st)
	}
	fresh := densetest.NewDense(t, "euclidean", dims, nil)
	if err := fresh.SetState(st); err != nil {
		t.Fatal(err)
	}
	if !densetest.StatesEqual(fresh.State(), st) || !densetest.BitsEqual(fresh.Item(nil, x), m.Item(nil, x)) {
		t.Error("restored model differs")
	}
	if err := m.Fit(mat.NewDense(60, 17, nil), nil); err == nil || !strings.Contains(err.Error(), "17 columns, want 16") {
		t.Errorf("Fit with 17 columns: %v", err)
	}
	nan := mat.DenseCopyOf(db.X)
	nan.Set(3, 4, math.Inf(1))
	if err := m.Fit(nan, nil); err == nil || !strings.Contains(err.Error(), "X[3,4]") {
		t.Errorf("Fit with +Inf: %v", err)
	}
	if err := m.Fit(nil, nil); err == nil {
		t.Error("Fit(nil) did not fail")
	}
	for i, bad := range []learners.State{
		{Learner: "ssml"},
		{Learner: "euclidean", Steps: -1},
		{Learner: "euclidean", Vectors: [][]float64{{1}}},
	} {
		if err := m.SetState(bad); err == nil {
			t.Errorf("bad state %d accepted", i)
		}
	}
	if !densetest.StatesEqual(m.State(), st) {
		t.Error("a failed Fit or SetState changed the model")
	}
	densetest.MustPanic(t, "Item of a short vector", "want 16", func() { m.Item(nil, x[:15]) })
}
