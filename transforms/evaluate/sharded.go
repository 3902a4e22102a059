package evaluate

import (
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
)

// Query is one query of a sharded evaluation: a labelled image of the
// collection and its bag of words.
type Query struct {
	ID, Label string
	// Held says the image is held out: no learner trained on it.
	Held bool
	Vec  sparse.Vector
}

// Hit is one ranked document of a sharded ranking.
type Hit struct {
	Score float64
	ID    string
	Rel   bool // the document has the query's label
}

// before reports whether a ranks before b: by score descending, ties by id
// ascending — the order of index.Searcher over documents sorted by id, so a
// ranking merged from chunks is the ranking of the whole collection.
func before(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// Ranking ranks the whole collection for a set of queries, one chunk of
// documents at a time: it keeps each query's best Depth hits so far, so
// its memory is bounded by queries × Depth, not by the collection, and
// the chunks may come in any order. Depth ≤ 0 keeps every hit (the full
// ranking average precision is defined on; bounded by the collection).
//
// A ranking is complete once the chunks have brought every image of the
// collection: the chunk that completes it scores each query as soon as its
// search of that chunk is merged, and drops the query's hits. So a
// collection of one chunk never holds more than one ranking per goroutine,
// whatever the number of queries: full-depth rankings of every query at
// once (queries × images hits) were what a worker ran out of memory on.
type Ranking struct {
	depth    int
	images   int64          // the collection's size
	seen     int64          // images brought by the chunks so far
	relevant map[string]int // each label's images in the collection
	queries  []Query
	hits     [][]Hit // each query's best hits so far; nil once scored
	scores   []QueryScore
	seconds  []float64

	// IndexSeconds and Postings sum the index builds of the chunks.
	IndexSeconds float64
	Postings     int64
}

// NewRanking returns an empty ranking for queries, depth hits deep, over
// a collection of images images in which relevant counts the images of
// each label (the query itself included).
func NewRanking(queries []Query, depth int, images int64, relevant map[string]int) *Ranking {
	return &Ranking{depth: depth, images: images, relevant: relevant, queries: queries,
		hits: make([][]Hit, len(queries)), scores: make([]QueryScore, len(queries)), seconds: make([]float64, len(queries))}
}

// chunk records a chunk of n images and reports whether it completes the
// collection; more images than the collection holds is an error (the
// chunks and the label counts were read from different data).
func (r *Ranking) chunk(n int) (last bool, err error) {
	if r.seen+int64(n) > r.images {
		return false, fmt.Errorf("evaluate: %d images ranked, the collection has %d", r.seen+int64(n), r.images)
	}
	r.seen += int64(n)
	return r.seen == r.images, nil
}

// take merges part, query qi's ranking of one chunk, into its hits; in
// the chunk that completes the collection it scores the query and drops
// its hits instead of keeping them.
func (r *Ranking) take(qi int, part []Hit, last bool, sc *scorer) {
	if !last {
		r.hits[qi] = merge(r.hits[qi], part, r.depth)
		return
	}
	all := part
	if len(r.hits[qi]) > 0 {
		all = merge(r.hits[qi], part, r.depth)
	} else if r.depth > 0 && len(all) > r.depth {
		all = all[:r.depth]
	}
	r.hits[qi] = nil
	r.scores[qi] = sc.scoreHits(r.queries[qi], all, r.relevant[r.queries[qi].Label]-1)
}

// Add ranks the documents docs (one chunk of the collection; sorted by
// image id in place) for every query under the diagonal weights w (nil:
// TF-IDF, w ≡ 1) over a vocabulary of vocab words, and merges them into
// each query's hits. A query's own image is left out.
func (r *Ranking) Add(docs []formats.BoW, w []float32, vocab int) error {
	last, err := r.chunk(len(docs))
	if err != nil {
		return err
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].ImageID < docs[j].ImageID })
	ids := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	labels := make([]string, len(docs))
	pos := make(map[string]int, len(docs))
	for i, d := range docs {
		ids[i], labels[i] = d.ImageID, d.Label
		vecs[i] = sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
		pos[d.ImageID] = i
	}
	start := time.Now()
	ix, err := index.Build(ids, vecs, w, vocab)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	r.IndexSeconds += time.Since(start).Seconds()
	r.Postings += int64(ix.NNZ())
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srch := ix.NewSearcher()
			var part []Hit
			var sc scorer
			for {
				qi := int(next.Add(1) - 1)
				if qi >= len(r.queries) {
					return
				}
				q := r.queries[qi]
				exclude := -1
				if i, ok := pos[q.ID]; ok {
					exclude = i
				}
				start := time.Now()
				part = part[:0]
				for _, h := range srch.Search(q.Vec, r.depth, exclude) {
					part = append(part, Hit{Score: h.Score, ID: h.ID, Rel: q.Label != "" && labels[h.Doc] == q.Label})
				}
				r.seconds[qi] += time.Since(start).Seconds()
				r.take(qi, part, last, &sc)
			}
		}()
	}
	wg.Wait()
	return nil
}

// merge merges two rankings into a new one of at most depth hits (every
// hit if depth ≤ 0).
func merge(a, b []Hit, depth int) []Hit {
	n := len(a) + len(b)
	if depth > 0 {
		n = min(n, depth)
	}
	out := make([]Hit, 0, n)
	i, j := 0, 0
	for len(out) < n {
		if j == len(b) || (i < len(a) && before(a[i], b[j])) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

// QueryScore is one query's metrics and the time its searches took.
type QueryScore struct {
	ID, Label string
	// Held says the query is a held-out image (no learner trained on it),
	// not a training image.
	Held            bool
	AP, P10, NDCG10 float64
	// PR is the interpolated precision at the RecallLevels recall levels.
	PR      []float64
	Seconds float64
}

// scorer scores rankings, reusing its buffers from query to query.
type scorer struct {
	rel          []bool
	gains, ideal []float64
}

// score returns the metrics of query q's ranking rel (rel[i]: the i-th
// result has q's label) among total relevant images.
func (sc *scorer) score(q Query, rel []bool, total int) QueryScore {
	sc.gains, sc.ideal = sc.gains[:0], sc.ideal[:0]
	for _, r := range rel {
		sc.gains = append(sc.gains, b2f(r))
	}
	for range total {
		sc.ideal = append(sc.ideal, 1)
	}
	return QueryScore{ID: q.ID, Label: q.Label, Held: q.Held, AP: AveragePrecision(rel, total), P10: PrecisionAt(rel, 10),
		NDCG10: NDCGAt(sc.gains, sc.ideal, 10), PR: InterpolatedPrecision(nil, rel, total)}
}

// scoreHits is score of a ranking of hits.
func (sc *scorer) scoreHits(q Query, hits []Hit, total int) QueryScore {
	sc.rel = sc.rel[:0]
	for _, h := range hits {
		sc.rel = append(sc.rel, h.Rel)
	}
	return sc.score(q, sc.rel, total)
}

// Scores returns every query's metrics over its ranking of the whole
// collection, and an error if the chunks added did not bring all of it.
func (r *Ranking) Scores() ([]QueryScore, error) {
	if r.seen != r.images {
		return nil, fmt.Errorf("evaluate: %d of the collection's %d images ranked", r.seen, r.images)
	}
	out := make([]QueryScore, len(r.queries))
	var sc scorer
	for qi, q := range r.queries {
		if r.images == 0 {
			// No chunk came to score it: an empty ranking.
			r.scores[qi] = sc.scoreHits(q, nil, r.relevant[q.Label]-1)
		}
		out[qi] = r.scores[qi]
		out[qi].Seconds = r.seconds[qi]
	}
	return out, nil
}

// IsQuery reports whether the image id with label may be a query: it is
// labelled and its label has another image.
func IsQuery(label string, relevant map[string]int) bool {
	return label != "" && relevant[label] > 1
}

// QueryKey orders the candidate queries: with Options.MaxQueries set the
// queries kept are those of smallest key.
func QueryKey(seed uint64, id string) uint64 {
	return queryKey(seed, id)
}
