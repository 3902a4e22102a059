package triplets

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners/sparse"
)

func items(labels, per int) []Item {
	var out []Item
	for l := 0; l < labels; l++ {
		for i := 0; i < per; i++ {
			out = append(out, Item{ID: fmt.Sprintf("l%d-i%d", l, i), Label: fmt.Sprintf("L%d", l)})
		}
	}
	return out
}

func TestSampleRespectsLabels(t *testing.T) {
	in := items(4, 5)
	in = append(in, Item{ID: "lonely", Label: "solo"}, Item{ID: "unlabelled"})
	label := map[string]string{}
	for _, it := range in {
		label[it.ID] = it.Label
	}
	ts, err := Sample(in, Options{PerQuery: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 4*5*3 {
		t.Fatalf("got %d triplets, want %d (the lonely and unlabelled images yield none)", len(ts), 4*5*3)
	}
	for _, tr := range ts {
		if tr.Query == tr.Positive {
			t.Errorf("positive is the query: %+v", tr)
		}
		if label[tr.Query] != label[tr.Positive] || label[tr.Query] == label[tr.Negative] || label[tr.Negative] == "" {
			t.Errorf("bad triplet %+v (labels %q %q %q)", tr, label[tr.Query], label[tr.Positive], label[tr.Negative])
		}
	}
	for i := 1; i < len(ts); i++ {
		if ts[i-1].Seq > ts[i].Seq {
			t.Fatalf("not sorted by Seq at %d", i)
		}
	}
}

func TestSampleIsDeterministicAndOrderFree(t *testing.T) {
	in := items(3, 6)
	a, _ := Sample(in, Options{PerQuery: 4, Seed: 1})
	shuffled := append([]Item(nil), in...)
	rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	b, _ := Sample(shuffled, Options{PerQuery: 4, Seed: 1})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("input order changed the triplets")
	}
	c, _ := Sample(in, Options{PerQuery: 4, Seed: 2})
	if reflect.DeepEqual(a, c) {
		t.Fatal("another seed gave the same triplets")
	}
	// One query sampled alone equals its share of the whole sample.
	p := NewPool(in)
	one := p.ForQuery(nil, in[0], Options{PerQuery: 4, Seed: 1})
	n := 0
	for _, tr := range a {
		if tr.Query == in[0].ID {
			n++
		}
	}
	if len(one) != 4 || n != 4 {
		t.Fatalf("query alone gave %d, in the sample %d; want 4 and 4", len(one), n)
	}
}

func TestSingleLabelYieldsNothing(t *testing.T) {
	ts, err := Sample(items(1, 5), Options{PerQuery: 2, Seed: 1})
	if err != nil || len(ts) != 0 {
		t.Fatalf("got %d triplets, %v; want none: there is no negative", len(ts), err)
	}
	if _, err := Sample(nil, Options{}); err == nil {
		t.Fatal("PerQuery 0 accepted")
	}
}

func TestLearnable(t *testing.T) {
	for _, c := range []struct {
		name  string
		items []Item
		want  string // "" for learnable, else a part of the reason
	}{
		{"two labels", items(2, 2), ""},
		{"one label", items(1, 5), `all carry one label ("L0")`},
		{"singletons", items(4, 1), "none of the 4 labels has 2 or more images"},
		{"unlabelled", []Item{{ID: "a"}, {ID: "b"}}, "no labelled images"},
		{"a pair and a negative", append(items(1, 2), Item{ID: "n", Label: "other"}), ""},
	} {
		err := NewPool(c.items).Learnable()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want learnable", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one saying %q", c.name, err, c.want)
		}
		// Learnable is exactly "Sample draws something".
		ts, _ := Sample(c.items, Options{PerQuery: 2, Seed: 1})
		if (len(ts) > 0) != (err == nil) {
			t.Errorf("%s: %d triplets drawn but Learnable says %v", c.name, len(ts), err)
		}
	}
}

// planted returns labels × per images whose bags of words are random
// sparse, L2-normalised vectors over dim words, so that each query ranks
// the other labels' images in an order of its own.
func planted(labels, per, dim int) []Item {
	r := rand.New(rand.NewPCG(3, 4))
	var out []Item
	for l := 0; l < labels; l++ {
		for i := 0; i < per; i++ {
			it := Item{ID: fmt.Sprintf("l%d-i%02d", l, i), Label: fmt.Sprintf("L%d", l)}
			for w := range dim {
				if r.IntN(3) == 0 {
					it.Words.Idx = append(it.Words.Idx, uint32(w))
					it.Words.Val = append(it.Words.Val, r.Float32())
				}
			}
			sparse.Normalize(it.Words)
			out = append(out, it)
		}
	}
	return out
}

// ranking returns the other labels' images by cosine with q, most
// similar first, with their scores.
func ranking(in []Item, q Item) (ids []string, score map[string]float64) {
	score = map[string]float64{}
	for _, it := range in {
		if it.Label != q.Label {
			ids = append(ids, it.ID)
			score[it.ID] = sparse.Dot(q.Words, it.Words)
		}
	}
	sort.SliceStable(ids, func(i, j int) bool { return score[ids[i]] > score[ids[j]] })
	return ids, score
}

// TestHardNegatives: on a planted group, every hard negative has another
// label than its query and is among the HardPool other-label images most
// similar to the query by TF-IDF cosine; random negatives are not (the
// test would fail with random sampling). With a HardFraction of one half,
// about half the negatives are mined.
func TestHardNegatives(t *testing.T) {
	in := planted(4, 15, 40)
	byID := map[string]Item{}
	for _, it := range in {
		byID[it.ID] = it
	}
	const pool = 3
	inTop := func(q Item, neg string) bool {
		ids, score := ranking(in, q)
		return score[neg] >= score[ids[pool-1]]
	}
	share := func(opt Options) float64 {
		ts, err := Sample(in, opt)
		if err != nil {
			t.Fatal(err)
		}
		top := 0
		for _, tr := range ts {
			q := byID[tr.Query]
			if byID[tr.Negative].Label == q.Label || byID[tr.Positive].Label != q.Label || tr.Positive == tr.Query {
				t.Fatalf("%s: bad triplet %+v", opt.Negatives, tr)
			}
			if inTop(q, tr.Negative) {
				top++
			}
		}
		if len(ts) != len(in)*opt.PerQuery {
			t.Fatalf("%s: %d triplets, want %d", opt.Negatives, len(ts), len(in)*opt.PerQuery)
		}
		return float64(top) / float64(len(ts))
	}
	if got := share(Options{PerQuery: 10, Seed: 1, Negatives: Hard, HardPool: pool, HardFraction: 1}); got != 1 {
		t.Errorf("hard: %.3f of the negatives are among the query's top %d, want all", got, pool)
	}
	// 3 of 45 other-label images: random negatives are in the top 3 about
	// 7% of the time.
	if got := share(Options{PerQuery: 10, Seed: 1, Negatives: Random}); got > 0.15 {
		t.Errorf("random: %.3f of the negatives are among the query's top %d, want about 0.07", got, pool)
	}
	if got := share(Options{PerQuery: 10, Seed: 1, Negatives: Hard, HardPool: pool, HardFraction: 0.5}); got < 0.4 || got > 0.65 {
		t.Errorf("half hard: %.3f of the negatives are among the query's top %d, want about 0.53", got, pool)
	}
}

// TestSemiHardNegatives: a semi-hard negative is less similar to the
// query than the triplet's positive, and among the HardPool most similar
// such images; where there is none, the negative is a random one of
// another label.
func TestSemiHardNegatives(t *testing.T) {
	in := planted(4, 15, 40)
	byID := map[string]Item{}
	for _, it := range in {
		byID[it.ID] = it
	}
	const pool = 3
	ts, err := Sample(in, Options{PerQuery: 10, Seed: 1, Negatives: SemiHard, HardPool: pool, HardFraction: 1})
	if err != nil {
		t.Fatal(err)
	}
	mined := 0
	for _, tr := range ts {
		q := byID[tr.Query]
		if byID[tr.Negative].Label == q.Label {
			t.Fatalf("negative of the query's label: %+v", tr)
		}
		sp := sparse.Dot(q.Words, byID[tr.Positive].Words)
		ids, score := ranking(in, q)
		var below []string
		for _, id := range ids {
			if score[id] < sp && score[id] > 0 {
				below = append(below, id)
			}
		}
		if len(below) == 0 {
			continue
		}
		mined++
		cut := score[below[min(pool, len(below))-1]]
		if s := score[tr.Negative]; s >= sp || s < cut {
			t.Errorf("%+v: negative scores %.4f, want below the positive's %.4f and at least the %d-th's %.4f", tr, s, sp, pool, cut)
		}
	}
	if mined < len(ts)/2 {
		t.Errorf("only %d of %d triplets had a semi-hard pool: the planted group does not test much", mined, len(ts))
	}
}

// TestMinedIsDeterministic: mined negatives and near positives, like
// random ones, are a function of the seed and the pool: input order
// changes nothing, a query alone draws what it draws in the whole sample,
// and another seed draws others.
func TestMinedIsDeterministic(t *testing.T) {
	in := planted(3, 12, 30)
	for _, pos := range []string{Random, Near} {
		mode := SemiHard
		if pos == Random {
			mode = Hard
		}
		opt := Options{PerQuery: 6, Seed: 5, Negatives: mode, Positives: pos, HardPool: 4, HardFraction: 0.75}
		a, _ := Sample(in, opt)
		shuffled := slices.Clone(in)
		rand.New(rand.NewPCG(9, 9)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		b, _ := Sample(shuffled, opt)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: input order changed the triplets", mode)
		}
		var mine []formats.Triplet
		for _, tr := range a {
			if tr.Query == in[7].ID {
				mine = append(mine, tr)
			}
		}
		one := NewPool(in).ForQuery(nil, in[7], opt)
		SortBySeq(one)
		if !reflect.DeepEqual(one, mine) {
			t.Errorf("%s: the query alone drew %v, in the sample %v", mode, one, mine)
		}
		opt.Seed = 6
		if c, _ := Sample(in, opt); reflect.DeepEqual(a, c) {
			t.Errorf("%s: another seed gave the same triplets", mode)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		opt Options
		ok  bool
	}{
		{Options{PerQuery: 1}, true},
		{Options{PerQuery: 1, Negatives: Random}, true},
		{Options{PerQuery: 1, Negatives: Hard, HardPool: 1, HardFraction: 1}, true},
		{Options{PerQuery: 1, Negatives: "hardest", HardPool: 1, HardFraction: 1}, false},
		{Options{PerQuery: 1, Negatives: SemiHard, HardPool: 0, HardFraction: 1}, false},
		{Options{PerQuery: 1, Negatives: Hard, HardPool: 3, HardFraction: 1.5}, false},
		{Options{PerQuery: 1, Positives: Near, HardPool: 1}, true},
		{Options{PerQuery: 1, Positives: "far", HardPool: 1}, false},
		{Options{PerQuery: 1, Positives: Near}, false},
	} {
		if err := c.opt.Validate(); (err == nil) != c.ok {
			t.Errorf("%+v: Validate() = %v, want ok %v", c.opt, err, c.ok)
		}
	}
}

// TestNearPositives: a near positive shares the query's label and is
// among the HardPool images of its label most similar to the query, which
// random positives mostly are not; with a HardFraction of one half, about
// half are.
func TestNearPositives(t *testing.T) {
	in := planted(3, 12, 30)
	byID := map[string]Item{}
	for _, it := range in {
		byID[it.ID] = it
	}
	const pool = 3
	// nearest reports whether pos is among the pool images of q's label
	// most similar to q.
	nearest := func(q Item, pos string) bool {
		var scores []float64
		for _, it := range in {
			if it.Label == q.Label && it.ID != q.ID {
				scores = append(scores, sparse.Dot(q.Words, it.Words))
			}
		}
		slices.Sort(scores)
		return sparse.Dot(q.Words, byID[pos].Words) >= scores[len(scores)-pool]
	}
	share := func(opt Options) float64 {
		ts, err := Sample(in, opt)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tr := range ts {
			q := byID[tr.Query]
			if byID[tr.Positive].Label != q.Label || tr.Positive == tr.Query || byID[tr.Negative].Label == q.Label {
				t.Fatalf("%s: bad triplet %+v", opt.Positives, tr)
			}
			if nearest(q, tr.Positive) {
				n++
			}
		}
		return float64(n) / float64(len(ts))
	}
	if got := share(Options{PerQuery: 8, Seed: 1, Positives: Near, HardPool: pool, HardFraction: 1}); got != 1 {
		t.Errorf("near: %.3f of the positives are among the query's %d nearest of its label, want all", got, pool)
	}
	// 3 of 11: about 27% of random positives are near.
	if got := share(Options{PerQuery: 8, Seed: 1, Positives: Random, HardPool: pool, HardFraction: 1}); got > 0.4 {
		t.Errorf("random: %.3f of the positives are among the query's %d nearest of its label, want about 0.27", got, pool)
	}
	if got := share(Options{PerQuery: 8, Seed: 1, Positives: Near, HardPool: pool, HardFraction: 0.5}); got < 0.5 || got > 0.75 {
		t.Errorf("half near: %.3f of the positives are among the query's %d nearest of its label, want about 0.64", got, pool)
	}
}
