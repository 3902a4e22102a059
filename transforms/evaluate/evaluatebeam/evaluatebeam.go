// Package evaluatebeam evaluates retrieval with each model: every labelled
// image queries an index of all images (itself excluded) and the rankings
// are scored with the metrics of package evaluate.
package evaluatebeam

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/train/trainbeam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*evalFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.ReportRow)(nil)).Elem())
}

// Options configures the evaluation.
type Options struct {
	// MaxQueries caps the number of queries (0: every labelled image). Each
	// query ranks the whole collection, so at a million images a full
	// evaluation would take a million full rankings: cap it there. The
	// queries kept are those with the smallest hash of (seed, id), so the
	// same subset is used for every model and every re-run.
	MaxQueries int
	Seed       uint64
}

// Evaluate scores every model of models (PCollection<trainbeam.Model>) by
// retrieval over bows (PCollection<formats.BoW>, a side input: each model's
// evaluation holds the whole collection, which is the point of an index)
// and returns one formats.ReportRow per model.
func Evaluate(s beam.Scope, bows, models beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("evaluate.Evaluate")
	return beam.ParDo(s, &evalFn{Opt: opt}, models, beam.SideInput{Input: bows})
}

type evalFn struct{ Opt Options }

func (f *evalFn) ProcessElement(ctx context.Context, m trainbeam.Model, side func(*formats.BoW) bool) (formats.ReportRow, error) {
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
func Run(docs []formats.BoW, m trainbeam.Model, opt Options) (formats.ReportRow, error) {
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
	row := formats.ReportRow{Method: m.Learner, Input: "bow", Relevance: "label", Vocabulary: int64(vocab), TrainSeconds: m.Seconds}
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

	labels := make([]string, len(docs))
	for i, d := range docs {
		labels[i] = d.Label
	}
	queries := selectQueries(ids, labels, labelCount, opt)
	// Each goroutine has its own searcher.
	score(&row, labels, labelCount, queries, func() func(qi int, hits []int) []int {
		srch := ix.NewSearcher()
		return func(qi int, hits []int) []int {
			hits = hits[:0]
			for _, h := range srch.Search(vecs[qi], ix.Docs(), qi) {
				hits = append(hits, h.Doc)
			}
			return hits
		}
	})
	return row, nil
}

// score runs the queries, spread over every core with one search function
// each (made by newSearch), and fills row's metrics and query time. A
// search returns the ranked doc indices for query qi, qi itself left out;
// sums run in query order so the means do not depend on timing.
func score(row *formats.ReportRow, labels []string, labelCount map[string]int, queries []int, newSearch func() func(qi int, hits []int) []int) {
	per := make([]queryScore, len(queries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			search := newSearch()
			var hits []int
			var rel []bool
			var gains, ideal []float64
			for {
				i := int(next.Add(1) - 1)
				if i >= len(queries) {
					return
				}
				qi := queries[i]
				start := time.Now()
				hits = search(qi, hits)
				per[i].seconds = time.Since(start).Seconds()
				rel, gains = rel[:0], gains[:0]
				for _, h := range hits {
					r := labels[h] == labels[qi]
					rel = append(rel, r)
					gains = append(gains, b2f(r))
				}
				total := labelCount[labels[qi]] - 1
				ideal = ideal[:0]
				for range total {
					ideal = append(ideal, 1)
				}
				per[i].ap = evaluate.AveragePrecision(rel, total)
				per[i].p10 = evaluate.PrecisionAt(rel, 10)
				per[i].ndcg10 = evaluate.NDCGAt(gains, ideal, 10)
			}
		}()
	}
	wg.Wait()
	var sum evaluate.Summary
	for _, q := range per {
		sum.Add(q.ap, q.p10, q.ndcg10)
		row.QuerySeconds += q.seconds
	}
	mean := sum.Mean()
	row.Queries = int64(mean.Queries)
	row.MAP, row.PrecisionAt10, row.NDCGAt10 = mean.MAP, mean.PrecisionAt10, mean.NDCGAt10
}

// queryScore is one query's metrics and the time its search took.
type queryScore struct {
	ap, p10, ndcg10, seconds float64
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// selectQueries selects the query docs: labelled, with at least one other
// relevant doc, capped by opt.MaxQueries.
func selectQueries(ids, labels []string, labelCount map[string]int, opt Options) []int {
	var qs []int
	for i, l := range labels {
		if l != "" && labelCount[l] > 1 {
			qs = append(qs, i)
		}
	}
	if opt.MaxQueries > 0 && len(qs) > opt.MaxQueries {
		key := func(i int) uint64 {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%s", opt.Seed, ids[i])
			return h.Sum64()
		}
		sort.Slice(qs, func(a, b int) bool { return key(qs[a]) < key(qs[b]) })
		qs = qs[:opt.MaxQueries]
		sort.Ints(qs)
	}
	return qs
}
