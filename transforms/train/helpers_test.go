package train_test

// The small, seeded training data of the tests, and sharded training
// written out as a plain loop (simulate): the specification the sharded
// pass must meet.

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/train"
)

// denseDims are the modality dimensions of denseRows.
var denseDims = []int{3, 4}

// denseRows makes n labelled rows in two classes: the first modality
// carries the class, the second is noise.
func denseRows(n int) []train.DenseRow {
	r := rand.New(rand.NewPCG(5, 6))
	rows := make([]train.DenseRow, n)
	for i := range rows {
		c := i % 2
		x := make([]float32, 7)
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		for j := range 3 {
			x[j] += float32(3 * c)
		}
		rows[i] = train.DenseRow{ImageID: fmt.Sprintf("img%03d", i), Label: fmt.Sprintf("c%d", c), X: x}
	}
	return rows
}

// denseTriplets draws n valid triplets over rows.
func denseTriplets(rows []train.DenseRow, n int) []formats.Triplet {
	r := rand.New(rand.NewPCG(7, 8))
	var out []formats.Triplet
	for len(out) < n {
		q, p, ng := rows[r.IntN(len(rows))], rows[r.IntN(len(rows))], rows[r.IntN(len(rows))]
		if q.ImageID == p.ImageID || q.Label != p.Label || q.Label == ng.Label {
			continue
		}
		out = append(out, formats.Triplet{Seq: int64(r.Uint64() >> 1), Query: q.ImageID, Positive: p.ImageID, Negative: ng.ImageID})
	}
	return out
}

// denseFeatures is each triplet of trips with its three images' rows, in
// Seq order.
func denseFeatures(rows []train.DenseRow, trips []formats.Triplet) []train.Feature {
	byID := map[string]train.DenseRow{}
	for _, r := range rows {
		byID[r.ImageID] = r
	}
	var feats []train.Feature
	for _, tr := range trips {
		feats = append(feats, train.Feature{Seq: tr.Seq, X: byID[tr.Query].X, P: byID[tr.Positive].X, N: byID[tr.Negative].X})
	}
	sort.Slice(feats, func(i, j int) bool { return feats[i].Seq < feats[j].Seq })
	return feats
}

// randomFeatures makes n bag-of-words triplet features over dim words, in
// random Seq order; every third word pushes the other way, so a learner
// has something to learn.
func randomFeatures(n, dim int) []train.Feature {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]train.Feature, n)
	for i := range out {
		var u sparse.Vector
		for j := 0; j < dim; j++ {
			if r.Float64() < 0.15 {
				u.Idx = append(u.Idx, uint32(j))
				v := r.Float64() * 0.5
				if j%3 == 0 {
					v = -v / 3
				}
				u.Val = append(u.Val, float32(v))
			}
		}
		out[i] = train.Feature{Seq: int64(r.Uint64() >> 1), U: u}
	}
	return out
}

// simulate is sharded training of a bag-of-words learner written out by
// hand: round by round, shard by shard, each shard's learner restored from
// the round's state and the states averaged. It returns the final weights.
func simulate(feats []train.Feature, opt train.ShardOptions) ([]float32, error) {
	sorted := append([]train.Feature(nil), feats...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
	l, err := learners.New(opt.Learner, opt.Dim, opt.Params)
	if err != nil {
		return nil, err
	}
	state := l.State()
	for r := 0; r < opt.Rounds; r++ {
		var states []learners.State
		for sh := 0; sh < opt.Shards; sh++ {
			var mine []train.Feature
			for _, f := range sorted {
				if train.RoundOf(f.Seq, opt.Rounds) == r && train.ShardOf(f.Seq, opt.Shards) == sh {
					mine = append(mine, f)
				}
			}
			if len(mine) == 0 {
				continue
			}
			l, _ := learners.New(opt.Learner, opt.Dim, opt.Params)
			if err := l.SetState(state); err != nil {
				return nil, err
			}
			for _, f := range mine {
				l.Update(f.U)
			}
			states = append(states, l.State())
		}
		if len(states) > 0 {
			if state, err = learners.Average(states); err != nil {
				return nil, err
			}
		}
	}
	if err := l.SetState(state); err != nil {
		return nil, err
	}
	return l.Weights(nil), nil
}
