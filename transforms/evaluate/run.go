package evaluate

import (
	"fmt"
	"hash/fnv"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/train"
)

// Options configures the evaluation.
type Options struct {
	// MaxQueries caps the number of queries (0: every labelled image). Each
	// query ranks the whole collection, so at a million images a full
	// evaluation would take a million full rankings: cap it there. The
	// queries kept are those with the smallest hash of (seed, id), so the
	// same subset is used for every model and every re-run.
	MaxQueries int
	Seed       uint64
	// Depth is the rank depth of the metrics of the sharded evaluation
	// (Ranking): each query's first Depth results count, and a relevant
	// image ranked deeper adds 0 to its average precision. 0 is the whole
	// ranking up to FullDepthImages images and DefaultDepth beyond, where
	// full rankings of every query would cost queries × images.
	Depth int
	// ShardQueries is the number of queries one shard of the sharded
	// evaluation searches with (0: DefaultShardQueries); ChunkImages the
	// number of images it indexes at a time (0: DefaultChunkImages). A
	// shard holds ShardQueries × depth hits and one chunk's index.
	ShardQueries, ChunkImages int
}

// Defaults of Options' sharded evaluation.
const (
	FullDepthImages     = 20_000
	DefaultDepth        = 1000
	DefaultShardQueries = 1000
	DefaultChunkImages  = 50_000
)

// DepthFor returns the rank depth of a collection of n images (0: full).
func (o Options) DepthFor(n int64) int {
	switch {
	case o.Depth > 0:
		return o.Depth
	case n <= FullDepthImages:
		return 0
	}
	return DefaultDepth
}

// BoW evaluates the bag-of-words model m (a learned diagonal similarity or
// the TF-IDF baseline) over docs: it builds the inverted index under m's
// weights and lets each selected labelled doc query it, itself excluded.
// docs is sorted by image id in place.
func BoW(docs []formats.BoW, m learners.Model, opt Options) (formats.ReportRow, error) {
	sort.Slice(docs, func(i, j int) bool { return docs[i].ImageID < docs[j].ImageID })
	ids := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	weights, err := m.Diagonal()
	if err != nil {
		return formats.ReportRow{}, fmt.Errorf("evaluate: %w", err)
	}
	vocab := len(weights)
	labelCount := map[string]int{}
	for i, d := range docs {
		ids[i] = d.ImageID
		vecs[i] = sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
		if n := len(d.WordIDs); weights == nil && n > 0 && int(d.WordIDs[n-1]) >= vocab {
			vocab = int(d.WordIDs[n-1]) + 1
		}
		if d.Label != "" {
			labelCount[d.Label]++
		}
	}
	row := formats.ReportRow{Method: m.Learner, Input: "bow", Relevance: "label", Vocabulary: int64(vocab), TrainSeconds: m.Seconds}
	if weights != nil {
		row.Sparsity = learners.Sparsity(weights)
	}
	start := time.Now()
	ix, err := index.Build(ids, vecs, weights, vocab)
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
				per[i].ap = AveragePrecision(rel, total)
				per[i].p10 = PrecisionAt(rel, 10)
				per[i].ndcg10 = NDCGAt(gains, ideal, 10)
			}
		}()
	}
	wg.Wait()
	var sum Summary
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
		key := func(i int) uint64 { return queryKey(opt.Seed, ids[i]) }
		sort.Slice(qs, func(a, b int) bool { return key(qs[a]) < key(qs[b]) })
		qs = qs[:opt.MaxQueries]
		sort.Ints(qs)
	}
	return qs
}

func queryKey(seed uint64, id string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, id)
	return h.Sum64()
}

// Dense evaluates the model m of dense global features (learned, or the
// Euclidean baseline) over rows: it restores the model, embeds every image
// as an item (the "index" time of the report), and lets each selected
// labelled image query the rest by brute force under the model's metric.
// There is no inverted index for dense embeddings: each query is compared
// with every image, O(n·e) for n images of embedding length e, which
// Options.MaxQueries bounds. rows is sorted by image id in place.
func Dense(rows []train.DenseRow, m learners.Model, opt Options) (formats.ReportRow, error) {
	row := formats.ReportRow{Method: m.Learner, Input: "global", Relevance: "label", TrainSeconds: m.Seconds}
	model, err := learners.RestoreDense(m)
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
	brute, err := NewBrute(model.Metric(), items)
	if err != nil {
		return row, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	row.IndexSeconds = time.Since(start).Seconds()

	queries := selectQueries(ids, labels, labelCount, opt)
	score(&row, labels, labelCount, queries, func() func(qi int, hits []int) []int {
		var x, q []float64
		var sc BruteScratch
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
