package evaluate

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

// Options configures the evaluation.
type Options struct {
	// MaxQueries caps the number of queries (0: every labelled image). Each
	// query ranks the whole collection, so at a million images a full
	// evaluation would take a million full rankings: cap it there. The
	// queries kept are a sample stratified by label, drawn by a hash of
	// (seed, id) (Apportion, Quotas.Pick), so the same subset is used for
	// every model and every re-run.
	MaxQueries int
	Seed       uint64
	// QueryFraction is the share of each label's images held out as
	// queries (package split, seeded by Seed): no learner trains on them,
	// and the report's headline is measured on them. 0 holds out none:
	// every query is then a training image, and the report says so.
	QueryFraction float64
	// TrainQueries caps the queries drawn from the training images beside
	// held-out ones (0: every training image), chosen as MaxQueries'
	// are. They only show over-fitting, so a few suffice.
	TrainQueries int
	// Depth is the rank depth of the metrics of the sharded evaluation
	// (Ranking): each query's first Depth results count, and a relevant
	// image ranked deeper adds 0 to its average precision. 0 is the whole
	// ranking up to FullDepthImages images and DefaultDepth beyond, where
	// full rankings of every query would cost queries × images.
	Depth int
	// ShardQueries is the most queries one shard of the sharded
	// evaluation searches with (0: DefaultShardQueries); ChunkImages and
	// ChunkPostings bound the images it indexes at a time, and their
	// postings (words of the bags; 0: DefaultChunkImages,
	// DefaultChunkPostings): a chunk ends at whichever it reaches first,
	// so a chunk of photos with thousands of words each holds as much as
	// one of images with a hundred (ChunkFull). ShardHits (0:
	// DefaultShardHits) bounds the results a shard keeps between chunks,
	// each query's best depth so far (as tie groups, at most one a
	// result): ShardQueriesFor sizes the shards by it. A shard holds one
	// chunk's bags and index and at most ShardHits results (or, over a
	// collection of one chunk, one ranking per core).
	ShardQueries, ChunkImages, ChunkPostings, ShardHits int
	// Rerank, if positive, adds a row for every method of bags of words
	// (named Method+RerankedSuffix) whose rankings have their best Rerank
	// results spatially verified against the query and re-ranked
	// (Ranking.Rerank), as search.Refine{Rerank} re-ranks a query's hits.
	// A shard then keeps every query's ranking until its candidates are
	// verified, within ShardHits, even over a collection of one chunk
	// (ShardQueriesReranked).
	Rerank int
	// Expand, if positive with Rerank, adds a row for every method of bags
	// of words (named Method+ExpandedSuffix) whose queries are expanded as
	// search.Refine{Rerank, Expand} expands them: each query's bag of
	// words averaged with those of its best Expand verified results
	// (index.ExpandQuery), ranked again over the whole collection and
	// re-ranked again; a query with no verified result keeps its re-ranked
	// ranking.
	Expand int
	// Cosine ranks each learner's results by the cosine in its metric:
	// every image's bag is divided by its length under the learner's
	// weights (index.Normalize, Documents) before it is indexed. False
	// ranks by the bilinear score the learners fit. The TF-IDF baseline
	// ranks the same either way. The job's indexes are written with the
	// same setting (indexbeam.PostingsOfParts), so that a search of them
	// returns what the evaluation measured.
	Cosine bool
}

// Validate reports a setting of o out of its bounds (a *setting.Error):
// a share of held-out queries outside [0, 1), or a negative cap, depth,
// shard size, re-ranking or expansion (0 is each one's default, or
// none).
func (o Options) Validate() error {
	if f := o.QueryFraction; !(f >= 0 && f < 1) {
		return setting.Errorf("evaluate", "QueryFraction", f, "in [0, 1)")
	}
	for _, c := range []struct {
		field string
		v     int
	}{
		{"MaxQueries", o.MaxQueries}, {"TrainQueries", o.TrainQueries}, {"Depth", o.Depth},
		{"ShardQueries", o.ShardQueries}, {"ChunkImages", o.ChunkImages}, {"ChunkPostings", o.ChunkPostings},
		{"ShardHits", o.ShardHits}, {"Rerank", o.Rerank}, {"Expand", o.Expand},
	} {
		if c.v < 0 {
			return setting.Errorf("evaluate", c.field, c.v, "0 or more")
		}
	}
	return nil
}

// Documents prepares the bags docs for a ranking under the weights w
// (nil: TF-IDF): with Cosine, each is scaled in place to unit length in
// w's metric (index.Normalize).
func (o Options) Documents(docs []formats.BoW, w []float32) {
	if !o.Cosine || w == nil {
		return
	}
	for _, d := range docs {
		index.Normalize(w, sparse.Vector{Idx: d.WordIDs, Val: d.Weights})
	}
}

// The endings of the names of a method's re-ranked rows (Options.Rerank)
// and of its expanded ones (Options.Expand).
const (
	RerankedSuffix = "+sv"
	ExpandedSuffix = "+sv+qe"
)

// Defaults of Options' sharded evaluation.
const (
	FullDepthImages     = 20_000
	DefaultDepth        = 1000
	DefaultShardQueries = 1000
	DefaultChunkImages  = 50_000
	// DefaultChunkPostings holds a chunk near 0.5 GB: 8 bytes a posting
	// in the bags read and 8 in their index. Ten thousand photos of 1,700
	// words each are one chunk.
	DefaultChunkPostings = 32 << 20
	// DefaultShardHits is what a shard of DefaultShardQueries queries
	// keeps at DefaultDepth: at most 24 MB of tie groups.
	DefaultShardHits = DefaultShardQueries * DefaultDepth
)

// Chunk returns the number of images a shard indexes at a time.
func (o Options) Chunk() int {
	if o.ChunkImages > 0 {
		return o.ChunkImages
	}
	return DefaultChunkImages
}

// ChunkFull reports whether a chunk of images images holding postings
// postings is full: the next image starts another.
func (o Options) ChunkFull(images int, postings int64) bool {
	return images >= o.Chunk() || postings >= o.chunkPostings()
}

func (o Options) chunkPostings() int64 {
	if o.ChunkPostings > 0 {
		return int64(o.ChunkPostings)
	}
	return DefaultChunkPostings
}

// oneChunk reports whether a collection of n images holding postings
// postings is surely ranked in one chunk: its first n-1 images do not fill
// one (ChunkFull), whatever the last one holds.
func (o Options) oneChunk(n, postings int64) bool {
	return n-1 < int64(o.Chunk()) && postings < o.chunkPostings()
}

// ShardQueriesFor returns the number of queries of one shard of the
// sharded evaluation of a collection of n images holding postings postings
// (0 for global features, whose chunks are counted in images). A shard scores each
// query, and drops its ranking, once it has ranked the whole collection,
// so over a collection of one chunk it keeps nothing between queries and
// takes ShardQueries queries. Over several chunks it keeps every query's
// best results between them, depth each (the whole collection at full
// depth): then it takes no more queries than fit in ShardHits results, at
// least one.
func (o Options) ShardQueriesFor(n, postings int64) int {
	q := o.ShardQueries
	if q <= 0 {
		q = DefaultShardQueries
	}
	if o.oneChunk(n, postings) {
		return q
	}
	return o.boundedShard(q, n)
}

// ShardQueriesReranked returns the number of queries of one shard of the
// sharded evaluation of a collection of n images with the shard's methods
// re-ranked (Rerank > 0; ShardQueriesFor otherwise): the shard keeps every
// query's ranking until its candidates are verified, so it takes no more
// queries than fit in ShardHits results even over a collection of one
// chunk.
func (o Options) ShardQueriesReranked(n, postings int64) int {
	if o.Rerank <= 0 {
		return o.ShardQueriesFor(n, postings)
	}
	q := o.ShardQueries
	if q <= 0 {
		q = DefaultShardQueries
	}
	return o.boundedShard(q, n)
}

// boundedShard returns at most q queries, whose best results over a
// collection of n images fit in ShardHits, at least one.
func (o Options) boundedShard(q int, n int64) int {
	hits := int64(o.ShardHits)
	if hits <= 0 {
		hits = DefaultShardHits
	}
	depth := int64(o.DepthFor(n))
	if depth == 0 || depth > n {
		depth = n
	}
	return int(max(1, min(int64(q), hits/depth)))
}

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
// weights and lets each selected labelled doc query it, itself excluded,
// held-out queries chosen by cut — a Ranking of the whole collection in
// one chunk, every result deep. It returns the report rows (Rows) and the
// per-query scores. docs is sorted by image id in place.
func BoW(docs []formats.BoW, m learners.Model, cut split.Cut, opt Options) ([]formats.ReportRow, []QueryScore, error) {
	sort.Slice(docs, func(i, j int) bool { return docs[i].ImageID < docs[j].ImageID })
	weights, err := m.Diagonal()
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate: %w", err)
	}
	vocab := len(weights)
	ids := make([]string, len(docs))
	labels := make([]string, len(docs))
	labelCount := map[string]int{}
	for i, d := range docs {
		ids[i], labels[i] = d.ImageID, d.Label
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
	queries := selectQueries(ids, labels, labelCount, cut, opt)
	at := make(map[string]int, len(docs))
	for i, id := range ids {
		at[id] = i
	}
	for k, q := range queries {
		d := docs[at[q.ID]]
		// A copy: with Cosine the documents are scaled below, and a query is
		// its bag as it is, as a search's is.
		queries[k].Vec = sparse.Vector{Idx: d.WordIDs, Val: slices.Clone(d.Weights)}
	}
	r := NewRanking(queries, 0, int64(len(docs)), labelCount)
	opt.Documents(docs, weights)
	if err := r.Add(docs, weights, vocab); err != nil {
		return nil, nil, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	row.IndexSeconds, row.IndexPostings = r.IndexSeconds, r.Postings
	scores, err := r.Scores()
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	return Rows(row, scores, opt), scores, nil
}

// selectQueries selects the queries among the docs (Classify): the
// held-out ones and the training ones, each set capped by opt.Cap to a
// sample stratified by label (Options.Quotas, Quotas.Pick), in doc order.
// Their vectors are left empty.
func selectQueries(ids, labels []string, labelCount map[string]int, cut split.Cut, opt Options) []Query {
	var sets [2][]int // training, held out
	for i, l := range labels {
		if ok, held := Classify(ids[i], l, labelCount, cut); ok {
			h := 0
			if held {
				h = 1
			}
			sets[h] = append(sets[h], i)
		}
	}
	var qs []int
	for h, set := range sets {
		counts := map[string]int{}
		for _, i := range set {
			counts[labels[i]]++
		}
		kept := opt.Quotas(h == 1, counts).Pick(len(set), func(k int) (uint64, string, string) {
			i := set[k]
			return QueryKey(opt.Seed, ids[i]), ids[i], labels[i]
		})
		for _, k := range kept {
			qs = append(qs, set[k])
		}
	}
	sort.Ints(qs)
	out := make([]Query, len(qs))
	for k, i := range qs {
		_, held := Classify(ids[i], labels[i], labelCount, cut)
		out[k] = Query{ID: ids[i], Label: labels[i], Held: held}
	}
	return out
}

// Dense evaluates the model m of dense global features (learned, or the
// Euclidean baseline) over rows: it restores the model, embeds every image
// as an item (the "index" time of the report), and lets each selected
// labelled image query the rest by brute force under the model's metric —
// a DenseRanking of the whole collection in one chunk, every result deep.
// There is no inverted index for dense embeddings: each query is compared
// with every image, O(n·e) for n images of embedding length e, which
// Options.MaxQueries bounds. Held-out queries are chosen by cut; it
// returns the report rows (Rows) and the per-query scores. rows is sorted
// by image id in place.
func Dense(rows []train.DenseRow, m learners.Model, cut split.Cut, opt Options) ([]formats.ReportRow, []QueryScore, error) {
	row := formats.ReportRow{Method: m.Learner, Input: "global", Relevance: "label", TrainSeconds: m.Seconds}
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
			return nil, nil, fmt.Errorf("evaluate %s: image %s has %d features, image %s has %d", m.Learner, r.ImageID, len(r.X), rows[0].ImageID, want)
		}
	}
	if len(rows) > 0 {
		row.Vocabulary = int64(len(rows[0].X))
	}
	var queries []DenseQuery
	for _, q := range selectQueries(ids, labels, labelCount, cut, opt) {
		i, _ := slices.BinarySearch(ids, q.ID)
		queries = append(queries, DenseQuery{ID: q.ID, Label: q.Label, Held: q.Held, X: rows[i].X})
	}
	r, err := NewDenseRanking(m, queries, 0, int64(len(rows)), labelCount)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Add(rows); err != nil {
		return nil, nil, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	row.IndexSeconds = r.IndexSeconds
	scores, err := r.Scores()
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	return Rows(row, scores, opt), scores, nil
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
