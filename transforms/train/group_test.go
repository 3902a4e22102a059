package train_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
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
	want, err := train.Run(l, feats)
	if err != nil {
		t.Fatal(err)
	}

	g, err := train.NewGroup(bows, opt)
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
	if got.Triplets != int64(len(trips)) || !slices.Equal(got.Weights, want.Weights) {
		t.Errorf("group: %d triplets, weights %v\nsequential: %d, %v", got.Triplets, got.Weights, len(trips), want.Weights)
	}
}

func TestGroups(t *testing.T) {
	for _, c := range []struct {
		n                     int64
		parts, per, shards, g int
	}{
		{3280, 4, 200_000, 1, 1},
		{1_000_000, 1000, 200_000, 1, 5},
		{1000, 1, 200_000, 4, 1}, // never more groups than parts
		{500_000, 500, 200_000, 8, 8},
	} {
		if g := train.Groups(c.n, c.parts, c.per, c.shards); g != c.g {
			t.Errorf("Groups(%d, %d, %d, %d) = %d, want %d", c.n, c.parts, c.per, c.shards, g, c.g)
		}
	}
}
