package trainbeam

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/global"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*checkStateFn)(nil)).Elem())
	beam.RegisterFunction(featureSummaryFn)
	beam.RegisterFunction(checkScaledFn)
}

// checkStateFn fails the pipeline unless the dense model's state is Want,
// bit for bit.
type checkStateFn struct{ Want learners.State }

func (f *checkStateFn) ProcessElement(m Model) error {
	if m.Dims == nil || m.Weights != nil {
		return fmt.Errorf("%s: dims %v, %d weights: not a dense model", m.Learner, m.Dims, len(m.Weights))
	}
	if !reflect.DeepEqual(m.State, f.Want) {
		return fmt.Errorf("%s: state differs from the sequential learner's (%d vs %d steps)", m.Learner, m.State.Steps, f.Want.Steps)
	}
	return nil
}

var denseDims = []int{3, 4}

// denseRows makes labelled rows in two classes: the first modality carries
// the class, the second is noise.
func denseRows(n int) []DenseRow {
	r := rand.New(rand.NewPCG(5, 6))
	rows := make([]DenseRow, n)
	for i := range rows {
		c := i % 2
		x := make([]float32, 7)
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		for j := range 3 {
			x[j] += float32(3 * c)
		}
		rows[i] = DenseRow{ImageID: fmt.Sprintf("img%03d", i), Label: fmt.Sprintf("c%d", c), X: x}
	}
	return rows
}

func denseTriplets(rows []DenseRow, n int) []formats.Triplet {
	r := rand.New(rand.NewPCG(7, 8))
	var out []formats.Triplet
	for len(out) < n {
		q, p, ng := rows[r.IntN(len(rows))], rows[r.IntN(len(rows))], rows[r.IntN(len(rows))]
		if q.ImageID == p.ImageID || q.Label != p.Label || q.Label == ng.Label {
			continue
		}
		out = append(out, formats.Triplet{Seq: int64(r.Uint64() >> 1), Query: q.ImageID, Positive: p.ImageID, Negative: ng.ImageID})
	}
	return out
}

func featureSummaryFn(f Feature) string {
	return fmt.Sprintf("%d:%v|%v|%v", f.Seq, f.X, f.P, f.N)
}

func TestDenseFeaturesJoin(t *testing.T) {
	rows := denseRows(20)
	trips := denseTriplets(rows, 30)
	byID := map[string]DenseRow{}
	for _, r := range rows {
		byID[r.ImageID] = r
	}
	var want []any
	for _, tr := range trips {
		want = append(want, fmt.Sprintf("%d:%v|%v|%v", tr.Seq, byID[tr.Query].X, byID[tr.Positive].X, byID[tr.Negative].X))
	}
	// A triplet naming an image without features is dropped.
	trips = append(trips, formats.Triplet{Seq: 1, Query: rows[0].ImageID, Positive: "missing", Negative: rows[1].ImageID})
	p, s := beam.NewPipelineWithRoot()
	feats := DenseFeatures(s, beam.CreateList(s, trips), beam.CreateList(s, rows))
	passert.Equals(s, beam.ParDo(s, featureSummaryFn, feats), want...)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// denseFeatures is what DenseFeatures makes of denseTriplets, in Seq order.
func denseFeatures(rows []DenseRow, trips []formats.Triplet) []Feature {
	byID := map[string]DenseRow{}
	for _, r := range rows {
		byID[r.ImageID] = r
	}
	var feats []Feature
	for _, tr := range trips {
		feats = append(feats, Feature{Seq: tr.Seq, X: byID[tr.Query].X, P: byID[tr.Positive].X, N: byID[tr.Negative].X})
	}
	sort.Slice(feats, func(i, j int) bool { return feats[i].Seq < feats[j].Seq })
	return feats
}

func TestShardedDenseOneShardIsSequential(t *testing.T) {
	rows := denseRows(40)
	feats := denseFeatures(rows, denseTriplets(rows, 300))
	for _, name := range []string{"lomdml", "oasis-full"} {
		opt := ShardOptions{Learner: name, Dims: denseDims, Shards: 1, Rounds: 1}
		seq, err := newTrainee(opt)
		if err != nil {
			t.Fatal(err)
		}
		first := seq.State()
		for _, ft := range feats {
			if _, err := seq.step(ft); err != nil {
				t.Fatal(err)
			}
		}
		want := seq.State()
		if reflect.DeepEqual(first.Vectors, want.Vectors) {
			t.Fatalf("%s learned nothing: the test would prove little", name)
		}
		for _, rounds := range []int{1, 3} {
			opt.Rounds = rounds
			p, s := beam.NewPipelineWithRoot()
			beam.ParDo0(s, &checkStateFn{Want: want}, Sharded(s, beam.CreateList(s, feats), opt))
			if err := ptest.Run(p); err != nil {
				t.Fatalf("%s, %d rounds: %v", name, rounds, err)
			}
		}
	}
}

func TestBatchSampleAndMatrices(t *testing.T) {
	rows := denseRows(30)
	rows[3].Label, rows[3].Tags = "", nil  // unlabelled: not sampled
	rows[4].Tags = []string{"zebra", "c1"} // tags win over the label
	f := &sampleFn{Max: 10, Seed: 3}
	a, b := f.CreateAccumulator(), f.CreateAccumulator()
	for i, r := range rows {
		if i%2 == 0 {
			a = f.AddInput(a, r)
		} else {
			b = f.AddInput(b, r)
		}
	}
	one := f.ExtractOutput(f.MergeAccumulators(a, b))
	c := f.CreateAccumulator()
	for i := len(rows) - 1; i >= 0; i-- {
		c = f.AddInput(c, rows[i])
	}
	two := f.ExtractOutput(c)
	if len(one.Rows) != 10 || !reflect.DeepEqual(one, two) {
		t.Fatalf("samples of 10 depend on arrival order: %d rows", len(one.Rows))
	}
	X, Y, err := Matrices([]DenseRow{rows[4], rows[0], rows[1]})
	if err != nil {
		t.Fatal(err)
	}
	// Tags sorted: c0, c1, zebra.
	wantY := [][]float64{{0, 1, 1}, {1, 0, 0}, {0, 1, 0}}
	for i, want := range wantY {
		for j, v := range want {
			if Y.At(i, j) != v {
				t.Fatalf("Y[%d][%d] = %v, want %v", i, j, Y.At(i, j), v)
			}
		}
	}
	if X.At(1, 2) != float64(rows[0].X[2]) {
		t.Errorf("X[1][2] = %v, want %v", X.At(1, 2), rows[0].X[2])
	}
}

func TestDenseRowsScale(t *testing.T) {
	mk := func(n int, v float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = v
		}
		return x
	}
	feat := func(id string, v float32) formats.Features {
		return formats.Features{ImageID: id, Label: "a",
			Colour: mk(global.ColourDim, v), Edge: mk(global.EdgeDim, 2*v), Gabor: mk(global.GaborDim, v),
			LBP: mk(global.LBPDim, v), GIST: mk(global.GISTDim, 10*v)}
	}
	in := []formats.Features{feat("a", 1), feat("b", 3), {ImageID: "c"}} // c has no global features
	p, s := beam.NewPipelineWithRoot()
	rows := DenseRows(s, beam.CreateList(s, in))
	beam.ParDo0(s, checkScaledFn, rows)
	passert.Count(s, rows, "rows", 2)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// checkScaledFn checks a row of TestDenseRowsScale: with two images per
// dimension the centred values are ±1 per unit of spread, and each modality
// of n dimensions has squared norm 1, so every value is ±1/√n.
func checkScaledFn(r DenseRow) error {
	off := 0
	for _, d := range global.Dims {
		want := 1 / math.Sqrt(float64(d))
		if r.ImageID == "a" {
			want = -want
		}
		for j := off; j < off+d; j++ {
			if math.Abs(float64(r.X[j])-want) > 1e-6 {
				return fmt.Errorf("%s: x[%d] = %v, want %v", r.ImageID, j, r.X[j], want)
			}
		}
		off += d
	}
	return nil
}

// TestRestoreEveryDenseLearner: a model restores from what the pipeline
// keeps of it — name, dims, the JSON of its Params (plus the sharding
// layout) and its state — also with non-default shape-setting params, such
// as a code length; the evaluation once restored with the defaults and
// failed on mglp with 8 bits.
func TestRestoreEveryDenseLearner(t *testing.T) {
	rows := denseRows(60)
	X, Y, err := Matrices(rows)
	if err != nil {
		t.Fatal(err)
	}
	feats := denseFeatures(rows, denseTriplets(rows, 20))
	nonDefault := map[string]map[string]float64{"itq": {"bits": 3}, "cca-itq": {"bits": 1}, "lsh": {"bits": 5}, "mglp": {"bits": 2}, "lomdml": {"rank": 2}}
	for _, name := range learners.DenseNames() {
		m, err := learners.NewDense(name, denseDims, nonDefault[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch l := m.(type) {
		case learners.DenseBatch:
			if err := l.Fit(X, Y); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case learners.DenseOnline:
			tr := &denseTrainee{DenseOnline: l}
			for _, ft := range feats {
				if _, err := tr.step(ft); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
		params := m.Params()
		params["shards"], params["rounds"] = 2, 3
		js, _ := json.Marshal(params)
		back, err := Restore(Model{Learner: name, Params: string(js), Dims: denseDims, State: m.State()})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		x := []float64{1, -2, 0.5, 3, 0, -1, 2}
		if a, b := m.Item(nil, x), back.Item(nil, x); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: restored Item %v, trained %v", name, b, a)
		}
	}
}
