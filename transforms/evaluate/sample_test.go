package evaluate

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/split"
)

// groupedIDs returns labels × per images whose ids sort by label and
// differ in their last characters, as real collections' do: a bucket's
// paths without their extension (class07/0012) or a numbered set listed
// class by class (image_0001…image_0080 of the first label, then the
// next). Such ids are where an unmixed hash of the id fails: FNV-1a's
// last multiplication leaves its high bits nearly blind to the last
// characters, so the smallest keys are runs of neighbouring ids.
func groupedIDs(labels, per int, numbered bool) (ids, labs []string, counts map[string]int) {
	counts = map[string]int{}
	for l := range labels {
		label := fmt.Sprintf("class%02d", l)
		for i := range per {
			id := fmt.Sprintf("%s/%04d", label, i+1)
			if numbered {
				id = fmt.Sprintf("image_%04d", l*per+i+1)
			}
			ids, labs = append(ids, id), append(labs, label)
			counts[label]++
		}
	}
	return ids, labs, counts
}

// TestSelectQueriesStratified caps 17 labels × 80 images, their ids
// grouped by label (groupedIDs), at 100 queries: the sample's label histogram must match the labels'
// proportional shares (100/17 each). Pearson's χ² over the 17 labels has
// 16 degrees of freedom; 39.25 is its 0.999 quantile, so a sample drawn
// uniformly at random fails it once in a thousand seeds, and a sample of
// a few contiguous runs of ids (a handful of labels) fails it always.
func TestSelectQueriesStratified(t *testing.T) {
	const labels, per, max = 17, 80, 100
	for _, numbered := range []bool{false, true} {
		ids, labs, counts := groupedIDs(labels, per, numbered)
		for seed := uint64(1); seed <= 5; seed++ {
			opt := Options{MaxQueries: max, Seed: seed}
			qs := selectQueries(ids, labs, counts, split.Cut{}, opt)
			if len(qs) != max {
				t.Fatalf("seed %d: %d queries, want the cap %d", seed, len(qs), max)
			}
			hist := map[string]int{}
			for _, q := range qs {
				hist[q.Label]++
			}
			want := float64(max) / labels
			chi2 := 0.0
			for l := range counts {
				d := float64(hist[l]) - want
				chi2 += d * d / want
			}
			if chi2 > 39.25 {
				t.Errorf("ids %s…, seed %d: label histogram %v: χ² = %.1f over 16 degrees of freedom, want ≤ 39.25 (p 0.001)", ids[0], seed, hist, chi2)
			}
			for l := range counts {
				if hist[l] < 1 {
					t.Errorf("seed %d: label %s has no query of the %d", seed, l, max)
				}
			}
			again := selectQueries(ids, labs, counts, split.Cut{}, opt)
			for i := range qs {
				if qs[i].ID != again[i].ID {
					t.Fatalf("seed %d: query %d is %s, then %s: the sample is not a function of the seed", seed, i, qs[i].ID, again[i].ID)
				}
			}
		}
	}
}

// TestApportion checks the quotas of uneven labels: the cap is met
// exactly, every label with a candidate gets one, and no label gets a
// whole query more than its proportional share; the queries the minimum
// gives small labels come from the others. Without small labels the
// quotas are Hamilton's.
func TestApportion(t *testing.T) {
	counts := map[string]int{"a": 500, "b": 300, "c": 150, "d": 40, "e": 7, "f": 2, "g": 1}
	total := 1000
	for _, max := range []int{7, 8, 13, 100, 333, 999} {
		q := Apportion(3, max, counts)
		sum := 0
		for i, l := range q.Labels {
			sum += q.Keep[i]
			share := float64(max) * float64(counts[l]) / float64(total)
			if q.Keep[i] < 1 || q.Keep[i] > counts[l] {
				t.Errorf("cap %d: label %s keeps %d of %d, want 1…%d", max, l, q.Keep[i], counts[l], counts[l])
			}
			if share >= 1 && float64(q.Keep[i]) >= share+1 {
				t.Errorf("cap %d: label %s keeps %d, share %.2f: want less than one more", max, l, q.Keep[i], share)
			}
		}
		if sum != max || len(q.Labels) != len(counts) {
			t.Errorf("cap %d: quotas %v sum to %d over %d labels, want %d over %d", max, q, sum, len(q.Labels), max, len(counts))
		}
	}
	// Shares 50.5, 30.3, 15.2 and 4.04 of 100: the floors give 99, and
	// the largest remainder, a's, the last.
	big := map[string]int{"a": 500, "b": 300, "c": 150, "d": 40}
	if q := Apportion(3, 100, big); !slices.Equal(q.Keep, []int{51, 30, 15, 4}) {
		t.Errorf("quotas %v, want Hamilton's 51, 30, 15, 4", q)
	}
	if q := Apportion(3, 0, counts); q.Of("a") != 500 || q.Of("g") != 1 {
		t.Errorf("no cap: quotas %v, want every candidate", q)
	}
	if q := Apportion(3, 1000, counts); q.Of("a") != 500 || q.Of("f") != 2 {
		t.Errorf("cap at the total: quotas %v, want every candidate", q)
	}
}

// TestApportionTies checks that of 17 equal labels and a cap of 100 (5.88
// each), 15 get 6 and 2 get 5, and which two is decided by the seed's
// label keys, not by the labels' order.
func TestApportionTies(t *testing.T) {
	_, _, counts := groupedIDs(17, 80, false)
	fives := map[string]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		q := Apportion(seed, 100, counts)
		n := map[int]int{}
		for i, l := range q.Labels {
			n[q.Keep[i]]++
			if q.Keep[i] == 5 {
				fives[l] = true
			}
		}
		if n[6] != 15 || n[5] != 2 {
			t.Errorf("seed %d: quotas %v, want 15 of 6 and 2 of 5", seed, q.Keep)
		}
	}
	if len(fives) <= 2 {
		t.Errorf("the labels given 5 over 8 seeds are %v: want them to vary with the seed", fives)
	}
}

// TestApportionFewerThanLabels caps 200 labels at 50 queries: 50 labels
// get one each, drawn by the seed, not the first 50 in label order.
func TestApportionFewerThanLabels(t *testing.T) {
	counts := map[string]int{}
	for l := range 200 {
		counts[fmt.Sprintf("label%03d", l)] = 1 + l%5
	}
	for seed := uint64(1); seed <= 3; seed++ {
		q := Apportion(seed, 50, counts)
		kept, first := 0, 0
		for i := range q.Labels {
			if q.Keep[i] > 1 {
				t.Errorf("seed %d: label %s keeps %d, want at most 1", seed, q.Labels[i], q.Keep[i])
			}
			kept += q.Keep[i]
			if i < 50 {
				first += q.Keep[i]
			}
		}
		if kept != 50 || first == 50 {
			t.Errorf("seed %d: %d labels kept, %d of them the first 50: want 50, drawn over all 200", seed, kept, first)
		}
	}
}

// TestPickInParts checks that picking part by part, then picking the
// union of the parts' picks, keeps what picking all at once keeps: the
// property a sample drawn by workers relies on.
func TestPickInParts(t *testing.T) {
	ids, labs, counts := groupedIDs(17, 80, true)
	q := Apportion(5, 100, counts)
	at := func(set []int) func(int) (uint64, string, string) {
		return func(k int) (uint64, string, string) {
			i := set[k]
			return QueryKey(5, ids[i]), ids[i], labs[i]
		}
	}
	all := make([]int, len(ids))
	for i := range all {
		all[i] = i
	}
	whole := q.Pick(len(all), at(all))
	var merged []int
	for p := range 7 {
		var part []int
		for i := p; i < len(ids); i += 7 {
			part = append(part, i)
		}
		for _, k := range q.Pick(len(part), at(part)) {
			merged = append(merged, part[k])
		}
	}
	slices.Sort(merged)
	var again []int
	for _, k := range q.Pick(len(merged), at(merged)) {
		again = append(again, merged[k])
	}
	if !slices.Equal(whole, again) || len(whole) != 100 {
		t.Errorf("picked in parts %v, at once %v: want the same 100", again, whole)
	}
}
