package evaluatebeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*denseEvalFn)(nil)).Elem())
}

// EvaluateDense scores every dense model of models (PCollection<learners.Model>
// with Dims set) by brute-force retrieval over rows
// (PCollection<train.DenseRow>, a side input) and returns one
// formats.ReportRow per model (evaluate.Dense).
func EvaluateDense(s beam.Scope, rows, models beam.PCollection, opt evaluate.Options) beam.PCollection {
	s = s.Scope("evaluate.EvaluateDense")
	return beam.ParDo(s, &denseEvalFn{Opt: opt}, models, beam.SideInput{Input: rows})
}

type denseEvalFn struct{ Opt evaluate.Options }

func (f *denseEvalFn) ProcessElement(ctx context.Context, m learners.Model, side func(*train.DenseRow) bool) (formats.ReportRow, error) {
	var rows []train.DenseRow
	var r train.DenseRow
	for side(&r) {
		rows = append(rows, r)
		r = train.DenseRow{}
	}
	row, err := evaluate.Dense(rows, m, f.Opt)
	if err != nil {
		return row, err
	}
	log.Infof(ctx, "evaluate: %s (global features): mAP %.4f, P@10 %.4f, NDCG@10 %.4f over %d queries",
		row.Method, row.MAP, row.PrecisionAt10, row.NDCGAt10, row.Queries)
	return row, nil
}
