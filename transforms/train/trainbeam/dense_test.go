package trainbeam

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterFunction(checkScaledFn)
}

// TestDenseRowsScale: DenseRowsMoments drops the image without global
// features and scales the others (checkScaledFn).
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
	rows, _ := DenseRowsMoments(s, beam.CreateList(s, in))
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
