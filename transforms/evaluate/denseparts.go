package evaluate

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/train"
)

// DenseQuery is one query of a sharded evaluation of global features: a
// labelled image of the collection and its dense row. It carries the row
// because a shard ranks the collection chunk by chunk and needs the query's
// embedding before it has seen the chunk that holds the query's image.
type DenseQuery struct {
	ID, Label string
	// Held says the image is held out: no learner trained on it.
	Held bool
	// X is the image's global features as train.DenseRow holds them:
	// concatenated and scaled.
	X []float32
}

// DenseRanking is Ranking for a dense model of global features: it ranks
// the whole collection for a set of queries one chunk of rows at a time
// under the model's metric, by brute force as Brute ranks, and keeps each
// query's best tie groups down to rank Depth so far. For q queries,
// embeddings of length e and chunks of c rows its memory is O(q·(e +
// Depth) + c·e), not the collection's, and a chunk costs O(q·c·e); the
// chunks may come in any order. Depth ≤ 0 keeps every group, and Scores
// then equals, query for query, what Dense computes over all the rows at
// once.
//
// A result's score is the negated Brute score s (squared distance,
// negated dot product or Hamming distance: best first is ascending s), so
// that the groups order as Ranking's do, best first by descending −s.
type DenseRanking struct {
	r      Ranking // the queries (without vectors), their groups and times
	model  learners.DenseModel
	metric learners.Metric
	width  int
	emb    [][]float64 // the queries' embeddings, Query(X)

	// IndexSeconds sums the time spent embedding the chunks' rows as items
	// and indexing them: Dense's "index" time, once per collection pass.
	IndexSeconds float64
}

// NewDenseRanking restores the dense model m (learners.RestoreDense) and
// returns an empty ranking for queries under it, depth results deep, over a
// collection of images rows in which relevant counts the rows of each
// label (the query itself included). As Ranking's, each query is scored
// and its groups dropped as soon as the chunk that completes the collection
// is merged.
func NewDenseRanking(m learners.Model, queries []DenseQuery, depth int, images int64, relevant map[string]int) (*DenseRanking, error) {
	model, err := learners.RestoreDense(m)
	if err != nil {
		return nil, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	width := 0
	for _, d := range model.Dims() {
		width += d
	}
	qs := make([]Query, len(queries))
	for i, q := range queries {
		if len(q.X) != width {
			return nil, fmt.Errorf("evaluate %s: query %s has %d features, the model takes %d", m.Learner, q.ID, len(q.X), width)
		}
		qs[i] = Query{ID: q.ID, Label: q.Label, Held: q.Held}
	}
	r := &DenseRanking{r: *NewRanking(qs, depth, images, relevant), model: model, metric: model.Metric(), width: width, emb: make([][]float64, len(queries))}
	parallel(len(queries), func(i int, buf []float64) []float64 {
		buf = widen(buf, queries[i].X)
		r.emb[i] = model.Query(nil, buf)
		return buf
	})
	return r, nil
}

// Add ranks the rows of one chunk of the collection for every query and
// merges their tie groups into each query's. A query's own image is left
// out.
func (r *DenseRanking) Add(rows []train.DenseRow) error {
	pos := make(map[string]int, len(rows))
	for i, row := range rows {
		if len(row.X) != r.width {
			return fmt.Errorf("evaluate: image %s has %d features, the model takes %d", row.ImageID, len(row.X), r.width)
		}
		pos[row.ImageID] = i
	}
	last, err := r.r.chunk(len(rows))
	if err != nil {
		return err
	}
	start := time.Now()
	items := make([][]float64, len(rows))
	parallel(len(rows), func(i int, buf []float64) []float64 {
		buf = widen(buf, rows[i].X)
		items[i] = r.model.Item(nil, buf)
		return buf
	})
	brute, err := NewBrute(r.metric, items)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	r.IndexSeconds += time.Since(start).Seconds()

	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sc BruteScratch
			var cands candidates
			var groups []TieGroup
			for {
				qi := int(next.Add(1) - 1)
				if qi >= len(r.r.queries) {
					return
				}
				q := r.r.queries[qi]
				exclude := -1
				if i, ok := pos[q.ID]; ok {
					exclude = i
				}
				start := time.Now()
				cands.reset()
				for i, s := range brute.scores(r.emb[qi], &sc) {
					if i != exclude {
						// Negated: best first is descending, as Ranking's.
						cands.add(-s, q.Label != "" && rows[i].Label == q.Label)
					}
				}
				groups = appendTop(groups[:0], &cands, r.r.depth)
				r.r.take(qi, groups, nil, last)
				r.r.seconds[qi] += time.Since(start).Seconds()
			}
		}()
	}
	wg.Wait()
	return nil
}

// Scores returns every query's metrics over its ranking of the whole
// collection, as Ranking.Scores does.
func (r *DenseRanking) Scores() ([]QueryScore, error) {
	return r.r.Scores()
}
