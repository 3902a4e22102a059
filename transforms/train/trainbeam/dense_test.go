package trainbeam

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/train/traintest"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*checkStateFn)(nil)).Elem())
	beam.RegisterFunction(featureSummaryFn)
	beam.RegisterFunction(checkScaledFn)
}

// checkStateFn fails the pipeline unless the dense model's state is Want,
// bit for bit.
type checkStateFn struct{ Want learners.State }

func (f *checkStateFn) ProcessElement(m learners.Model) error {
	if m.Dims == nil || m.Weights != nil {
		return fmt.Errorf("%s: dims %v, %d weights: not a dense model", m.Learner, m.Dims, len(m.Weights))
	}
	if !reflect.DeepEqual(m.State, f.Want) {
		return fmt.Errorf("%s: state differs from the sequential learner's (%d vs %d steps)", m.Learner, m.State.Steps, f.Want.Steps)
	}
	return nil
}

func featureSummaryFn(f train.Feature) string {
	return fmt.Sprintf("%d:%v|%v|%v", f.Seq, f.X, f.P, f.N)
}

func TestDenseFeaturesJoin(t *testing.T) {
	rows := traintest.DenseRows(20)
	trips := traintest.DenseTriplets(rows, 30)
	byID := map[string]train.DenseRow{}
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

func TestShardedDenseOneShardIsSequential(t *testing.T) {
	rows := traintest.DenseRows(40)
	feats := traintest.DenseFeatures(rows, traintest.DenseTriplets(rows, 300))
	for _, name := range []string{"lomdml", "oasis-full"} {
		opt := train.ShardOptions{Learner: name, Dims: traintest.DenseDims, Shards: 1, Rounds: 1}
		seq, err := train.NewTrainer(opt)
		if err != nil {
			t.Fatal(err)
		}
		first := seq.State()
		for _, ft := range feats {
			if _, err := seq.Step(ft); err != nil {
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
func checkScaledFn(r train.DenseRow) error {
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
