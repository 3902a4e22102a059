// Package evaluatebeam evaluates retrieval with each model: every labelled
// image queries an index of all images (itself excluded) and the rankings
// are scored with the metrics of package evaluate.
package evaluatebeam

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/sparse"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*evalFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.ReportRow)(nil)).Elem())
}

// Options configures the evaluation.
type Options struct {
	// MaxQueries caps the number of queries (0: every labelled image). The
	// queries kept are those with the smallest hash of (seed, id), so the
	// same subset is used for every model and every re-run.
	MaxQueries int
	Seed       uint64
}

// Evaluate scores every model of models (PCollection<train.Model>) by
// retrieval over bows (PCollection<formats.BoW>, a side input: each model's
// evaluation holds the whole collection, which is the point of an index)
// and returns one formats.ReportRow per model.
func Evaluate(s beam.Scope, bows, models beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("evaluate.Evaluate")
	return beam.ParDo(s, &evalFn{Opt: opt}, models, beam.SideInput{Input: bows})
}

type evalFn struct{ Opt Options }

func (f *evalFn) ProcessElement(ctx context.Context, m train.Model, side func(*formats.BoW) bool) (formats.ReportRow, error) {
	var docs []formats.BoW
	var b formats.BoW
	for side(&b) {
		docs = append(docs, b)
		b = formats.BoW{}
	}
	row, err := Run(docs, m, f.Opt)
	if err != nil {
		return row, err
	}
	log.Infof(ctx, "evaluate: %s: mAP %.4f, P@10 %.4f, NDCG@10 %.4f over %d queries; sparsity %.3f; %d postings",
		row.Method, row.MAP, row.PrecisionAt10, row.NDCGAt10, row.Queries, row.Sparsity, row.IndexPostings)
	return row, nil
}

// Run evaluates model m over docs: it builds the index under m's weights
// and lets each selected labelled doc query it.
func Run(docs []formats.BoW, m train.Model, opt Options) (formats.ReportRow, error) {
	sort.Slice(docs, func(i, j int) bool { return docs[i].ImageID < docs[j].ImageID })
	ids := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	vocab := len(m.Weights)
	labelCount := map[string]int{}
	for i, d := range docs {
		ids[i] = d.ImageID
		vecs[i] = sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
		if n := len(d.WordIDs); m.Weights == nil && n > 0 && int(d.WordIDs[n-1]) >= vocab {
			vocab = int(d.WordIDs[n-1]) + 1
		}
		if d.Label != "" {
			labelCount[d.Label]++
		}
	}
	row := formats.ReportRow{Method: m.Learner, Relevance: "label", Vocabulary: int64(vocab), TrainSeconds: m.Seconds}
	if m.Weights != nil {
		row.Sparsity = learners.Sparsity(m.Weights)
	}
	start := time.Now()
	ix, err := index.Build(ids, vecs, m.Weights, vocab)
	if err != nil {
		return row, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	row.IndexSeconds = time.Since(start).Seconds()
	row.IndexPostings = int64(ix.NNZ())

	queries := selectQueries(docs, labelCount, opt)
	start = time.Now()
	srch := ix.NewSearcher()
	var sum evaluate.Summary
	rel := make([]bool, 0, len(docs))
	gains := make([]float64, 0, len(docs))
	for _, qi := range queries {
		q := docs[qi]
		hits := srch.Search(vecs[qi], ix.Docs(), qi)
		rel, gains = rel[:0], gains[:0]
		for _, h := range hits {
			r := docs[h.Doc].Label == q.Label
			rel = append(rel, r)
			g := 0.0
			if r {
				g = 1
			}
			gains = append(gains, g)
		}
		total := labelCount[q.Label] - 1
		ideal := make([]float64, total)
		for i := range ideal {
			ideal[i] = 1
		}
		sum.Add(evaluate.AveragePrecision(rel, total), evaluate.PrecisionAt(rel, 10), evaluate.NDCGAt(gains, ideal, 10))
	}
	row.QuerySeconds = time.Since(start).Seconds()
	mean := sum.Mean()
	row.Queries = int64(mean.Queries)
	row.MAP, row.PrecisionAt10, row.NDCGAt10 = mean.MAP, mean.PrecisionAt10, mean.NDCGAt10
	return row, nil
}

// selectQueries selects the query docs: labelled, with at least one other relevant doc,
// capped by opt.MaxQueries.
func selectQueries(docs []formats.BoW, labelCount map[string]int, opt Options) []int {
	var qs []int
	for i, d := range docs {
		if d.Label != "" && labelCount[d.Label] > 1 {
			qs = append(qs, i)
		}
	}
	if opt.MaxQueries > 0 && len(qs) > opt.MaxQueries {
		key := func(i int) uint64 {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%s", opt.Seed, docs[i].ImageID)
			return h.Sum64()
		}
		sort.Slice(qs, func(a, b int) bool { return key(qs[a]) < key(qs[b]) })
		qs = qs[:opt.MaxQueries]
		sort.Ints(qs)
	}
	return qs
}
