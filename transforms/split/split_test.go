package split

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/internal/splitmix"
)

// dataset is a set of images: ids[i] has label labels[i] ("" for none).
type dataset struct {
	ids, labels []string
}

func (d dataset) counts() map[string]int {
	c := map[string]int{}
	for _, l := range d.labels {
		if l != "" {
			c[l]++
		}
	}
	return c
}

// shuffled returns d's images in another order.
func (d dataset) shuffled(r *rand.Rand) dataset {
	s := dataset{ids: append([]string(nil), d.ids...), labels: append([]string(nil), d.labels...)}
	r.Shuffle(len(s.ids), func(i, j int) {
		s.ids[i], s.ids[j] = s.ids[j], s.ids[i]
		s.labels[i], s.labels[j] = s.labels[j], s.labels[i]
	})
	return s
}

// build makes labels of the given sizes, with ids that differ only in
// their last characters (the hash must still order them at random), plus
// unlabelled images.
func build(sizes []int, unlabelled int) dataset {
	var d dataset
	for l, n := range sizes {
		for range n {
			d.ids = append(d.ids, fmt.Sprintf("img-%06d", len(d.ids)))
			d.labels = append(d.labels, fmt.Sprintf("label%d", l))
		}
	}
	for range unlabelled {
		d.ids = append(d.ids, fmt.Sprintf("img-%06d", len(d.ids)))
		d.labels = append(d.labels, "")
	}
	return d
}

// randomSizes returns 1 to 12 label sizes, skewed small: singletons and
// pairs are common.
func randomSizes(r *rand.Rand) []int {
	sizes := make([]int, 1+r.IntN(12))
	for i := range sizes {
		switch r.IntN(4) {
		case 0:
			sizes[i] = 1
		case 1:
			sizes[i] = 2
		default:
			sizes[i] = 1 + r.IntN(40)
		}
	}
	return sizes
}

// offerAll offers d's images to one selector and returns it.
func offerAll(t *testing.T, d dataset, seed uint64, fraction float64) *Selector {
	t.Helper()
	s, err := NewSelector(seed, fraction, d.counts())
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range d.ids {
		if err := s.Offer(id, d.labels[i]); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// selectAll offers d's images to one selector and returns its queries.
func selectAll(t *testing.T, d dataset, seed uint64, fraction float64) map[string]bool {
	t.Helper()
	q, err := offerAll(t, d, seed, fraction).Queries()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestKey: Key is FNV-1a (as hash/fnv computes it) then Mix64 with the
// finalised seed, and pinned values guard the splits of past runs.
func TestKey(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1 << 63} {
		for _, id := range []string{"", "a", "img-000001", "gs://bucket/dir/Photo 1.jpg", "ünïcødé"} {
			h := fnv.New64a()
			h.Write([]byte(id))
			if got, want := Key(seed, id), splitmix.Mix64(splitmix.Mix64(seed)^h.Sum64()); got != want {
				t.Errorf("Key(%d, %q) = %#x, want %#x", seed, id, got, want)
			}
		}
	}
	for _, tc := range []struct {
		seed uint64
		id   string
		want uint64
	}{
		{0, "", 0x5b21f68ffa77f14c},
		{1, "img-000001", 0x94daf176f7cefe25},
	} {
		if got := Key(tc.seed, tc.id); got != tc.want {
			t.Errorf("Key(%d, %q) = %#x, was %#x: changing Key changes every split", tc.seed, tc.id, got, tc.want)
		}
	}
}

func TestQuota(t *testing.T) {
	for _, tc := range []struct {
		n        int
		fraction float64
		want     int
	}{
		{0, 0.5, 0}, {1, 0.5, 0}, {1, 1, 0}, // a lone image stays in training
		{2, 0.5, 1}, {2, 1, 1}, {2, 0.2, 0}, // round(0.4) = 0
		{3, 0.5, 2}, {3, 1, 2}, // round(1.5) = 2 and n − 1 = 2
		{10, 0.25, 3}, {10, 0.2, 2}, {10, 0, 0}, {10, 1, 9},
		{1000, 0.1, 100},
		{-1, 0.5, 0},
	} {
		if got := Quota(tc.n, tc.fraction); got != tc.want {
			t.Errorf("Quota(%d, %v) = %d, want %d", tc.n, tc.fraction, got, tc.want)
		}
	}
	for _, f := range []float64{-0.1, 1.5, math.NaN()} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, "query fraction") {
					t.Errorf("Quota(5, %v): panic %q, want one about the query fraction", f, r)
				}
			}()
			Quota(5, f)
		}()
	}
}

// TestStratified: each label gets exactly its quota of queries, and they
// are its images of smallest key.
func TestStratified(t *testing.T) {
	d := build([]int{1, 2, 3, 10, 25, 100}, 5)
	const seed, fraction = 7, 0.3
	for _, q := range []map[string]bool{mustQueries(t, d, seed, fraction), selectAll(t, d, seed, fraction)} {
		perLabel := map[string]int{}
		maxQuery, minTrain := map[string]uint64{}, map[string]uint64{}
		for i, id := range d.ids {
			l, k := d.labels[i], Key(seed, id)
			switch {
			case q[id]:
				perLabel[l]++
				maxQuery[l] = max(maxQuery[l], k)
			case l != "":
				if m, ok := minTrain[l]; !ok || k < m {
					minTrain[l] = k
				}
			}
		}
		for l, n := range d.counts() {
			if perLabel[l] != Quota(n, fraction) {
				t.Errorf("label %s of %d images: %d queries, want %d", l, n, perLabel[l], Quota(n, fraction))
			}
			if perLabel[l] > 0 && maxQuery[l] >= minTrain[l] {
				t.Errorf("label %s: a query has key %#x, not below every training image's (smallest %#x)", l, maxQuery[l], minTrain[l])
			}
		}
	}
}

func mustQueries(t *testing.T, d dataset, seed uint64, fraction float64) map[string]bool {
	t.Helper()
	q, err := Queries(d.ids, d.labels, seed, fraction)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestDeterministicAndOrderFree: the same seed gives the same split
// whatever the order of the images; another seed gives another split.
func TestDeterministicAndOrderFree(t *testing.T) {
	d := build([]int{5, 8, 13, 2, 1}, 3)
	r := rand.New(rand.NewPCG(1, 2))
	want := mustQueries(t, d, 11, 0.4)
	for i := range 10 {
		s := d.shuffled(r)
		if got := mustQueries(t, s, 11, 0.4); !maps.Equal(got, want) {
			t.Fatalf("shuffle %d: Queries gave %v, in the original order %v", i, keys(got), keys(want))
		}
		if got := selectAll(t, s, 11, 0.4); !maps.Equal(got, want) {
			t.Fatalf("shuffle %d: the selector gave %v, Queries %v", i, keys(got), keys(want))
		}
	}
	for seed := range uint64(50) {
		a, b := mustQueries(t, d, seed, 0.4), mustQueries(t, d, seed+1, 0.4)
		if maps.Equal(a, b) {
			t.Errorf("seeds %d and %d gave the same split %v", seed, seed+1, keys(a))
		}
	}
}

// TestProperties: over 50 seeds, random label sizes (singletons and pairs
// included) and fractions, the split partitions the labelled images,
// leaves unlabelled images in training, keeps a training image in every
// label of two or more, meets every quota, and the streaming selector —
// whole or merged from a random partition over workers — agrees with
// Queries.
func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fractions := []float64{0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 1}
	for seed := range uint64(50) {
		d := build(randomSizes(r), r.IntN(4))
		fraction := fractions[r.IntN(len(fractions))]
		if seed%5 == 0 {
			fraction = r.Float64()
		}
		queries := mustQueries(t, d, seed, fraction)
		name := fmt.Sprintf("seed %d, fraction %v, counts %v", seed, fraction, d.counts())

		training := map[string]bool{}
		labelled := 0
		for i, id := range d.ids {
			switch {
			case d.labels[i] == "":
				if queries[id] {
					t.Errorf("%s: unlabelled image %s is a query", name, id)
				}
			case !queries[id]:
				training[id] = true
			}
			if d.labels[i] != "" {
				labelled++
			}
		}
		// Queries ∩ training = ∅ by construction; their union must hold
		// every labelled image and nothing else.
		for id := range queries {
			if training[id] {
				t.Errorf("%s: %s both query and training image", name, id)
			}
		}
		if len(queries)+len(training) != labelled {
			t.Errorf("%s: %d queries + %d training images, want the %d labelled images", name, len(queries), len(training), labelled)
		}
		trainPerLabel, queryPerLabel := map[string]int{}, map[string]int{}
		for i, id := range d.ids {
			if training[id] {
				trainPerLabel[d.labels[i]]++
			}
			if queries[id] {
				queryPerLabel[d.labels[i]]++
			}
		}
		for l, n := range d.counts() {
			if n >= 2 && trainPerLabel[l] == 0 {
				t.Errorf("%s: label %s of %d images has no training image", name, l, n)
			}
			if queryPerLabel[l] != Quota(n, fraction) {
				t.Errorf("%s: label %s of %d images has %d queries, want %d", name, l, n, queryPerLabel[l], Quota(n, fraction))
			}
		}

		if got := selectAll(t, d.shuffled(r), seed, fraction); !maps.Equal(got, queries) {
			t.Errorf("%s: the selector chose %v, Queries %v", name, keys(got), keys(queries))
		}
		if got := mergedFromParts(t, r, d, seed, fraction); !maps.Equal(got, queries) {
			t.Errorf("%s: selectors merged from a random partition chose %v, Queries %v", name, keys(got), keys(queries))
		}
	}
}

// mergedFromParts deals d's images at random among 1 to 5 selectors, as
// workers would see them, merges them in a random order and returns the
// queries of the merge.
func mergedFromParts(t *testing.T, r *rand.Rand, d dataset, seed uint64, fraction float64) map[string]bool {
	t.Helper()
	parts := make([]*Selector, 1+r.IntN(5))
	for i := range parts {
		var err error
		if parts[i], err = NewSelector(seed, fraction, d.counts()); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range d.ids {
		if err := parts[r.IntN(len(parts))].Offer(id, d.labels[i]); err != nil {
			t.Fatal(err)
		}
	}
	r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	// Merge pairwise, as a combiner tree would.
	for len(parts) > 1 {
		if err := parts[0].Merge(parts[1]); err != nil {
			t.Fatal(err)
		}
		parts = append(parts[:1], parts[2:]...)
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	}
	q, err := parts[0].Queries()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func TestFractionZero(t *testing.T) {
	d := build([]int{1, 2, 50, 1000}, 2)
	if q := mustQueries(t, d, 1, 0); len(q) != 0 {
		t.Errorf("fraction 0: Queries chose %d queries", len(q))
	}
	if q := selectAll(t, d, 1, 0); len(q) != 0 {
		t.Errorf("fraction 0: the selector chose %d queries", len(q))
	}
}

// TestUniform: over many seeds, each image of a label is a query about
// equally often, although the ids differ only in their last characters.
func TestUniform(t *testing.T) {
	d := build([]int{10}, 0)
	const seeds = 3000
	hits := map[string]int{}
	for seed := range uint64(seeds) {
		for id := range mustQueries(t, d, seed, 0.3) {
			hits[id]++
		}
	}
	// 3 of 10 per seed: 900 expected, standard deviation √(3000·0.3·0.7) ≈ 25.
	for _, id := range d.ids {
		if h := hits[id]; h < 775 || h > 1025 {
			t.Errorf("%s was a query under %d of %d seeds, want about 900", id, h, seeds)
		}
	}
}

// TestBoundedMemory: a selector keeps no more candidates per label than
// its quota, however many images it is offered.
func TestBoundedMemory(t *testing.T) {
	d := build([]int{5000, 3}, 100)
	s, err := NewSelector(1, 0.01, d.counts())
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range d.ids {
		if err := s.Offer(id, d.labels[i]); err != nil {
			t.Fatal(err)
		}
		for l, st := range s.labels {
			if len(st.kept) > st.quota {
				t.Fatalf("after %d images label %s keeps %d candidates, quota %d", i+1, l, len(st.kept), st.quota)
			}
		}
	}
	if n := len(s.labels["label0"].kept); n != 50 {
		t.Errorf("label of 5000 images at fraction 0.01 keeps %d candidates, want 50", n)
	}
}

func TestErrors(t *testing.T) {
	check := func(name string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one saying %q", name, err, want)
		}
	}
	_, err := Queries([]string{"a", "b"}, []string{"x"}, 1, 0.5)
	check("length mismatch", err, "2 ids but 1 labels")
	_, err = Queries([]string{"a", "b", "a"}, []string{"x", "x", "y"}, 1, 0.5)
	check("duplicate id", err, `image id "a" appears twice`)
	_, err = Queries(nil, nil, 1, 1.5)
	check("fraction 1.5", err, "query fraction 1.5")
	_, err = NewSelector(1, -0.5, nil)
	check("fraction -0.5", err, "query fraction -0.5")
	_, err = NewSelector(1, 0.5, map[string]int{"x": -1})
	check("negative count", err, `label "x" counted -1 images`)

	counts := map[string]int{"x": 2, "y": 3}
	s, _ := NewSelector(1, 0.5, counts)
	check("unknown label", s.Offer("a", "z"), `label "z", which the counts do not hold`)
	if err := s.Offer("u", ""); err != nil {
		t.Errorf("unlabelled image: %v", err)
	}
	s.Offer("a", "x")
	s.Offer("b", "x")
	check("label over count", s.Offer("c", "x"), `image "c" would be image 3 of label "x", which was counted with 2`)
	_, err = s.Queries()
	check("incomplete", err, `0 of the 3 images of label "y" offered`)

	other, _ := NewSelector(1, 0.5, counts)
	other.Offer("a", "x")
	check("overlapping parts", s.Merge(other), `offered 3 images of label "x", which was counted with 2`)
	check("self", s.Merge(s), "into itself")
	seed2, _ := NewSelector(2, 0.5, counts)
	check("other seed", s.Merge(seed2), "seed 2 and fraction 0.5 into one of seed 1")
	fewer, _ := NewSelector(1, 0.5, map[string]int{"x": 2, "y": 4})
	check("other counts", s.Merge(fewer), `counts of label "y" differ`)
	// The failed merges changed nothing: s completes with y's images.
	for _, id := range []string{"c", "d", "e"} {
		if err := s.Offer(id, "y"); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.Queries()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Queries([]string{"a", "b", "c", "d", "e", "u"}, []string{"x", "x", "y", "y", "y", ""}, 1, 0.5)
	if !maps.Equal(q, want) {
		t.Errorf("after failed merges: %v, want %v", keys(q), keys(want))
	}
}

// keys returns the ids of a split, sorted for messages.
func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

func BenchmarkOffer(b *testing.B) {
	d := build([]int{100_000}, 0)
	b.ReportAllocs()
	for b.Loop() {
		s, _ := NewSelector(1, 0.1, d.counts())
		for i, id := range d.ids {
			s.Offer(id, d.labels[i])
		}
	}
}

// TestNestedHoldsTheQueries checks that the split of a Nested fraction
// holds every query of the smaller one, so that a validation set (the
// larger split less the queries) never holds a query, and that it takes
// about share of the other images of a large label.
func TestNestedHoldsTheQueries(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		d := build(randomSizes(r), r.IntN(4))
		q := []float64{0, 0.1, 0.2, 0.5, 0.9}[r.IntN(5)]
		share := []float64{0, 0.2, 0.5, 1}[r.IntN(4)]
		seed := r.Uint64()
		held, err := Queries(d.ids, d.labels, seed, q)
		if err != nil {
			t.Fatal(err)
		}
		outer, err := Queries(d.ids, d.labels, seed, Nested(q, share))
		if err != nil {
			t.Fatal(err)
		}
		for id := range held {
			if !outer[id] {
				t.Fatalf("trial %d: query %s (fraction %v) is not held out at Nested(%v, %v) = %v", trial, id, q, q, share, Nested(q, share))
			}
		}
	}
	d := build([]int{1000}, 0)
	held, _ := Queries(d.ids, d.labels, 1, 0.2)
	outer, _ := Queries(d.ids, d.labels, 1, Nested(0.2, 0.25))
	if v := len(outer) - len(held); v != 200 {
		t.Errorf("a quarter of 800 training images: %d validation images, want 200", v)
	}
}

// cutAll offers d's images to one selector and returns its cut.
func cutAll(t *testing.T, d dataset, seed uint64, fraction float64) Cut {
	t.Helper()
	c, err := offerAll(t, d, seed, fraction).Cut()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCutHeld checks that the held-out counts a cut derives from the
// label counts are those of the images it holds out, and that counts of
// other images are refused.
func TestCutHeld(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 100 {
		d := build(randomSizes(r), r.IntN(4))
		c := cutAll(t, d, uint64(trial), []float64{0, 0.1, 0.2, 0.5, 0.9}[r.IntN(5)])
		want := map[string]int{}
		for i, id := range d.ids {
			if c.IsQuery(id, d.labels[i]) {
				want[d.labels[i]]++
			}
		}
		held, err := c.Held(d.counts())
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		for l, n := range d.counts() {
			if held[l] != want[l] {
				t.Errorf("trial %d: label %s of %d images: %d held out, derived %d", trial, l, n, want[l], held[l])
			}
		}
	}
	cut := cutAll(t, build([]int{10, 10}, 0), 1, 0.2)
	if _, err := cut.Held(map[string]int{"label0": 10, "label1": 6}); err == nil {
		t.Error("counts of other images than the split's: no error")
	}
}
