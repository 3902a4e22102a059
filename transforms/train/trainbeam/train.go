// Package trainbeam is the Beam wrapper of the similarity learners in
// learners/: it splits the bags of words into training groups (Groups),
// and trains online learners over each group's triplets in triplet order,
// a group per shard, with periodic parameter averaging (TrainGroupsFrom
// for bags of words, ShardedDenseGroups for dense global features); batch
// learners of global features train on a bounded sample of images
// (BatchParts).
package trainbeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*renameFn)(nil)).Elem())
	beam.RegisterFunction(modelRowsFn)
	beam.RegisterFunction(tensorRowsFn)
}

func drop(ctx context.Context, c beam.Counter, t formats.Triplet, role, id string) {
	c.Inc(ctx, 1)
	log.Warnf(ctx, "train: triplet %d: %s %s has no bag of words or global features; dropped", t.Seq, role, id)
}

// ModelRows flattens models (PCollection<learners.Model>) into their Parquet rows,
// one per non-zero weight.
func ModelRows(s beam.Scope, models beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("train.ModelRows"), modelRowsFn, models)
}

func modelRowsFn(m learners.Model, emit func(formats.ModelWeight)) {
	for i, w := range m.Weights {
		if w != 0 {
			emit(formats.ModelWeight{Learner: m.Learner, Params: m.Params, WordID: uint32(i), Weight: w})
		}
	}
}

// Rename gives the models (PCollection<learners.Model>) another name, for
// a learner trained more than once with other settings (a sweep): the
// name the report, the model file and the index show.
func Rename(s beam.Scope, models beam.PCollection, name string) beam.PCollection {
	return beam.ParDo(s.Scope("train.Rename"), &renameFn{Name: name}, models)
}

type renameFn struct{ Name string }

func (f *renameFn) ProcessElement(m learners.Model) learners.Model {
	m.Learner = f.Name
	return m
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
