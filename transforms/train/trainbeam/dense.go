package trainbeam

import (
	"context"
	"fmt"
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
		(*train.DenseRow)(nil), (*global.Moments)(nil), (*global.Scaler)(nil), (*train.Sample)(nil),
		(*concatFn)(nil), (*momentsFn)(nil), (*scaleFn)(nil), (*batchFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(tensorRowsFn)
}

type concatFn struct{ missing beam.Counter }

func (f *concatFn) Setup() { f.missing = beam.NewCounter("train", "images_without_global_features") }

func (f *concatFn) ProcessElement(ctx context.Context, ft formats.Features, emit func(train.DenseRow)) {
	x, err := global.Concat(nil, ft.Colour, ft.Edge, ft.Gabor, ft.LBP, ft.GIST)
	if err != nil {
		f.missing.Inc(ctx, 1)
		if len(ft.Colour)+len(ft.GIST) > 0 { // a run without global features is not worth a line per image
			log.Warnf(ctx, "train: image %s: %v; left out of the dense learners", ft.ImageID, err)
		}
		return
	}
	emit(train.DenseRow{ImageID: ft.ImageID, Label: ft.Label, Tags: ft.Tags, X: x})
}

type momentsFn struct{}

func (momentsFn) CreateAccumulator() global.Moments { return global.Moments{} }
func (momentsFn) AddInput(m global.Moments, r train.DenseRow) global.Moments {
	m.Add(r.X)
	return m
}
func (momentsFn) MergeAccumulators(a, b global.Moments) global.Moments {
	a.Merge(b)
	return a
}
func (momentsFn) ExtractOutput(m global.Moments) global.Moments { return m }

type scaleFn struct {
	Dims []int

	// scaler is derived from the side input on the first element; the
	// side input is the one global-window value of this stage, so an
	// instance reused across bundles may keep it.
	scaler *global.Scaler
}

func (f *scaleFn) ProcessElement(r train.DenseRow, moments func(*global.Moments) bool, emit func(train.DenseRow)) error {
	if f.scaler == nil {
		var m global.Moments
		moments(&m)
		sc, err := global.NewScaler(m, f.Dims)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		f.scaler = &sc
	}
	r.X = f.scaler.Apply(nil, r.X)
	emit(r)
	return nil
}

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
