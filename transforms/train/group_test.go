package train_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/triplets"
)

func groupBoWs(n, dim int) []formats.BoW {
	r := rand.New(rand.NewPCG(5, 6))
	bows := make([]formats.BoW, n)
	for i := range bows {
		b := formats.BoW{ImageID: fmt.Sprintf("im%03d", i), Label: fmt.Sprintf("c%d", i%4)}
		for w := range dim {
			if r.IntN(3) == 0 {
				b.WordIDs = append(b.WordIDs, uint32(w))
				b.Weights = append(b.Weights, r.Float32())
			}
		}
		bows[i] = b
	}
	return bows
}

// One group and one round is the sequential learner over the triplets of
// the whole corpus: the features made step by step equal those joined.
func TestOneGroupIsSequential(t *testing.T) {
	const dim = 30
	bows := groupBoWs(60, dim)
	opt := triplets.Options{PerQuery: 5, Seed: 2}
	items := make([]triplets.Item, len(bows))
	vec := map[string]sparse.Vector{}
	for i, b := range bows {
		items[i] = triplets.Item{ID: b.ImageID, Label: b.Label}
		vec[b.ImageID] = sparse.Vector{Idx: b.WordIDs, Val: b.Weights}
	}
	trips, err := triplets.Sample(items, opt)
	if err != nil {
		t.Fatal(err)
	}
	var feats []train.Feature
	for _, tr := range trips {
		u := sparse.TripletFeature(sparse.Vector{}, vec[tr.Query], vec[tr.Positive], vec[tr.Negative])
		feats = append(feats, train.Feature{Seq: tr.Seq, U: u})
	}
	o := train.ShardOptions{Learner: "solis-ada", Params: map[string]float64{"eta": 1, "lambda": 1e-3, "delta": 1e-8}, Dim: dim, Shards: 1, Rounds: 1}
	l, err := learners.New(o.Learner, dim, o.Params)
	if err != nil {
		t.Fatal(err)
	}
	// The sequential learner: every triplet in order.
	for _, ft := range feats {
		l.Update(ft.U)
	}
	want := l.Weights(nil)

	g, err := train.NewGroup(bows, split.Cut{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Triplets, trips) {
		t.Fatalf("the group drew %d triplets, triplets.Sample %d, or in another order", len(g.Triplets), len(trips))
	}
	fresh, err := train.NewTrainer(o)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := g.TrainShard(o, 0, train.RoundState{State: fresh.State()}, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, err := train.Average(train.RoundState{State: fresh.State()}, []train.ShardState{sh})
	if err != nil {
		t.Fatal(err)
	}
	got, err := train.Finish(o, st)
	if err != nil {
		t.Fatal(err)
	}
	if got.Triplets != int64(len(trips)) || !slices.Equal(got.Weights, want) {
		t.Errorf("group: %d triplets, weights %v\nsequential: %d, %v", got.Triplets, got.Weights, len(trips), want)
	}
}

func TestGroups(t *testing.T) {
	const mega = 32 << 20
	for _, c := range []struct {
		n, postings                     int64
		parts, per, perPostings, shards int
		g                               int
	}{
		{3280, 0, 4, 200_000, 0, 1, 1},
		{1_000_000, 0, 1000, 200_000, 0, 1, 5},
		{1000, 0, 1, 200_000, 0, 4, 1}, // never more groups than parts
		{500_000, 0, 500, 200_000, 0, 8, 8},
		{1_000_000, 100_000_000, 1000, 200_000, mega, 1, 5}, // synthetic images: the images bound
		{100_000, 170_000_000, 100, 200_000, mega, 1, 6},    // real photos: the postings bound
		{100_000, 170_000_000, 100, 200_000, 0, 1, 1},       // no bound by postings
		{100_000, 170_000_000, 4, 200_000, mega, 1, 4},      // never more groups than parts
		{30_000, 51_000_000, 30, 200_000, mega, 4, 4},       // shards ask for more
		{10_000, 17_000_000, 10, 200_000, mega, 1, 1},       // one group under the bound
		{100_000, 0, 100, 200_000, mega, 1, 1},              // postings unknown (parts of old runs)
	} {
		if g := train.Groups(c.n, c.postings, c.parts, c.per, c.perPostings, c.shards); g != c.g {
			t.Errorf("Groups(%d, %d, %d, %d, %d, %d) = %d, want %d", c.n, c.postings, c.parts, c.per, c.perPostings, c.shards, g, c.g)
		}
	}
}

// No held-out image is in any triplet, as query, positive or negative,
// whatever the seed and fraction; and every other labelled image can be.
func TestGroupLeavesOutQueries(t *testing.T) {
	bows := groupBoWs(200, 20)
	ids, labels := make([]string, len(bows)), make([]string, len(bows))
	counts := map[string]int{}
	for i, b := range bows {
		ids[i], labels[i] = b.ImageID, b.Label
		counts[b.Label]++
	}
	for seed := range uint64(20) {
		fraction := []float64{0.1, 0.2, 0.5}[seed%3]
		held, err := split.Queries(ids, labels, seed, fraction)
		if err != nil {
			t.Fatal(err)
		}
		sel, err := split.NewSelector(seed, fraction, counts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ids {
			if err := sel.Offer(ids[i], labels[i]); err != nil {
				t.Fatal(err)
			}
		}
		cut, err := sel.Cut()
		if err != nil {
			t.Fatal(err)
		}
		g, err := train.NewGroup(bows, cut, triplets.Options{PerQuery: 5, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if want := len(bows) - len(held); g.Images() != want {
			t.Errorf("seed %d: the group holds %d images, want the %d training ones", seed, g.Images(), want)
		}
		used := map[string]bool{}
		for _, tr := range g.Triplets {
			for _, id := range []string{tr.Query, tr.Positive, tr.Negative} {
				if held[id] {
					t.Fatalf("seed %d fraction %v: held-out image %s in triplet %+v", seed, fraction, id, tr)
				}
				used[id] = true
			}
		}
		if len(used) < len(bows)-len(held)-5 {
			t.Errorf("seed %d: triplets use %d of the %d training images", seed, len(used), len(bows)-len(held))
		}
	}
}

// TestTrainShardOfContinues: a learner trained on the triplets of some
// queries, its state saved, then restored and trained on the others'
// triplets (a warm start) is the sequential learner over the first
// triplets and then the second, bit for bit.
func TestTrainShardOfContinues(t *testing.T) {
	const dim = 30
	bows := groupBoWs(60, dim)
	opt := triplets.Options{PerQuery: 5, Seed: 2}
	g, err := train.NewGroup(bows, split.Cut{}, opt)
	if err != nil {
		t.Fatal(err)
	}
	old := func(tr formats.Triplet) bool { return tr.Query < bows[45].ImageID }
	young := func(tr formats.Triplet) bool { return !old(tr) }
	vec := map[string]sparse.Vector{}
	for _, b := range bows {
		vec[b.ImageID] = sparse.Vector{Idx: b.WordIDs, Val: b.Weights}
	}
	o := train.ShardOptions{Learner: "solis-ada", Params: map[string]float64{"eta": 1, "lambda": 1e-3, "delta": 1e-8}, Dim: dim, Shards: 1, Rounds: 1}
	l, err := learners.New(o.Learner, dim, o.Params)
	if err != nil {
		t.Fatal(err)
	}
	var nYoung int64
	for _, keep := range []func(formats.Triplet) bool{old, young} {
		for _, tr := range g.Triplets {
			if keep(tr) {
				l.Update(sparse.TripletFeature(sparse.Vector{}, vec[tr.Query], vec[tr.Positive], vec[tr.Negative]))
				if !old(tr) {
					nYoung++
				}
			}
		}
	}
	want := l.Weights(nil)

	fresh, err := train.NewTrainer(o)
	if err != nil {
		t.Fatal(err)
	}
	st := train.RoundState{State: fresh.State()}
	for i, keep := range []func(formats.Triplet) bool{old, young} {
		if i == 1 {
			st = train.RoundState{State: st.State} // a new run's bookkeeping, the saved state
		}
		sh, err := g.TrainShardOf(o, 0, st, 0, 1, keep)
		if err != nil {
			t.Fatal(err)
		}
		if st, err = train.Average(st, []train.ShardState{sh}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := train.Finish(o, st)
	if err != nil {
		t.Fatal(err)
	}
	if nYoung == 0 || nYoung == int64(len(g.Triplets)) || got.Triplets != nYoung || !slices.Equal(got.Weights, want) {
		t.Errorf("warm start: %d triplets (of %d, want %d), weights %v\nsequential: %v", got.Triplets, len(g.Triplets), nYoung, got.Weights, want)
	}
}

// TestWarmKeep: a warm-started learner keeps every triplet of a new
// query and about replay old-query triplets per new one, the same ones
// however often it is asked, each replay's a subset of a larger one's;
// a negative replay, or one beyond what the group holds, keeps them all.
func TestWarmKeep(t *testing.T) {
	bows := groupBoWs(400, 20)
	g, err := train.NewGroup(bows, split.Cut{}, triplets.Options{PerQuery: 10, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Images 0–359 were there the night before: a tenth are new.
	var carried []string
	for _, b := range bows[:360] {
		carried = append(carried, b.ImageID)
	}
	slices.Sort(carried)
	isOld := func(tr formats.Triplet) bool { _, ok := slices.BinarySearch(carried, tr.Query); return ok }
	kept := func(replay float64) (young int, old map[int64]bool) {
		keep := g.WarmKeep(carried, replay)
		old = map[int64]bool{}
		for _, tr := range g.Triplets {
			switch {
			case keep != nil && !keep(tr): // nil keeps every one
			case isOld(tr):
				old[tr.Seq] = true
			default:
				young++
			}
		}
		return young, old
	}
	var nYoung, nOld int
	for _, tr := range g.Triplets {
		if isOld(tr) {
			nOld++
		} else {
			nYoung++
		}
	}
	if nYoung == 0 || nOld < 5*nYoung {
		t.Fatalf("%d new-query and %d old-query triplets: the test needs both", nYoung, nOld)
	}
	var prev map[int64]bool
	for _, replay := range []float64{0, 1, 3} {
		young, old := kept(replay)
		if young != nYoung {
			t.Errorf("replay %g: %d new-query triplets kept, want all %d", replay, young, nYoung)
		}
		// The old ones are kept independently with probability
		// p = replay·nYoung/nOld: allow four standard deviations.
		p := replay * float64(nYoung) / float64(nOld)
		want, sd := p*float64(nOld), math.Sqrt(p*(1-p)*float64(nOld))
		if d := math.Abs(float64(len(old)) - want); d > 4*sd+0.5 {
			t.Errorf("replay %g: %d old-query triplets replayed, want %.0f ± %.0f", replay, len(old), want, 4*sd)
		}
		if _, again := kept(replay); !maps.Equal(old, again) {
			t.Errorf("replay %g: another call replays other triplets", replay)
		}
		for seq := range prev {
			if !old[seq] {
				t.Errorf("replay %g leaves out triplet %d, which a smaller replay keeps", replay, seq)
				break
			}
		}
		prev = old
	}
	for _, replay := range []float64{train.ReplayAll, float64(nOld)} {
		if young, old := kept(replay); young+len(old) != len(g.Triplets) {
			t.Errorf("replay %g: %d of %d triplets kept, want all", replay, young+len(old), len(g.Triplets))
		}
	}
	// With nothing carried every query is new.
	if keep := g.WarmKeep(nil, 0); keep == nil || !keep(g.Triplets[0]) {
		t.Error("no image carried: a triplet left out")
	}
}

// TestGroupMinesNegatives: a group mines hard negatives from its own bags
// of words: each negative is among the HardPool images of other labels
// most similar to its query (by the dot product of their bags), which
// random negatives, or a group that did not hand its bags to the
// sampler, would not be.
func TestGroupMinesNegatives(t *testing.T) {
	bows := groupBoWs(80, 30)
	vec := map[string]sparse.Vector{}
	label := map[string]string{}
	for _, b := range bows {
		vec[b.ImageID], label[b.ImageID] = sparse.Vector{Idx: b.WordIDs, Val: b.Weights}, b.Label
	}
	const pool = 2
	g, err := train.NewGroup(bows, split.Cut{}, triplets.Options{PerQuery: 4, Seed: 3, Negatives: triplets.Hard, HardPool: pool, HardFraction: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Triplets) != len(bows)*4 {
		t.Fatalf("%d triplets, want %d", len(g.Triplets), len(bows)*4)
	}
	for _, tr := range g.Triplets {
		var scores []float64
		for _, b := range bows {
			if b.Label != label[tr.Query] {
				scores = append(scores, sparse.Dot(vec[tr.Query], vec[b.ImageID]))
			}
		}
		slices.Sort(scores)
		if s := sparse.Dot(vec[tr.Query], vec[tr.Negative]); label[tr.Negative] == label[tr.Query] || s < scores[len(scores)-pool] {
			t.Fatalf("%+v: negative scores %.4f, below the query's %d-th most similar image of another label (%.4f)", tr, s, pool, scores[len(scores)-pool])
		}
	}
}
