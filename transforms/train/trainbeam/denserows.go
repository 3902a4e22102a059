package trainbeam

import (
	"context"
	"fmt"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/train"
)

// globalColumns are the columns of a features file that the dense learners
// and their evaluation read (matched by name): a features part's keypoints
// and descriptors are not decoded.
type globalColumns struct {
	ImageID string    `parquet:"image_id"`
	Label   string    `parquet:"label"`
	Tags    []string  `parquet:"tags,list"`
	Colour  []float32 `parquet:"colour,list"`
	Edge    []float32 `parquet:"edge,list"`
	Gabor   []float32 `parquet:"gabor,list"`
	LBP     []float32 `parquet:"lbp,list"`
	GIST    []float32 `parquet:"gist,list"`
}

// ReadDense calls fn with the dense row of every image of the features
// part at path that has global features — its modalities concatenated
// (global.Concat) and scaled by sc — and returns the number of images
// without them (no global features, or a modality of the wrong length),
// which the dense learners and their evaluation leave out. With sc nil
// the row is unscaled and its X is reused by the next call: fn must copy
// it to keep it.
func ReadDense(ctx context.Context, path string, sc *global.Scaler, fn func(r train.DenseRow) error) (missing int, err error) {
	var x []float32
	err = fileio.ReadEach(ctx, path, func(c *globalColumns) error {
		var err error
		if x, err = global.Concat(x[:0], c.Colour, c.Edge, c.Gabor, c.LBP, c.GIST); err != nil {
			missing++
			return nil
		}
		r := train.DenseRow{ImageID: c.ImageID, Label: c.Label, Tags: c.Tags, X: x}
		if sc != nil {
			r.X = sc.Apply(nil, x)
		}
		return fn(r)
	})
	return missing, err
}

// ScalerOf returns the scaler of the moments side input (the single
// element of DenseMoments).
func ScalerOf(moments func(*global.Moments) bool) (*global.Scaler, error) {
	var m global.Moments
	if !moments(&m) {
		return nil, fmt.Errorf("no moments of the global features")
	}
	sc, err := global.NewScaler(m, global.Dims)
	if err != nil {
		return nil, err
	}
	return &sc, nil
}
