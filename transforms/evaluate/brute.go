package evaluate

import (
	"fmt"
	"math"
	"slices"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/itq"
)

// Brute ranks a collection by brute force under a dense model's metric
// (learners.Metric): every query is compared with every item. It is the
// retrieval of the learners of dense global features, which have no
// inverted index: O(n·e) per query for n items of embedding length e, or
// O(n·⌈e/64⌉) popcounts for binary codes. A Brute is safe for concurrent
// Rank calls, each with its own scratch.
type Brute struct {
	metric learners.Metric
	dim    int
	items  []float64  // n×dim, row-major (Euclidean, Dot)
	codes  []itq.Code // Hamming
}

// NewBrute indexes items, the item embeddings of one model (all of one
// length), for ranking under metric.
func NewBrute(metric learners.Metric, items [][]float64) (*Brute, error) {
	b := &Brute{metric: metric}
	if len(items) > 0 {
		b.dim = len(items[0])
	}
	for i, it := range items {
		if len(it) != b.dim {
			return nil, fmt.Errorf("evaluate: item %d has embedding length %d, item 0 has %d", i, len(it), b.dim)
		}
		for _, v := range it {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("evaluate: item %d has a non-finite embedding", i)
			}
		}
		switch metric {
		case learners.Hamming:
			b.codes = append(b.codes, itq.Pack(it, nil))
		case learners.Euclidean, learners.Dot:
			b.items = append(b.items, it...)
		default:
			return nil, fmt.Errorf("evaluate: unknown metric %v", metric)
		}
	}
	return b, nil
}

// Len returns the number of items.
func (b *Brute) Len() int {
	if b.metric == learners.Hamming {
		return len(b.codes)
	}
	if b.dim == 0 {
		return 0
	}
	return len(b.items) / b.dim
}

// BruteScratch is the per-goroutine memory of Rank.
type BruteScratch struct {
	score []float64
	code  itq.Code
}

// Rank writes into dst (grown if short) the items other than exclude
// (pass −1 to keep all) ordered best first for the query embedding q:
// ascending squared distance (Euclidean), descending dot product (Dot) or
// ascending Hamming distance (Hamming), ties broken by item index so the
// ranking is deterministic. It panics if len(q) is not the items'
// embedding length.
func (b *Brute) Rank(dst []int, q []float64, exclude int, sc *BruteScratch) []int {
	score := b.scores(q, sc)
	dst = dst[:0]
	for i := range score {
		if i != exclude {
			dst = append(dst, i)
		}
	}
	slices.SortFunc(dst, func(i, j int) int {
		if score[i] != score[j] {
			if score[i] < score[j] {
				return -1
			}
			return 1
		}
		return i - j
	})
	return dst
}

// scores returns every item's score for the query embedding q, best
// first being ascending (Rank's order), in sc's buffer.
func (b *Brute) scores(q []float64, sc *BruteScratch) []float64 {
	n := b.Len()
	if n > 0 && len(q) != b.dim {
		panic(fmt.Sprintf("evaluate: query of length %d for items of length %d", len(q), b.dim))
	}
	if cap(sc.score) < n {
		sc.score = make([]float64, n)
	}
	score := sc.score[:n]
	switch b.metric {
	case learners.Hamming:
		sc.code = itq.Pack(q, sc.code)
		for i, c := range b.codes {
			score[i] = float64(itq.Hamming(sc.code, c))
		}
	case learners.Euclidean:
		for i := range score {
			it := b.items[i*b.dim : (i+1)*b.dim]
			var s float64
			for j, v := range it {
				d := q[j] - v
				s += d * d
			}
			score[i] = s
		}
	case learners.Dot:
		for i := range score {
			it := b.items[i*b.dim : (i+1)*b.dim]
			var s float64
			for j, v := range it {
				s += q[j] * v
			}
			score[i] = -s // best first is ascending
		}
	}
	return score
}
