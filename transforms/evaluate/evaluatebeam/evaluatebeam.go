// Package evaluatebeam is the Beam wrapper of package evaluate: it hands
// each model, with the collection it ranks as a side input, to
// evaluate.BoW or evaluate.Dense and emits the report row.
package evaluatebeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*evalFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.ReportRow)(nil)).Elem())
}

// Evaluate scores every model of models (PCollection<learners.Model>) by
// retrieval over bows (PCollection<formats.BoW>, a side input: each model's
// evaluation holds the whole collection, which is the point of an index)
// and returns one formats.ReportRow per model.
func Evaluate(s beam.Scope, bows, models beam.PCollection, opt evaluate.Options) beam.PCollection {
	s = s.Scope("evaluate.Evaluate")
	return beam.ParDo(s, &evalFn{Opt: opt}, models, beam.SideInput{Input: bows})
}

type evalFn struct{ Opt evaluate.Options }

func (f *evalFn) ProcessElement(ctx context.Context, m learners.Model, side func(*formats.BoW) bool) (formats.ReportRow, error) {
	var docs []formats.BoW
	var b formats.BoW
	for side(&b) {
		docs = append(docs, b)
		b = formats.BoW{}
	}
	row, err := evaluate.BoW(docs, m, f.Opt)
	if err != nil {
		return row, err
	}
	log.Infof(ctx, "evaluate: %s: mAP %.4f, P@10 %.4f, NDCG@10 %.4f over %d queries; sparsity %.3f; %d postings",
		row.Method, row.MAP, row.PrecisionAt10, row.NDCGAt10, row.Queries, row.Sparsity, row.IndexPostings)
	return row, nil
}
