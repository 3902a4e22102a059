package evaluate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

// randomDocs makes n bags over vocab words with labels from 5, some
// sharing identical bags so that ties must be broken by id.
func randomDocs(n, vocab int, seed uint64) []formats.BoW {
	r := rand.New(rand.NewPCG(seed, 1))
	docs := make([]formats.BoW, n)
	for i := range docs {
		var idx []uint32
		for w := range vocab {
			if r.IntN(4) == 0 {
				idx = append(idx, uint32(w))
			}
		}
		val := make([]float32, len(idx))
		for k := range val {
			val[k] = float32(r.IntN(3) + 1)
		}
		docs[i] = formats.BoW{ImageID: fmt.Sprintf("img%03d", (i*37)%n), Label: fmt.Sprintf("l%d", r.IntN(5)), WordIDs: idx, Weights: val}
		if i%9 == 0 && i > 0 {
			docs[i].WordIDs, docs[i].Weights = docs[i-1].WordIDs, docs[i-1].Weights
		}
	}
	docs[3].Label = "" // unlabelled: searched for, never a query
	return docs
}

// sharded evaluates docs as the Beam transform does: queries split over
// shards, the collection indexed chunk by chunk (in a shuffled order).
func sharded(t *testing.T, docs []formats.BoW, m learners.Model, opt Options, shards, chunk int) formats.ReportRow {
	t.Helper()
	relevant := map[string]int{}
	for _, d := range docs {
		if d.Label != "" {
			relevant[d.Label]++
		}
	}
	var queries []Query
	var keys []uint64
	for _, d := range docs {
		if IsQuery(d.Label, relevant) {
			queries = append(queries, Query{ID: d.ImageID, Label: d.Label, Vec: sparse.Vector{Idx: d.WordIDs, Val: d.Weights}})
			keys = append(keys, QueryKey(opt.Seed, d.ImageID))
		}
	}
	if opt.MaxQueries > 0 && len(queries) > opt.MaxQueries {
		sorted := slices.Clone(keys)
		slices.Sort(sorted)
		var kept []Query
		for i, q := range queries {
			if keys[i] <= sorted[opt.MaxQueries-1] {
				kept = append(kept, q)
			}
		}
		queries = kept
	}
	w, err := m.Diagonal()
	if err != nil {
		t.Fatal(err)
	}
	order := rand.New(rand.NewPCG(uint64(shards), uint64(chunk))).Perm(len(docs))
	var scores []QueryScore
	for s := range shards {
		var mine []Query
		for i := s; i < len(queries); i += shards {
			mine = append(mine, queries[i])
		}
		r := NewRanking(mine, opt.DepthFor(int64(len(docs))))
		for lo := 0; lo < len(order); lo += chunk {
			var part []formats.BoW
			for _, i := range order[lo:min(lo+chunk, len(order))] {
				part = append(part, docs[i])
			}
			if err := r.Add(part, w, 12); err != nil {
				t.Fatal(err)
			}
		}
		scores = append(scores, r.Scores(relevant)...)
	}
	var row formats.ReportRow
	Summarise(&row, scores)
	return row
}

func TestShardedEqualsUnsharded(t *testing.T) {
	docs := randomDocs(120, 12, 7)
	models := []learners.Model{
		learners.BaselineModel(learners.BaselineTFIDF, nil),
		{Learner: "m", Weights: []float32{0, 1, 2, 0, 0.5, 1, 3, 0, 1, 1, 0.25, 2}},
	}
	for _, m := range models {
		for _, opt := range []Options{{}, {MaxQueries: 40, Seed: 3}} {
			want, err := BoW(slices.Clone(docs), m, opt)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct{ shards, chunk int }{{1, 1000}, {1, 7}, {3, 50}, {7, 13}} {
				got := sharded(t, docs, m, opt, c.shards, c.chunk)
				if got.Queries != want.Queries || got.MAP != want.MAP || got.PrecisionAt10 != want.PrecisionAt10 || got.NDCGAt10 != want.NDCGAt10 {
					t.Errorf("%s %+v, %d shards, chunks of %d: queries %d mAP %v P@10 %v NDCG@10 %v; unsharded %d %v %v %v",
						m.Learner, opt, c.shards, c.chunk, got.Queries, got.MAP, got.PrecisionAt10, got.NDCGAt10,
						want.Queries, want.MAP, want.PrecisionAt10, want.NDCGAt10)
				}
			}
		}
	}
}

// At a rank depth the merged ranking is the first Depth results of the
// full one, whatever the chunks.
func TestDepthKeepsTheHead(t *testing.T) {
	docs := randomDocs(90, 12, 9)
	q := []Query{{ID: docs[5].ImageID, Label: docs[5].Label, Vec: sparse.Vector{Idx: docs[5].WordIDs, Val: docs[5].Weights}}}
	full := NewRanking(q, 0)
	if err := full.Add(slices.Clone(docs), nil, 12); err != nil {
		t.Fatal(err)
	}
	head := NewRanking(q, 10)
	for lo := 0; lo < len(docs); lo += 11 {
		if err := head.Add(slices.Clone(docs[lo:min(lo+11, len(docs))]), nil, 12); err != nil {
			t.Fatal(err)
		}
	}
	if len(full.hits[0]) != len(docs)-1 || !slices.Equal(head.hits[0], full.hits[0][:10]) {
		t.Errorf("depth 10: %v\nfull ranking head: %v", head.hits[0], full.hits[0][:10])
	}
	if !sort.SliceIsSorted(full.hits[0], func(i, j int) bool { return before(full.hits[0][i], full.hits[0][j]) }) {
		t.Error("full ranking out of order")
	}
}
