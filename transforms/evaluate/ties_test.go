package evaluate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/internal/testkit"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

// expected averages the package's plain metrics over every order of the
// tied results of r: each group's relevant results may sit at any of the
// C(N, Rel) sets of its positions, all equally likely. It is the
// definition the tie-aware metrics compute in closed form.
func expected(r TiedRanking, total int) (ap, p10, ndcg10 float64) {
	var orders int
	var rel []bool
	var walk func(g int)
	walk = func(g int) {
		if g == len(r.Groups) {
			cut := rel
			if r.Depth > 0 && len(cut) > r.Depth {
				cut = cut[:r.Depth]
			}
			gains := make([]float64, len(cut))
			for i, x := range cut {
				gains[i] = b2f(x)
			}
			ideal := make([]float64, total)
			for i := range ideal {
				ideal[i] = 1
			}
			orders++
			ap += AveragePrecision(cut, total)
			p10 += PrecisionAt(cut, 10)
			ndcg10 += NDCGAt(gains, ideal, 10)
			return
		}
		n, k := r.Groups[g].N, r.Groups[g].Rel
		start := len(rel)
		// Every set of k of the group's n positions, as a bit mask.
		for mask := 0; mask < 1<<n; mask++ {
			if popcount(mask) != k {
				continue
			}
			rel = rel[:start]
			for i := range n {
				rel = append(rel, mask&(1<<i) != 0)
			}
			walk(g + 1)
		}
		rel = rel[:start]
	}
	walk(0)
	return ap / float64(orders), p10 / float64(orders), ndcg10 / float64(orders)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// Worked by hand: groups (1 result, relevant), (3, 1 relevant), (2, both
// relevant), 5 relevant in all (one never ranked).
//
//	AP: rank 1 gives 1; the group at ranks 2–4 holds its relevant result
//	at each rank with chance 1/3, 2 found by then: (2/2 + 2/3 + 2/4)/3 =
//	13/18; ranks 5 and 6 find the 3rd and 4th: 3/5 + 4/6. AP = (1 + 13/18
//	+ 3/5 + 2/3)/5 = 269/450.
//	P@3: 1 + 2·(1/3) relevant expected in the first 3: 5/9.
//	P@10: 4 relevant in 6 results, divided by 10: 0.4.
//	Cut at depth 3 the group at ranks 2–4 is retrieved up to rank 3 only:
//	AP = (1 + (2/2 + 2/3)/3)/5 = 14/45.
func TestTiedRankingHandComputed(t *testing.T) {
	r := TiedRanking{Groups: []TieGroup{{Score: 3, N: 1, Rel: 1}, {Score: 2, N: 3, Rel: 1}, {Score: 1, N: 2, Rel: 2}}}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"AP", r.AveragePrecision(5), 269.0 / 450},
		{"P@3", r.PrecisionAt(3), 5.0 / 9},
		{"P@10", r.PrecisionAt(10), 0.4},
		{"AP at depth 3", TiedRanking{Groups: r.Groups, Depth: 3}.AveragePrecision(5), 14.0 / 45},
		{"P@10 at depth 3", TiedRanking{Groups: r.Groups, Depth: 3}.PrecisionAt(10), (1 + 2.0/3) / 10},
		// NDCG@2: rank 1 gains 1, rank 2 gains 1/3 in expectation; the
		// ideal gains 1 at both.
		{"NDCG@2", r.NDCGAt(5, 2), (1 + 1/(3*math.Log2(3))) / (1 + 1/math.Log2(3))},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Every order of the ties, averaged, in small random rankings, cut or
	// not, the cut often inside a group.
	rng := rand.New(rand.NewPCG(4, 5))
	for trial := range 300 {
		var g []TieGroup
		total := 0
		for i := range 1 + rng.IntN(5) {
			n := 1 + rng.IntN(5)
			k := rng.IntN(n + 1)
			g = append(g, TieGroup{Score: float64(-i), N: n, Rel: k})
			total += k
		}
		total += rng.IntN(3)
		r := TiedRanking{Groups: g, Depth: rng.IntN(12)}
		ap, p10, ndcg := expected(r, total)
		if got := r.AveragePrecision(total); math.Abs(got-ap) > 1e-12 {
			t.Errorf("trial %d %+v of %d relevant: AP %v, over every order %v", trial, r, total, got, ap)
		}
		if got := r.PrecisionAt(10); math.Abs(got-p10) > 1e-12 {
			t.Errorf("trial %d %+v: P@10 %v, over every order %v", trial, r, got, p10)
		}
		if got := r.NDCGAt(total, 10); math.Abs(got-ndcg) > 1e-12 {
			t.Errorf("trial %d %+v of %d relevant: NDCG@10 %v, over every order %v", trial, r, total, got, ndcg)
		}
	}
}

// Without ties the tie-aware metrics are the plain ones, to the last bit.
func TestTiedRankingWithoutTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	for trial := range 200 {
		n := rng.IntN(40)
		var g []TieGroup
		var rel []bool
		for i := range n {
			x := rng.IntN(3) == 0
			g, rel = append(g, TieGroup{Score: float64(n - i), N: 1, Rel: btoi(x)}), append(rel, x)
		}
		total := rng.IntN(5)
		for _, x := range rel {
			total += btoi(x)
		}
		depth := rng.IntN(50)
		cut := rel
		if depth > 0 && len(cut) > depth {
			cut = cut[:depth]
		}
		gains := make([]float64, len(cut))
		for i, x := range cut {
			gains[i] = b2f(x)
		}
		ideal := make([]float64, total)
		for i := range ideal {
			ideal[i] = 1
		}
		r := TiedRanking{Groups: g, Depth: depth}
		if got, want := r.AveragePrecision(total), AveragePrecision(cut, total); got != want {
			t.Errorf("trial %d: AP %v, plain %v", trial, got, want)
		}
		if got, want := r.PrecisionAt(10), PrecisionAt(cut, 10); got != want {
			t.Errorf("trial %d: P@10 %v, plain %v", trial, got, want)
		}
		if got, want := r.NDCGAt(total, 10), NDCGAt(gains, ideal, 10); got != want {
			t.Errorf("trial %d: NDCG@10 %v, plain %v", trial, got, want)
		}
		if got, want := r.InterpolatedPrecision(nil, total), InterpolatedPrecision(nil, cut, total); !slices.Equal(got, want) {
			t.Errorf("trial %d: PR %v, plain %v", trial, got, want)
		}
	}
}

// chanceAP is the expected average precision of a uniformly random order
// of n results of which r are relevant, (r−1)/(n−1) + (n−r)·H_n/(n(n−1))
// (H_n the n-th harmonic number): the sum over ranks i of
// (r/n)·(1 + (i−1)(r−1)/(n−1))/i, divided by r.
func chanceAP(n, r int) float64 {
	if n == 1 {
		return float64(r)
	}
	var h float64
	for i := 1; i <= n; i++ {
		h += 1 / float64(i)
	}
	return float64(r-1)/float64(n-1) + float64(n-r)*h/float64(n*(n-1))
}

// A model that scores everything 0 orders nothing: its mAP is chance, the
// mean over queries of chanceAP(images − 1, relevant), and its P@10 the
// mean share of relevant images — whatever the ids, which group by label
// here (and so, ordered by id, would put a query's own label first).
func TestZeroModelScoresChance(t *testing.T) {
	var docs []formats.BoW
	counts := map[string]int{"a": 7, "b": 12, "c": 21}
	for _, l := range []string{"a", "b", "c"} {
		for i := range counts[l] {
			docs = append(docs, formats.BoW{ImageID: fmt.Sprintf("%s%02d", l, i), Label: l, WordIDs: []uint32{uint32(i % 4)}, Weights: []float32{1}})
		}
	}
	n := len(docs)
	var wantAP, wantP10 float64
	for _, c := range counts {
		wantAP += float64(c) * chanceAP(n-1, c-1)
		wantP10 += float64(c) * float64(c-1) / float64(n-1)
	}
	wantAP, wantP10 = wantAP/float64(n), wantP10/float64(n)

	zero := learners.Model{Learner: "zero", Weights: make([]float32, 12)}
	rows, _, err := BoW(slices.Clone(docs), zero, split.Cut{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sharded := sharded(t, docs, zero, split.Cut{}, Options{}, 3, 11)
	// Dense: every row the same features, so every distance is 0.
	var dense []train.DenseRow
	for _, d := range docs {
		dense = append(dense, train.DenseRow{ImageID: d.ImageID, Label: d.Label, X: []float32{1, 2, 3, 4, 5, 6, 7}})
	}
	denseRows, _, err := Dense(dense, learners.BaselineModel(learners.BaselineEuclidean, denseDims), split.Cut{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string][]formats.ReportRow{"BoW": rows, "sharded": sharded, "Dense": denseRows} {
		if len(r) != 1 || r[0].Queries != int64(n) {
			t.Fatalf("%s: rows %+v, want one of %d queries", name, r, n)
		}
		if math.Abs(r[0].MAP-wantAP) > 1e-12 || math.Abs(r[0].PrecisionAt10-wantP10) > 1e-12 {
			t.Errorf("%s: mAP %v, P@10 %v; chance is %v and %v", name, r[0].MAP, r[0].PrecisionAt10, wantAP, wantP10)
		}
	}
}

// renamed returns docs under new ids: the same images in another id
// order, so ordinals, chunks and shards all see them otherwise.
func renamed(ids []string, seed uint64) map[string]string {
	perm := rand.New(rand.NewPCG(seed, 9)).Perm(len(ids))
	out := make(map[string]string, len(ids))
	for i, id := range ids {
		out[id] = fmt.Sprintf("r%03d", perm[i])
	}
	return out
}

// Renaming the images (so permuting their ordinals) cannot change any
// query's metrics: tied results are not ordered by id. Models with many
// ties: a sparse weighting that scores most images 0, and ITQ and LSH
// codes of a few bits (Hamming distances).
func TestIdsCarryNoInformation(t *testing.T) {
	docs := randomDocs(120, 12, 7)
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ImageID)
	}
	sparseModel := learners.Model{Learner: "sparse", Weights: []float32{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2}}
	rows := randomDenseRows(70, 4)
	var denseIDs []string
	for _, r := range rows {
		denseIDs = append(denseIDs, r.ImageID)
	}
	models := denseModels(t, rows)
	for seed := range uint64(3) {
		names := renamed(ids, seed)
		moved := slices.Clone(docs)
		for i := range moved {
			moved[i].ImageID = names[moved[i].ImageID]
		}
		_, want, err := BoW(slices.Clone(docs), sparseModel, split.Cut{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := BoW(moved, sparseModel, split.Cut{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sameScores(t, "sparse bag-of-words model", want, got, names)

		names = renamed(denseIDs, seed)
		movedRows := slices.Clone(rows)
		for i := range movedRows {
			movedRows[i].ImageID = names[movedRows[i].ImageID]
		}
		for _, m := range models[1:3] {
			_, want, err := Dense(slices.Clone(rows), m, split.Cut{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := Dense(slices.Clone(movedRows), m, split.Cut{}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sameScores(t, m.Learner, want, got, names)
		}
	}
}

// sameScores fails unless every query of want has, under its new name,
// the same metrics in got.
func sameScores(t *testing.T, name string, want, got []QueryScore, names map[string]string) {
	t.Helper()
	by := map[string]QueryScore{}
	for _, q := range got {
		by[q.ID] = q
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d queries renamed, %d before", name, len(got), len(want))
	}
	for _, w := range want {
		g := by[names[w.ID]]
		if g.AP != w.AP || g.P10 != w.P10 || g.NDCG10 != w.NDCG10 || !slices.Equal(g.PR, w.PR) {
			t.Errorf("%s: query %s renamed %s: AP %v P@10 %v NDCG@10 %v, before %v %v %v", name, w.ID, names[w.ID], g.AP, g.P10, g.NDCG10, w.AP, w.P10, w.NDCG10)
		}
	}
}

func TestKthLargest(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := range 200 {
		x := make([]uint64, 1+rng.IntN(60))
		for i := range x {
			x[i] = uint64(rng.IntN(8)) // many equal values
		}
		sorted := slices.Clone(x)
		slices.Sort(sorted)
		slices.Reverse(sorted)
		k := 1 + rng.IntN(len(x))
		if got := kthLargest(x, k); got != sorted[k-1] {
			t.Fatalf("trial %d: %d-th largest of %v = %v, want %v", trial, k, sorted, got, sorted[k-1])
		}
	}
}

// Sort keys order as the scores do, tie exactly when they do, and give
// the scores back; the radix sort agrees with a comparison sort.
func TestSortKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	scores := []float64{math.Inf(-1), -3.5, -1e-300, math.Copysign(0, -1), 0, 1e-300, 2, 2, math.Inf(1)}
	for range 2000 {
		scores = append(scores, float64(rng.IntN(50)-25)/4, rng.NormFloat64()*1e6)
	}
	for i, a := range scores {
		if fromKey(sortKey(a)) != a {
			t.Errorf("score %v comes back as %v", a, fromKey(sortKey(a)))
		}
		b := scores[(i*7+3)%len(scores)]
		if (a < b) != (sortKey(a) < sortKey(b)) || (a == b) != (sortKey(a) == sortKey(b)) {
			t.Errorf("scores %v, %v: keys %x, %x", a, b, sortKey(a), sortKey(b))
		}
	}
	keys := make([]uint64, len(scores))
	for i, s := range scores {
		keys[i] = sortKey(s)
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	radixSort(keys, nil)
	if !slices.Equal(keys, want) {
		t.Error("radix sort differs from slices.Sort")
	}
}

func TestTiedRankingPanics(t *testing.T) {
	r := TiedRanking{Groups: []TieGroup{{Score: 1, N: 3, Rel: 2}}}
	testkit.MustPanic(t, "AP more relevant than total", "2 relevant results ranked but totalRelevant = 1", func() { r.AveragePrecision(1) })
	testkit.MustPanic(t, "negative total", "totalRelevant = -1", func() { r.AveragePrecision(-1) })
	bad := TiedRanking{Groups: []TieGroup{{Score: 1, N: 2, Rel: 3}}}
	testkit.MustPanic(t, "group of more relevant than results", "tie group of 2 results, 3 relevant", func() { bad.PrecisionAt(10) })
	testkit.MustPanic(t, "P@0", "PrecisionAt k = 0", func() { r.PrecisionAt(0) })
	testkit.MustPanic(t, "NDCG@0", "NDCGAt k = 0", func() { r.NDCGAt(2, 0) })
}
