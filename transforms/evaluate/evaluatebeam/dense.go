package evaluatebeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*denseEvalFn)(nil)).Elem())
}

// EvaluateDense scores every dense model of models (PCollection<learners.Model>
// with Dims set) by brute-force retrieval over rows
// (PCollection<train.DenseRow>, a side input), with the held-out queries
// of the split (PCollection<split.Cut>), and returns each model's report
// rows (PCollection<formats.ReportRow>, evaluate.Dense) and per-query
// scores (PCollection<evaluate.Scores>, for Compare).
func EvaluateDense(s beam.Scope, rows, models, cut beam.PCollection, opt evaluate.Options) (reportRows, scores beam.PCollection) {
	s = s.Scope("evaluate.EvaluateDense")
	return beam.ParDo2(s, &denseEvalFn{Opt: opt}, models, beam.SideInput{Input: rows}, beam.SideInput{Input: cut})
}

type denseEvalFn struct{ Opt evaluate.Options }

func (f *denseEvalFn) ProcessElement(ctx context.Context, m learners.Model, side func(*train.DenseRow) bool, cut split.Cut,
	emitRow func(formats.ReportRow), emitScores func(evaluate.Scores)) error {
	var rows []train.DenseRow
	var r train.DenseRow
	for side(&r) {
		rows = append(rows, r)
		r = train.DenseRow{}
	}
	out, scores, err := evaluate.Dense(rows, m, cut, f.Opt)
	if err != nil {
		return err
	}
	for _, row := range out {
		log.Infof(ctx, "evaluate: %s (global features): %s queries: mAP %.4f [%.4f, %.4f], P@10 %.4f, NDCG@10 %.4f over %d queries",
			row.Method, row.Split, row.MAP, row.MAPLow, row.MAPHigh, row.PrecisionAt10, row.NDCGAt10, row.Queries)
		emitRow(row)
	}
	emitScores(lightScores(m.Learner, "global", scores))
	return nil
}
