package trainbeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	for _, t := range []any{
		(*global.Moments)(nil), (*train.Sample)(nil), (*batchFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(tensorRowsFn)
}

// batchFn fits a batch learner on the merged sample (BatchParts).
type batchFn struct{ Opt train.BatchOptions }

func (f *batchFn) ProcessElement(ctx context.Context, smp train.Sample) (learners.Model, error) {
	m, err := train.Fit(f.Opt, smp.Rows)
	if err != nil {
		return learners.Model{}, err
	}
	log.Infof(ctx, "train: %s on %d images, %.2fs", m.Learner, len(smp.Rows), m.Seconds)
	return m, nil
}

// TensorRows flattens dense models (PCollection<learners.Model> with Dims set) into
// their Parquet rows, one per state vector; bag-of-words models give none.
func TensorRows(s beam.Scope, models beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("train.TensorRows"), tensorRowsFn, models)
}

func tensorRowsFn(m learners.Model, emit func(formats.ModelTensor)) {
	if m.Dims == nil {
		return
	}
	dims := make([]int64, len(m.Dims))
	for i, d := range m.Dims {
		dims[i] = int64(d)
	}
	for i, v := range m.State.Vectors {
		emit(formats.ModelTensor{Learner: m.Learner, Params: m.Params, Dims: dims, Steps: m.State.Steps, Index: int32(i), Values: v})
	}
}
