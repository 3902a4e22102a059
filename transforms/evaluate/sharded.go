package evaluate

import (
	"fmt"
	"math"
	"runtime"
	"slices"
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

// Ranking ranks the whole collection for a set of queries, one chunk of
// documents at a time, as tie groups (TiedRanking): it keeps each query's
// best groups down to the group at rank Depth, that group whole, so its
// memory is bounded by queries × Depth, not by the collection, and the
// chunks may come in any order. Depth ≤ 0 keeps every group (the full
// ranking average precision is defined on; bounded by the collection).
//
// A ranking is complete once the chunks have brought every image of the
// collection: the chunk that completes it scores each query as soon as its
// search of that chunk is merged, and drops the query's groups. So a
// collection of one chunk never holds more than one ranking per goroutine,
// whatever the number of queries: full-depth rankings of every query at
// once (queries × images hits) were what a worker ran out of memory on.
type Ranking struct {
	depth    int
	images   int64          // the collection's size
	seen     int64          // images brought by the chunks so far
	relevant map[string]int // each label's images in the collection
	queries  []Query
	tops     [][]TieGroup // each query's best groups so far; nil once scored
	scores   []QueryScore
	seconds  []float64
	// rerank is the depth of the candidates kept for verification (0:
	// none), cands each query's (Rerank).
	rerank int
	cands  [][]Candidate

	// IndexSeconds and Postings sum the index builds of the chunks.
	IndexSeconds float64
	Postings     int64
}

// NewRanking returns an empty ranking for queries, depth results deep,
// over a collection of images images in which relevant counts the images
// of each label (the query itself included).
func NewRanking(queries []Query, depth int, images int64, relevant map[string]int) *Ranking {
	return &Ranking{depth: depth, images: images, relevant: relevant, queries: queries,
		tops: make([][]TieGroup, len(queries)), scores: make([]QueryScore, len(queries)), seconds: make([]float64, len(queries))}
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

// take merges part, query qi's tie groups in one chunk (cut at the
// ranking's depth, as appendTop cuts), into its groups, and cands, its
// candidates in the chunk (with Rerank), into its candidates; in the
// chunk that completes the collection it scores the query and drops its
// groups instead of keeping them, unless they are to be re-ranked.
func (r *Ranking) take(qi int, part []TieGroup, cands []Candidate, last bool) {
	keep := !last || r.rerank > 0
	all := part
	if len(r.tops[qi]) > 0 {
		all = mergeTies(r.tops[qi], part, r.depth)
	} else if keep {
		all = slices.Clone(part)
	}
	if r.rerank > 0 {
		r.cands[qi] = mergeCandidates(r.cands[qi], cands, r.rerank)
	}
	if keep {
		r.tops[qi] = all
		return
	}
	r.tops[qi] = nil
	q := r.queries[qi]
	r.scores[qi] = score(q, TiedRanking{Groups: all, Depth: r.depth}, r.relevant[q.Label]-1)
}

// Add ranks the documents docs (one chunk of the collection) for every
// query under the diagonal weights w (nil: TF-IDF, w ≡ 1) over a
// vocabulary of vocab words, and merges them into each query's groups. A
// query's own image is left out. Documents of equal score tie whatever
// their ids, so the chunks' order and the ids cannot change a metric.
func (r *Ranking) Add(docs []formats.BoW, w []float32, vocab int) error {
	ids := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	labels := make([]string, len(docs))
	pos := make(map[string]int, len(docs))
	labelled := map[string]int{}
	for i, d := range docs {
		ids[i], labels[i] = d.ImageID, d.Label
		vecs[i] = sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
		pos[d.ImageID] = i
		if d.Label != "" {
			labelled[d.Label]++
		}
	}
	start := time.Now()
	ix, err := index.Build(ids, vecs, w, vocab)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	r.IndexSeconds += time.Since(start).Seconds()
	r.Postings += int64(ix.NNZ())
	for _, q := range r.queries {
		if err := checkQuery(q, ix.Words()); err != nil {
			return err
		}
	}
	last, err := r.chunk(len(docs))
	if err != nil {
		return err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := chunkScorer{sum: ix.NewAccumulator(), rerank: r.rerank}
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
				part := sc.ties(q, exclude, labels, labelled[q.Label], r.depth)
				r.take(qi, part, sc.candidates(ids), last)
				r.seconds[qi] += time.Since(start).Seconds()
			}
		}()
	}
	wg.Wait()
	return nil
}

// checkQuery returns an error if q's bag of words has a word outside a
// vocabulary of vocab words or a value that is not finite: no score could
// be given to it.
func checkQuery(q Query, vocab int) error {
	if len(q.Vec.Idx) != len(q.Vec.Val) {
		return fmt.Errorf("evaluate: query %s has %d words and %d weights", q.ID, len(q.Vec.Idx), len(q.Vec.Val))
	}
	for t, i := range q.Vec.Idx {
		if int64(i) >= int64(vocab) {
			return fmt.Errorf("evaluate: query %s has word %d, outside the vocabulary of %d", q.ID, i, vocab)
		}
		if v := float64(q.Vec.Val[t]); math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("evaluate: query %s has weight %v for word %d", q.ID, v, i)
		}
	}
	return nil
}

// chunkScorer scores queries against one chunk's index, reusing its
// buffers from query to query (one per goroutine).
type chunkScorer struct {
	sum      *index.Accumulator
	pos, neg candidates
	groups   []TieGroup
	// rerank is the depth of the candidates for verification kept (0:
	// none); hits the last query's positive scores, by document, for them.
	rerank int
	hits   []Candidate
	docs   []int32
}

// ties returns q's tie groups over the chunk, document exclude (−1: none)
// left out, cut at depth as appendTop cuts (≤ 0: none): the positive
// scores, best first, then the zero scores — every document sharing no
// weighted word with q, counted without a walk over the chunk: labelled
// counts the chunk's documents of q's label — then the negative ones. The
// scores S_w(q, x) are index.Searcher's (index.Accumulator). The result
// is valid until the next call.
func (sc *chunkScorer) ties(q Query, exclude int, labels []string, labelled, depth int) []TieGroup {
	sc.sum.Add(q.Vec)
	acc := sc.sum.Scores()
	sc.pos.reset()
	sc.neg.reset()
	sc.hits, sc.docs = sc.hits[:0], sc.docs[:0]
	// An unlabelled query has nothing relevant (and is never chosen).
	relevant := func(d int) bool { return q.Label != "" && labels[d] == q.Label }
	others, zeroRel := len(acc), labelled
	if exclude >= 0 {
		others--
		if relevant(exclude) {
			zeroRel--
		}
	}
	for _, d := range sc.sum.Docs() {
		a := acc[d]
		if int(d) == exclude || a == 0 {
			continue
		}
		rel := relevant(int(d))
		if rel {
			zeroRel--
		}
		if a > 0 {
			if sc.rerank > 0 {
				sc.hits = append(sc.hits, Candidate{Score: a, Rel: rel})
				sc.docs = append(sc.docs, d)
			}
			sc.pos.add(a, rel)
		} else {
			sc.neg.add(a, rel)
		}
	}
	sc.sum.Reset()
	g := sc.groups[:0]
	zeros := others - sc.pos.len() - sc.neg.len()
	g = appendTop(g, &sc.pos, depth)
	n := count(g)
	if zeros > 0 && (depth <= 0 || n < depth) {
		g = append(g, TieGroup{Score: 0, N: zeros, Rel: zeroRel})
		n += zeros
	}
	if depth <= 0 {
		g = appendTop(g, &sc.neg, 0)
	} else if n < depth {
		g = appendTop(g, &sc.neg, depth-n)
	}
	sc.groups = g
	return g
}

// candidates returns the best sc.rerank positive results of the last
// query of ties, and the rest of the tie group at the cut, sorted by
// byScore; ids are the chunk's image ids. The result is the caller's.
func (sc *chunkScorer) candidates(ids []string) []Candidate {
	if sc.rerank <= 0 {
		return nil
	}
	for i, d := range sc.docs {
		sc.hits[i].ID = ids[d]
	}
	slices.SortFunc(sc.hits, byScore)
	return slices.Clone(topCandidates(sc.hits, sc.rerank))
}

// count returns the results of groups g.
func count(g []TieGroup) int {
	n := 0
	for _, x := range g {
		n += x.N
	}
	return n
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

// score returns the metrics of query q's ranking r among total relevant
// images.
func score(q Query, r TiedRanking, total int) QueryScore {
	return QueryScore{ID: q.ID, Label: q.Label, Held: q.Held, AP: r.AveragePrecision(total), P10: r.PrecisionAt(10),
		NDCG10: r.NDCGAt(total, 10), PR: r.InterpolatedPrecision(nil, total)}
}

// Scores returns every query's metrics over its ranking of the whole
// collection, and an error if the chunks added did not bring all of it.
func (r *Ranking) Scores() ([]QueryScore, error) {
	if r.seen != r.images {
		return nil, fmt.Errorf("evaluate: %d of the collection's %d images ranked", r.seen, r.images)
	}
	out := make([]QueryScore, len(r.queries))
	for qi, q := range r.queries {
		if r.images == 0 || r.rerank > 0 {
			// No chunk came to score it (an empty ranking), or its
			// groups were kept to be re-ranked too.
			r.scores[qi] = score(q, TiedRanking{Groups: r.tops[qi], Depth: r.depth}, r.relevant[q.Label]-1)
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
