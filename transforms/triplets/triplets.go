// Package triplets samples training triplets (query, positive, negative) from
// labelled images: the positive shares the query's label, the negative does
// not.
//
// Sampling is a pure function of (seed, query id, pool): each query draws
// from its own random stream, seeded by a hash of the seed and its id, so
// queries can be sampled on any number of workers in any order and a re-run
// gives the same triplets. Seq is a hash too, so that sorting by Seq
// interleaves queries and labels the way an online learner wants its stream.
package triplets

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"

	"github.com/bowline/bowline/formats"
)

// Item is a labelled image.
type Item struct {
	ID, Label string
}

// Options controls how many triplets are drawn.
type Options struct {
	// PerQuery is the number of triplets drawn for each query image.
	PerQuery int
	// Seed selects the random streams.
	Seed uint64
}

// Validate reports nonsense options.
func (o Options) Validate() error {
	if o.PerQuery <= 0 {
		return fmt.Errorf("triplets: PerQuery must be positive, got %d", o.PerQuery)
	}
	return nil
}

// Pool is the set of labelled images triplets are drawn from, grouped by
// label.
type Pool struct {
	all     []Item           // sorted by ID
	byLabel map[string][]int // label → indices into all, ascending
}

// NewPool builds a pool from items, ignoring unlabelled ones. Order does not
// matter.
func NewPool(items []Item) *Pool {
	p := &Pool{byLabel: make(map[string][]int)}
	for _, it := range items {
		if it.Label != "" {
			p.all = append(p.all, it)
		}
	}
	sort.Slice(p.all, func(i, j int) bool { return p.all[i].ID < p.all[j].ID })
	for i, it := range p.all {
		p.byLabel[it.Label] = append(p.byLabel[it.Label], i)
	}
	return p
}

// Len returns the number of labelled images in the pool.
func (p *Pool) Len() int { return len(p.all) }

// Learnable reports why no triplet can be drawn from the pool, or nil if
// some can: a triplet needs a label with two images (query and positive)
// and an image of another label (the negative).
func (p *Pool) Learnable() error {
	counts := make(map[string]int, len(p.byLabel))
	for l, members := range p.byLabel {
		counts[l] = len(members)
	}
	return Learnable(counts)
}

// Learnable reports why no triplet can be drawn from labelled images with
// these counts by label, or nil if some can.
func Learnable(counts map[string]int) error {
	n := 0
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return fmt.Errorf("no labelled images to learn from: give the labels CSV's label column (--label_column) or a directory with one sub-directory per label")
	}
	labels := make([]string, 0, len(counts))
	pairs := false
	for l, c := range counts {
		labels = append(labels, l)
		pairs = pairs || c >= 2
	}
	sort.Strings(labels)
	switch {
	case len(labels) == 1:
		return fmt.Errorf("no training triplets: the %d labelled images all carry one label (%q); learning needs at least 2 labels", n, labels[0])
	case !pairs:
		return fmt.Errorf("no training triplets: none of the %d labels has 2 or more images, so no image has a positive", len(labels))
	}
	return nil
}

// maxTries bounds the rejection sampling of a negative; a label that holds
// nearly the whole pool would otherwise spin.
const maxTries = 64

// ForQuery appends to dst the triplets drawn for the query q and returns
// it. A query whose label has no other member, or whose label is the only
// one, yields none.
func (p *Pool) ForQuery(dst []formats.Triplet, q Item, opt Options) []formats.Triplet {
	same := p.byLabel[q.Label]
	if q.Label == "" || len(same) < 2 || len(same) == len(p.all) {
		return dst
	}
	r := rand.New(rand.NewPCG(opt.Seed, hash64(q.ID)))
	for j := 0; j < opt.PerQuery; j++ {
		var pos Item
		for {
			pos = p.all[same[r.IntN(len(same))]]
			if pos.ID != q.ID {
				break
			}
		}
		neg, ok := Item{}, false
		for try := 0; try < maxTries && !ok; try++ {
			neg = p.all[r.IntN(len(p.all))]
			ok = neg.Label != q.Label
		}
		if !ok {
			continue
		}
		dst = append(dst, formats.Triplet{
			Seq:      seq(opt.Seed, q.ID, j),
			Query:    q.ID,
			Positive: pos.ID,
			Negative: neg.ID,
		})
	}
	return dst
}

// Sample draws the triplets of every labelled item in the pool, sorted by
// Seq: the order an online learner consumes them in.
func Sample(items []Item, opt Options) ([]formats.Triplet, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	p := NewPool(items)
	var out []formats.Triplet
	for _, q := range p.all {
		out = p.ForQuery(out, q, opt)
	}
	SortBySeq(out)
	return out, nil
}

// SortBySeq sorts triplets into training order; ties on the hash are broken
// by the query id and then the positive and negative, so the order is total.
func SortBySeq(ts []formats.Triplet) {
	sort.Slice(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.Seq != b.Seq {
			return a.Seq < b.Seq
		}
		if a.Query != b.Query {
			return a.Query < b.Query
		}
		if a.Positive != b.Positive {
			return a.Positive < b.Positive
		}
		return a.Negative < b.Negative
	})
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// seq is a non-negative 63-bit hash of (seed, query, j).
func seq(seed uint64, q string, j int) int64 {
	r := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, hash64(q)+uint64(j)*0xbf58476d1ce4e5b9))
	return int64(r.Uint64() >> 1)
}
