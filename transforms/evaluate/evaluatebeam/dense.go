package evaluatebeam

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/train/trainbeam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*denseEvalFn)(nil)).Elem())
}

// EvaluateDense scores every dense model of models (PCollection<trainbeam.Model>
// with Dims set) by brute-force retrieval over rows
// (PCollection<trainbeam.DenseRow>, a side input) and returns one
// formats.ReportRow per model. There is no inverted index for dense
// embeddings: each query is compared with every image, O(n·e) for n images
// of embedding length e, which Options.MaxQueries bounds.
func EvaluateDense(s beam.Scope, rows, models beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("evaluate.EvaluateDense")
	return beam.ParDo(s, &denseEvalFn{Opt: opt}, models, beam.SideInput{Input: rows})
}

type denseEvalFn struct{ Opt Options }

func (f *denseEvalFn) ProcessElement(ctx context.Context, m trainbeam.Model, side func(*trainbeam.DenseRow) bool) (formats.ReportRow, error) {
	var rows []trainbeam.DenseRow
	var r trainbeam.DenseRow
	for side(&r) {
		rows = append(rows, r)
		r = trainbeam.DenseRow{}
	}
	row, err := RunDense(rows, m, f.Opt)
	if err != nil {
		return row, err
	}
	log.Infof(ctx, "evaluate: %s (global features): mAP %.4f, P@10 %.4f, NDCG@10 %.4f over %d queries",
		row.Method, row.MAP, row.PrecisionAt10, row.NDCGAt10, row.Queries)
	return row, nil
}

// RunDense evaluates the dense model m over rows: it restores the model,
// embeds every image as an item (the "index" time of the report), and
// lets each selected labelled image query the rest by brute force.
func RunDense(rows []trainbeam.DenseRow, m trainbeam.Model, opt Options) (formats.ReportRow, error) {
	row := formats.ReportRow{Method: m.Learner, Input: "global", Relevance: "label", TrainSeconds: m.Seconds}
	model, err := trainbeam.Restore(m)
	if err != nil {
		return row, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ImageID < rows[j].ImageID })
	ids := make([]string, len(rows))
	labels := make([]string, len(rows))
	labelCount := map[string]int{}
	for i, r := range rows {
		ids[i], labels[i] = r.ImageID, r.Label
		if r.Label != "" {
			labelCount[r.Label]++
		}
		if want := len(rows[0].X); len(r.X) != want {
			return row, fmt.Errorf("evaluate %s: image %s has %d features, image %s has %d", m.Learner, r.ImageID, len(r.X), rows[0].ImageID, want)
		}
	}
	if len(rows) > 0 {
		row.Vocabulary = int64(len(rows[0].X))
	}

	start := time.Now()
	items := make([][]float64, len(rows))
	parallel(len(rows), func(i int, buf []float64) []float64 {
		buf = widen(buf, rows[i].X)
		items[i] = model.Item(nil, buf)
		return buf
	})
	brute, err := evaluate.NewBrute(model.Metric(), items)
	if err != nil {
		return row, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	row.IndexSeconds = time.Since(start).Seconds()

	queries := selectQueries(ids, labels, labelCount, opt)
	score(&row, labels, labelCount, queries, func() func(qi int, hits []int) []int {
		var x, q []float64
		var sc evaluate.BruteScratch
		return func(qi int, hits []int) []int {
			x = widen(x, rows[qi].X)
			q = model.Query(q, x)
			return brute.Rank(hits, q, qi, &sc)
		}
	})
	return row, nil
}

// parallel runs f(i) for i in [0, n) over every core; each goroutine
// threads its own buffer through its calls.
func parallel(n int, f func(i int, buf []float64) []float64) {
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []float64
			for i := w; i < n; i += workers {
				buf = f(i, buf)
			}
		}()
	}
	wg.Wait()
}

func widen(dst []float64, x []float32) []float64 {
	dst = dst[:0]
	for _, v := range x {
		dst = append(dst, float64(v))
	}
	return dst
}
