package trainbeam

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterFunction(checkScaledPartFn)
}

// TestDenseMomentsScale: the scaler of DenseMoments' moments (ScalerOf)
// scales the rows ReadDense reads (checkScaledFn), and ReadDense counts
// the image without global features.
func TestDenseMomentsScale(t *testing.T) {
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
	path := filepath.Join(t.TempDir(), formats.ShardName("features", 0, 1))
	if err := fileio.WriteFile(context.Background(), path, in); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	parts := beam.Create(s, formats.Part{Name: "features", Part: 0, Parts: 1, Path: path, Rows: int64(len(in))})
	beam.ParDo0(s, checkScaledPartFn, parts, beam.SideInput{Input: DenseMoments(s, parts)})
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// checkScaledPartFn reads the part of TestDenseMomentsScale scaled by the
// moments, checks each row (checkScaledFn) and that two have global
// features and one has none.
func checkScaledPartFn(ctx context.Context, p formats.Part, moments func(*global.Moments) bool) error {
	sc, err := ScalerOf(moments)
	if err != nil {
		return err
	}
	n := 0
	missing, err := ReadDense(ctx, p.Path, sc, func(r train.DenseRow) error {
		n++
		return checkScaledFn(r)
	})
	if err != nil {
		return err
	}
	if n != 2 || missing != 1 {
		return fmt.Errorf("%d rows, %d without global features; want 2 and 1", n, missing)
	}
	return nil
}

// checkScaledFn checks a row of TestDenseMomentsScale: with two images per
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
