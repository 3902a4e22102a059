// Package split holds out query images for evaluation: it divides the
// labelled images into training images and query images, so that the
// queries of an evaluation are images no model has trained on.
//
// The split is stratified by label. Of a label's n images exactly
// Quota(n, fraction) — round(fraction·n) — are queries, so each label is
// represented among the queries in proportion to its size; an independent
// coin flip per image would, by chance, leave a small label with no query or
// no training image, and change every label's share from one seed to the
// next.
//
// A label keeps at least one training image (the quota is at most n − 1),
// so a label's only image is never a query. A query is scored by
// retrieving training images, and without a training image of its label
// it has nothing relevant to find: its average precision is 0/0 and it
// would only be dropped. One training image is all that requires. Keeping
// two, so that the label could also supply training triplets (query and
// positive), would pull small labels further from the fraction, and
// retrieval is meant to work for labels the model has not learnt too; a
// label's lone training image still serves as a negative. Unlabelled
// images are never queries, as nothing is relevant to them. Every image
// that is not a query is a training image.
//
// The queries of a label are its images of smallest Key(seed, id), a
// well-mixed hash, ties broken by id. The split is therefore a pure
// function of the seed, the ids and the labels: it does not depend on the
// order the images come in, on how they are spread over workers, or on the
// run; a different seed gives an unrelated split, and each image of a label
// is equally likely to be held out.
//
// Queries computes the split in one call, for data that fits in memory. A
// Selector computes it over a stream in memory proportional to the number
// of queries and labels rather than of images: given each label's image
// count (a first pass), it keeps, per label, only the Quota smallest keys
// offered so far. Selectors fed disjoint parts of the images Merge into the
// selector of all of them, so workers select from their share and a last
// step merges their results.
package split

import (
	"cmp"
	"container/heap"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/bowline/bowline/transforms/internal/splitmix"
)

// FNV-1a's 64-bit offset basis and prime.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

// Key is the hash that orders a label's images: the queries are those of
// smallest key. It hashes the id with FNV-1a, then applies SplitMix64's
// finaliser to that hash xored with the finalised seed:
//
//	Key(seed, id) = Mix64(Mix64(seed) ⊕ FNV-1a(id)).
//
// Why not FNV-1a alone: its last step is a multiplication, so a low bit of
// the hash depends only on low bits of the id's bytes, and ids differing in
// their last characters — img-0001, img-0002 — get hashes that differ
// mostly in low bits; sorted by such hashes they would not be in random
// order. Mix64 makes every bit of the key depend on every bit of its
// input, and finalising the seed first makes seeds s and s+1 flip about
// half the bits of that input, so keys behave as independent uniform draws
// per (seed, id): a label's images are equally likely to be queries, and
// two seeds give unrelated splits. Keys decide which images are held out,
// so Key must never change.
func Key(seed uint64, id string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= fnvPrime
	}
	return splitmix.Mix64(splitmix.Mix64(seed) ^ h)
}

// Quota returns the number of queries of a label of n images:
// round(fraction·n), halves rounded up, but at most n − 1 so that the label
// keeps a training image for its queries to find, and so 0 for n ≤ 1.
// Quota panics if fraction is not in [0, 1]; NewSelector and Queries check
// it and return an error instead.
func Quota(n int, fraction float64) int {
	if !(fraction >= 0 && fraction <= 1) {
		panic(fmt.Sprintf("split: query fraction %v, want one in [0, 1]", fraction))
	}
	if n < 2 {
		return 0
	}
	return min(int(math.Round(fraction*float64(n))), n-1)
}

// checkFraction reports a query fraction outside [0, 1], NaN included.
func checkFraction(fraction float64) error {
	if !(fraction >= 0 && fraction <= 1) {
		return fmt.Errorf("split: query fraction %v, want one in [0, 1]", fraction)
	}
	return nil
}

// Queries returns the query images among ids, where labels[i] is the label
// of ids[i] ("" for none): of each label's images the Quota(n, fraction) of
// smallest Key(seed, id), ties by id. It is the one-shot form of Selector,
// and gives the same split. It returns an error if ids and labels differ in
// length, an id appears twice, or fraction is not in [0, 1].
func Queries(ids, labels []string, seed uint64, fraction float64) (map[string]bool, error) {
	if len(ids) != len(labels) {
		return nil, fmt.Errorf("split: %d ids but %d labels", len(ids), len(labels))
	}
	if err := checkFraction(fraction); err != nil {
		return nil, err
	}
	byLabel := map[string][]candidate{}
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		if seen[id] {
			return nil, fmt.Errorf("split: image id %q appears twice", id)
		}
		seen[id] = true
		if labels[i] != "" {
			byLabel[labels[i]] = append(byLabel[labels[i]], candidate{Key(seed, id), id})
		}
	}
	queries := map[string]bool{}
	for _, cs := range byLabel {
		slices.SortFunc(cs, candidate.compare)
		for _, c := range cs[:Quota(len(cs), fraction)] {
			queries[c.id] = true
		}
	}
	return queries, nil
}

// Selector selects the queries of a stream of images in bounded memory:
// per label, the Quota smallest keys offered so far, in a max-heap whose
// top is the one the next smaller key displaces. Make one with
// NewSelector; a Selector is not safe for concurrent use.
type Selector struct {
	seed     uint64
	fraction float64
	labels   map[string]*stratum
}

// stratum is the state of one label: its image count and quota, the
// number of its images offered so far, and the candidates for its queries.
type stratum struct {
	count, quota, offered int
	kept                  candidates
}

// candidate is an image competing to be a query of its label.
type candidate struct {
	key uint64
	id  string
}

// compare orders candidates by key, then id: the order in which a label's
// images become queries.
func (c candidate) compare(d candidate) int {
	if r := cmp.Compare(c.key, d.key); r != 0 {
		return r
	}
	return cmp.Compare(c.id, d.id)
}

// candidates is a max-heap of candidates (container/heap): its top is the
// largest kept, the first to give way.
type candidates []candidate

func (h candidates) Len() int           { return len(h) }
func (h candidates) Less(i, j int) bool { return h[i].compare(h[j]) > 0 }
func (h candidates) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candidates) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candidates) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// offer keeps c if it is among the quota smallest seen.
func (s *stratum) offer(c candidate) {
	switch {
	case s.quota == 0:
	case len(s.kept) < s.quota:
		// heap.Push without boxing c in an interface.
		s.kept = append(s.kept, c)
		heap.Fix(&s.kept, len(s.kept)-1)
	case c.compare(s.kept[0]) < 0:
		s.kept[0] = c
		heap.Fix(&s.kept, 0)
	}
}

// NewSelector returns a selector of the queries of images whose labels
// have the given counts: counts[l] is the number of images of label l in
// the whole data, not in the part this selector will see, since a label's
// quota depends on all of its images. An unlabelled count (key "") is
// ignored. counts is copied. NewSelector returns an error if fraction is
// not in [0, 1] or a count is negative.
func NewSelector(seed uint64, fraction float64, counts map[string]int) (*Selector, error) {
	if err := checkFraction(fraction); err != nil {
		return nil, err
	}
	s := &Selector{seed: seed, fraction: fraction, labels: make(map[string]*stratum, len(counts))}
	for l, n := range counts {
		if l == "" {
			continue
		}
		if n < 0 {
			return nil, fmt.Errorf("split: label %q counted %d images", l, n)
		}
		s.labels[l] = &stratum{count: n, quota: Quota(n, fraction)}
	}
	return s, nil
}

// Offer considers the image id of the given label ("" for none) as a
// query. Each image is to be offered once, to one selector. Offer returns
// an error, and changes nothing, if the label is not among the counts or
// has already had as many images offered as counted: either way the counts
// do not describe the data, and the quotas would be wrong.
func (s *Selector) Offer(id, label string) error {
	if label == "" {
		return nil
	}
	st := s.labels[label]
	if st == nil {
		return fmt.Errorf("split: image %q has label %q, which the counts do not hold", id, label)
	}
	if st.offered == st.count {
		return fmt.Errorf("split: image %q would be image %d of label %q, which was counted with %d", id, st.offered+1, label, st.count)
	}
	st.offered++
	st.offer(candidate{Key(s.seed, id), id})
	return nil
}

// Merge adds to s the images offered to o, which must have been made with
// the same seed, fraction and counts and offered images disjoint from those
// offered to s; o is left unchanged. Afterwards s is the selector that all
// of both selectors' images would have been offered to, in any order.
// Merge returns an error, and changes nothing, if the selectors disagree
// or together were offered more images of a label than counted.
func (s *Selector) Merge(o *Selector) error {
	switch {
	case s == o:
		return fmt.Errorf("split: merging a selector into itself")
	case s.seed != o.seed || s.fraction != o.fraction:
		return fmt.Errorf("split: merging a selector of seed %d and fraction %v into one of seed %d and fraction %v", o.seed, o.fraction, s.seed, s.fraction)
	case len(s.labels) != len(o.labels):
		return fmt.Errorf("split: merging a selector of %d labels into one of %d: the counts differ", len(o.labels), len(s.labels))
	}
	for _, l := range sortedLabels(o.labels) {
		so, ss := o.labels[l], s.labels[l]
		switch {
		case ss == nil || ss.count != so.count:
			return fmt.Errorf("split: merging selectors whose counts of label %q differ", l)
		case ss.offered+so.offered > ss.count:
			return fmt.Errorf("split: merged selectors were offered %d images of label %q, which was counted with %d: were some offered to both?", ss.offered+so.offered, l, ss.count)
		}
	}
	for l, so := range o.labels {
		ss := s.labels[l]
		ss.offered += so.offered
		for _, c := range so.kept {
			ss.offer(c)
		}
	}
	return nil
}

// Queries returns the selected query ids. Every counted image must have
// been offered, to s or to a selector merged into it: until then a label's
// images not yet seen might displace the queries kept, and with fewer
// images than counted a label could lose all of its training images. It
// returns an error naming a label short of its count.
func (s *Selector) Queries() (map[string]bool, error) {
	queries := map[string]bool{}
	for _, l := range sortedLabels(s.labels) {
		st := s.labels[l]
		if st.offered != st.count {
			return nil, fmt.Errorf("split: %d of the %d images of label %q offered: the selection is incomplete", st.offered, st.count, l)
		}
		for _, c := range st.kept {
			queries[c.id] = true
		}
	}
	return queries, nil
}

// sortedLabels returns the labels in order, so that errors name the same
// label on every run.
func sortedLabels(m map[string]*stratum) []string { return slices.Sorted(maps.Keys(m)) }

// Cut is a finished split in memory proportional to the number of labels,
// not of queries: for each label with queries, its last query in key
// order. An image is a query exactly when it orders at or before its
// label's cut, so a worker deciding whether an image may be trained on
// needs the cut alone, at a million images as at a thousand. The fields
// are exported so that a runner can encode a Cut; make one with
// Selector.Cut. The zero Cut holds out no image.
type Cut struct {
	Seed     uint64
	Fraction float64
	// Labels are sorted; Keys[i] and IDs[i] are the last query of
	// Labels[i].
	Labels []string
	Keys   []uint64
	IDs    []string
	// Queries and Images count the queries and the images of the split.
	Queries, Images int64
}

// IsQuery reports whether the image id of the given label is a query of
// the split.
func (c Cut) IsQuery(id, label string) bool {
	i, ok := slices.BinarySearch(c.Labels, label)
	if !ok {
		return false
	}
	return candidate{Key(c.Seed, id), id}.compare(candidate{c.Keys[i], c.IDs[i]}) <= 0
}

// Held returns how many images of each label the split holds out, given
// counts[l], the images of label l it was made from: Quota(n, Fraction) of
// a label it holds any out of. It derives them without a pass over the
// images, and returns an error if the counts are not those of the split's
// images: their held-out total is not Queries, or their total not Images.
func (c Cut) Held(counts map[string]int) (map[string]int, error) {
	held := make(map[string]int, len(c.Labels))
	var queries, images int64
	for _, n := range counts {
		images += int64(n)
	}
	for _, l := range c.Labels {
		held[l] = Quota(counts[l], c.Fraction)
		queries += int64(held[l])
	}
	if queries != c.Queries || (c.Images > 0 && images != c.Images) {
		return nil, fmt.Errorf("split: %d images with %d held out by the split's fraction, but the split holds out %d of %d: not the images it was made from", images, queries, c.Queries, c.Images)
	}
	return held, nil
}

// Cut returns the split selected, as Queries does, in its compact form.
// Every counted image must have been offered.
func (s *Selector) Cut() (Cut, error) {
	c := Cut{Seed: s.seed, Fraction: s.fraction}
	for _, l := range sortedLabels(s.labels) {
		st := s.labels[l]
		if st.offered != st.count {
			return Cut{}, fmt.Errorf("split: %d of the %d images of label %q offered: the selection is incomplete", st.offered, st.count, l)
		}
		c.Images += int64(st.count)
		if len(st.kept) == 0 {
			continue
		}
		// The heap's top is the largest kept: the label's last query.
		c.Labels = append(c.Labels, l)
		c.Keys = append(c.Keys, st.kept[0].key)
		c.IDs = append(c.IDs, st.kept[0].id)
		c.Queries += int64(len(st.kept))
	}
	return c, nil
}

// Nested returns the fraction whose split holds out, of a label's images,
// the queries of the split of fraction query and about share of the
// label's other images besides: query + share·(1 − query), in [query, 1].
// A tuning split (a validation set carved from the training images) is
// the split of Nested(query, share) with the same seed, less the queries
// of query's: a label's images are held out in Key order, and a larger
// fraction's Quota is never smaller, so its held-out images begin with
// every query of the smaller one. A validation image is therefore never
// a query, and an image the tuning trains on is neither.
func Nested(query, share float64) float64 {
	return min(1, query+share*(1-query))
}
