// Package triplets samples training triplets (query, positive, negative) from
// labelled images: the positive shares the query's label, the negative does
// not.
//
// A negative is drawn uniformly from the other labels' images (Random), or
// mined: among the other labels' images that the query's bag of words is
// most similar to under TF-IDF cosine (a dot product of the L2-normalised
// bags), the top HardPool (Hard), or the top HardPool of those less similar
// than the triplet's positive (SemiHard, FaceNet's semi-hard negatives,
// Schroff et al. 2015). A positive is drawn uniformly from the query's
// label (Random) or from its HardPool most similar images there (Near).
// HardFraction of the triplets are drawn the mined way, the rest at random.
//
// Random is the default. Measured on ETH-80's held-out queries (the default
// learners, one retrain each from the same bags of words): hard negatives
// turn 97% of OASIS-diag's weights negative — the negative is more similar
// to the query than the positive, and a diagonal model can only answer by
// inverting its weights — and every learner falls below chance (mAP 0.10
// with category labels, 0.01 with object labels); semi-hard ones lose
// 0.03–0.06 mAP; mixtures lose less the fewer negatives they mine, and
// one semi-hard in five stays within 0.007 of random (1K and 10K words,
// either labels). Near positives mixed half and half with random ones
// (--positives near --hard_fraction 0.5) raise every learner's P@10, at 1K
// and 10K words and with either labels (SOLIS-ADA, 10K words, category
// labels: 0.545 → 0.631; the views beside the query are what TF-IDF finds
// and random triplets unlearn), and leave mAP as it is or raise it (object
// labels: +0.001 to +0.009; SOLIS-ADA, 10K words, category labels: 0.2927
// → 0.3005); but no mAP change is significant by the report's intervals
// against TF-IDF, SOLIS keeps more words at a given λ (79.8% → 57.5% zero
// weights), and ranking costs a pass over the query's words' inverted
// lists within its group: 8× the sampling CPU on ETH-80 (1.7 against 0.2 s
// for 2,624 images), quadratic in the group's size.
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
	"slices"
	"sort"
	"strings"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/setting"
)

// Item is a labelled image. Words, its TF-IDF weighted L2-normalised bag
// of words, is read only to mine negatives (Options.Negatives).
type Item struct {
	ID, Label string
	Words     sparse.Vector
}

// How a triplet's negative is drawn (Options.Negatives).
const (
	Random   = "random"
	Hard     = "hard"
	SemiHard = "semihard"
)

// NegativeModes lists the values of Options.Negatives.
var NegativeModes = []string{Random, Hard, SemiHard}

// Near positives (Options.Positives) are drawn from the query's HardPool
// most similar images of its label.
const Near = "near"

// PositiveModes lists the values of Options.Positives.
var PositiveModes = []string{Random, Near}

// Options controls how many triplets are drawn, and how.
type Options struct {
	// PerQuery is the number of triplets drawn for each query image. On
	// ETH-80 (1K words, either labels) 40 instead of 20, or the 20 learnt
	// twice over, moved no learner's held-out mAP by more than 0.006: the
	// learners have converged on one pass, so the job makes one.
	PerQuery int
	// Seed selects the random streams.
	Seed uint64
	// Negatives is Random (or ""), Hard or SemiHard.
	Negatives string
	// Positives is Random (or "") or Near.
	Positives string
	// HardPool is the number of most similar images of other labels a
	// mined negative is drawn from, and of the query's label a near
	// positive is.
	HardPool int
	// HardFraction is the share of a query's triplets that are mined
	// (their negative, and with Near their positive), the others' being
	// random; a triplet whose pool is empty (SemiHard: no other-label
	// image below the positive shares a word with the query; Near: no
	// image of the query's label does) falls back to random too.
	HardFraction float64
}

// Mined reports whether negatives are mined rather than random.
func (o Options) Mined() bool { return o.Negatives == Hard || o.Negatives == SemiHard }

// ranks reports whether drawing needs the query's ranking of the pool.
func (o Options) ranks() bool { return o.Mined() || o.Positives == Near }

// Validate reports nonsense options.
func (o Options) Validate() error {
	if o.PerQuery <= 0 {
		return setting.Errorf("triplets", "PerQuery", o.PerQuery, "1 or more")
	}
	if o.Negatives != "" && !slices.Contains(NegativeModes, o.Negatives) {
		return setting.Errorf("triplets", "Negatives", o.Negatives, "one of %s", strings.Join(NegativeModes, ", "))
	}
	if o.Positives != "" && !slices.Contains(PositiveModes, o.Positives) {
		return setting.Errorf("triplets", "Positives", o.Positives, "one of %s", strings.Join(PositiveModes, ", "))
	}
	if o.ranks() && o.HardPool <= 0 {
		return setting.Errorf("triplets", "HardPool", o.HardPool, "1 or more to draw %s negatives and %s positives", o.Negatives, o.Positives)
	}
	if !(o.HardFraction >= 0 && o.HardFraction <= 1) {
		return setting.Errorf("triplets", "HardFraction", o.HardFraction, "in [0, 1]")
	}
	return nil
}

// Pool is the set of labelled images triplets are drawn from, grouped by
// label.
type Pool struct {
	all     []Item           // sorted by ID
	byLabel map[string][]int // label → indices into all, ascending

	// The mining scratch, made on first use: the inverted lists of the
	// pool's bags, word → postings, and one score per image. A query's
	// scores cost the lengths of its words' lists, not a pass over every
	// image, and memory stays that of the bags.
	lists        [][]posting
	acc          []float64
	touched      []int32
	ranked, near []scored
}

type posting struct {
	item int32
	w    float32
}

type scored struct {
	item  int32
	score float64
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
// one, yields none. Mined negatives (opt.Mined) rank the pool against
// q.Words, so a Pool is not safe for concurrent use then.
func (p *Pool) ForQuery(dst []formats.Triplet, q Item, opt Options) []formats.Triplet {
	same := p.byLabel[q.Label]
	if q.Label == "" || len(same) < 2 || len(same) == len(p.all) {
		return dst
	}
	r := rand.New(rand.NewPCG(opt.Seed, hash64(q.ID)))
	var ranked, near []scored
	if opt.ranks() {
		ranked = p.rank(q)
		if opt.Positives == Near {
			near = p.near[:min(opt.HardPool, len(p.near))]
		}
	}
	for j := 0; j < opt.PerQuery; j++ {
		mined := opt.ranks() && r.Float64() < opt.HardFraction
		var pos Item
		if mined && len(near) > 0 {
			pos = p.all[near[r.IntN(len(near))].item]
		} else {
			for {
				if pos = p.all[same[r.IntN(len(same))]]; pos.ID != q.ID {
					break
				}
			}
		}
		neg, ok := Item{}, false
		if mined && opt.Mined() {
			if pool := minePool(ranked, q, pos, opt); len(pool) > 0 {
				neg, ok = p.all[pool[r.IntN(len(pool))].item], true
			}
		}
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

// minePool returns the negatives a mined triplet of (q, pos) draws from:
// the first opt.HardPool of ranked (Hard), or of those of ranked scoring
// below the positive (SemiHard). Negatives that share no word with the
// query are not ranked: they are the random ones.
func minePool(ranked []scored, q, pos Item, opt Options) []scored {
	if opt.Negatives == SemiHard {
		sp := sparse.Dot(q.Words, pos.Words)
		ranked = ranked[sort.Search(len(ranked), func(i int) bool { return ranked[i].score < sp }):]
	}
	return ranked[:min(opt.HardPool, len(ranked))]
}

// rank returns the images of labels other than q's that share a word
// with q, most similar first (ties by id), scored by the dot product of
// their bags of words with q's; the images of q's label but q, ranked
// alike, go to p.near. The slices are the pool's scratch, valid until the
// next call.
func (p *Pool) rank(q Item) []scored {
	if p.lists == nil {
		p.index()
	}
	for k, w := range q.Words.Idx {
		if int(w) >= len(p.lists) {
			continue
		}
		qv := float64(q.Words.Val[k])
		if !(qv > 0) {
			continue
		}
		for _, e := range p.lists[w] {
			if p.acc[e.item] == 0 {
				p.touched = append(p.touched, e.item)
			}
			p.acc[e.item] += qv * float64(e.w)
		}
	}
	p.ranked, p.near = p.ranked[:0], p.near[:0]
	for _, i := range p.touched {
		switch it := p.all[i]; {
		case !(p.acc[i] > 0) || it.ID == q.ID:
		case it.Label != q.Label:
			p.ranked = append(p.ranked, scored{i, p.acc[i]})
		default:
			p.near = append(p.near, scored{i, p.acc[i]})
		}
		p.acc[i] = 0
	}
	p.touched = p.touched[:0]
	byScore := func(a, b scored) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return int(a.item) - int(b.item)
	}
	slices.SortFunc(p.ranked, byScore)
	slices.SortFunc(p.near, byScore)
	return p.ranked
}

// index builds the inverted lists of the pool's bags of words, of their
// positive weights: TF-IDF weights are never negative, and a score that
// stays 0 marks an image that shares no word with the query, left to
// random sampling.
func (p *Pool) index() {
	dim := 0
	for _, it := range p.all {
		if n := len(it.Words.Idx); n > 0 {
			dim = max(dim, int(it.Words.Idx[n-1])+1)
		}
	}
	p.lists = make([][]posting, dim)
	for i, it := range p.all {
		for k, w := range it.Words.Idx {
			if !(it.Words.Val[k] > 0) {
				continue
			}
			p.lists[w] = append(p.lists[w], posting{int32(i), it.Words.Val[k]})
		}
	}
	p.acc = make([]float64, len(p.all))
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
