package evaluate

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"

	"github.com/bowline/bowline/transforms/split"
)

// A capped query set — the held-out queries beyond Options.MaxQueries,
// the training queries beyond Options.TrainQueries — is a sample of its
// candidates stratified by label: each label keeps a share of the cap in
// proportion to its candidates (Apportion), and within a label the
// candidates of smallest QueryKey. Stratifying makes every label count in
// the set's mean as it counts among the candidates, whatever the ids; a
// sample of the smallest keys over all labels would leave it to the hash
// to spread the queries over labels, and a few hundred draws spread them
// unevenly by chance alone.

// Salts that set a capped sample's keys apart from the split's, which
// hashes the ids under the same seed (split.Key): with the split's own
// key, a label's training queries would be the images that just missed
// being held out. Arbitrary odd constants; they decide which images are
// queries, so they must never change.
const (
	querySalt = 0x6a09e667f3bcc909
	labelSalt = 0xbb67ae8584caa73b
)

// QueryKey orders a label's candidate queries: with a cap binding, a label
// keeps its candidates of smallest key. It is split.Key, the split's
// well-mixed hash of (seed, id), under a salted seed: every bit of the key
// depends on every character of the id, so that ids differing only in
// their last characters (img_0001, img_0002) are not neighbours in key
// order.
func QueryKey(seed uint64, id string) uint64 {
	return split.Key(seed^querySalt, id)
}

// labelKey orders the labels that get a query when there are more labels
// than the cap, and breaks ties between equal claims to a query.
func labelKey(seed uint64, label string) uint64 {
	return split.Key(seed^labelSalt, label)
}

// Quotas is a capped sample's apportionment: Keep[i] candidates of label
// Labels[i] (sorted) are kept, and none of a label not listed. The zero
// Quotas keeps every candidate (no apportionment known: the empty
// accumulator of a sample drawn in parts).
type Quotas struct {
	Labels []string
	Keep   []int
}

// Quotas returns the apportionment of the held-out or the training set's
// cap (Cap) among counts[l] candidates of label l.
func (o Options) Quotas(held bool, counts map[string]int) Quotas {
	return Apportion(o.Seed, o.Cap(held), counts)
}

// Apportion divides a cap of max queries among labels of counts[l]
// candidates each (all are kept if max is 0 or not below their total) by
// largest remainder with a minimum of one: every label with a candidate
// first gets one, then each further query goes to the label furthest
// below its proportional share max·counts[l]/total, ties to the smaller
// labelKey. Without the minimum this is Hamilton's method — each label
// gets ⌊share⌋, then the largest remainders one more — so a label's quota
// is within one of its share; the minimum only lifts labels whose share
// is below one. With more labels than max, the max labels of smallest
// labelKey get one each, the others none: which labels are represented is
// then a draw, not the labels' order. Apportion is a pure function of the
// seed, max and counts.
func Apportion(seed uint64, max int, counts map[string]int) Quotas {
	labels := slices.Sorted(maps.Keys(counts))
	labels = slices.DeleteFunc(labels, func(l string) bool { return counts[l] <= 0 })
	q := Quotas{Labels: labels, Keep: make([]int, len(labels))}
	total := 0
	for _, l := range labels {
		total += counts[l]
	}
	if max <= 0 || total <= max {
		for i, l := range labels {
			q.Keep[i] = counts[l]
		}
		return q
	}
	keys := make([]uint64, len(labels))
	for i, l := range labels {
		keys[i] = labelKey(seed, l)
	}
	if len(labels) >= max {
		order := make([]int, len(labels))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Or(cmp.Compare(keys[a], keys[b]), cmp.Compare(labels[a], labels[b])) })
		for _, i := range order[:max] {
			q.Keep[i] = 1
		}
		return q
	}
	// The deficit of label i is its share less its quota, times total:
	// max·counts − Keep·total, exact in integers.
	h := &claims{q: &q, keys: keys, deficit: make([]int64, len(labels))}
	for i, l := range labels {
		q.Keep[i] = 1
		h.deficit[i] = int64(max)*int64(counts[l]) - int64(total)
		h.order = append(h.order, i)
	}
	heap.Init(h)
	for range max - len(labels) {
		i := h.order[0]
		q.Keep[i]++
		h.deficit[i] -= int64(total)
		heap.Fix(h, 0)
	}
	return q
}

// claims is a max-heap of labels (indices) by deficit, then smaller key.
// A label's quota never reaches its candidates: its share, at most its
// count, exceeds its quota whenever it is on top with queries left.
type claims struct {
	q       *Quotas
	keys    []uint64
	deficit []int64
	order   []int
}

func (h claims) Len() int { return len(h.order) }
func (h claims) Less(a, b int) bool {
	i, j := h.order[a], h.order[b]
	if h.deficit[i] != h.deficit[j] {
		return h.deficit[i] > h.deficit[j]
	}
	return cmp.Or(cmp.Compare(h.keys[i], h.keys[j]), cmp.Compare(h.q.Labels[i], h.q.Labels[j])) < 0
}
func (h claims) Swap(a, b int) { h.order[a], h.order[b] = h.order[b], h.order[a] }
func (h *claims) Push(x any)   { h.order = append(h.order, x.(int)) }
func (h *claims) Pop() any {
	x := h.order[len(h.order)-1]
	h.order = h.order[:len(h.order)-1]
	return x
}

// Or returns q, or r if q is the zero Quotas: the quotas of two partial
// samples merged, one of them perhaps an empty accumulator.
func (q Quotas) Or(r Quotas) Quotas {
	if len(q.Labels) == 0 {
		return r
	}
	return q
}

// Of returns the candidates label keeps.
func (q Quotas) Of(label string) int {
	i, ok := slices.BinarySearch(q.Labels, label)
	if !ok {
		return 0
	}
	return q.Keep[i]
}

// Pick returns, in increasing order, the candidates 0…n−1 the sample
// keeps, where at(i) is candidate i's key (QueryKey), id and label: of
// each label, its quota of smallest key, ties by id (every candidate with
// the zero Quotas). Pick keeps the same candidates of any superset of
// candidates that holds them, so that a sample drawn part by part — each
// part picked, the parts' picks merged and picked again — is the sample
// of all of them.
func (q Quotas) Pick(n int, at func(i int) (key uint64, id, label string)) []int {
	if len(q.Labels) == 0 {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	type cand struct {
		key uint64
		id  string
		i   int
	}
	by := map[string][]cand{}
	for i := range n {
		key, id, label := at(i)
		by[label] = append(by[label], cand{key, id, i})
	}
	var out []int
	for label, cs := range by {
		keep := q.Of(label)
		if len(cs) > keep {
			slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
			cs = cs[:keep]
		}
		for _, c := range cs {
			out = append(out, c.i)
		}
	}
	slices.Sort(out)
	return out
}

// SetCounts returns each label's candidate queries in the held-out and in
// the training set (Classify), given relevant[l] images of label l, held[l]
// of them held out by the split.
func SetCounts(relevant, held map[string]int) (heldOut, training map[string]int) {
	heldOut, training = map[string]int{}, map[string]int{}
	for l, n := range relevant {
		if !IsQuery(l, relevant) {
			continue
		}
		if h := held[l]; h > 0 {
			heldOut[l] = h
		}
		if t := n - held[l]; t > 0 {
			training[l] = t
		}
	}
	return heldOut, training
}
