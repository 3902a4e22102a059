package evaluatebeam

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/evaluate"
)

// TestRankPartsChunks ranks the same parts in chunks of every size —
// chunks ended by postings or by images, mid-part or at its end — and
// gets the scores of one chunk: chunking bounds memory, never the metrics.
// Only the training images (keep) are ranked.
func TestRankPartsChunks(t *testing.T) {
	const vocab, parts, bags = 60, 3, 25
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 9))
	dir := t.TempDir()
	var all []formats.Part
	var queries []evaluate.Query
	relevant := map[string]int{}
	out := map[string]bool{}
	images := int64(0)
	postings := 0
	for p := range parts {
		var rows []formats.BoW
		for i := range bags {
			b := formats.BoW{ImageID: fmt.Sprintf("img-%d-%02d", p, i), Label: fmt.Sprint("label-", r.IntN(4))}
			for w := range vocab {
				if r.IntN(6) == 0 {
					// Few distinct values: many tied scores.
					b.WordIDs, b.Weights = append(b.WordIDs, uint32(w)), append(b.Weights, float32(1+r.IntN(2)))
				}
			}
			rows = append(rows, b)
			if i%5 == 4 {
				out[b.ImageID] = true // held out of the collection by keep
				continue
			}
			images++
			postings += len(b.WordIDs)
			relevant[b.Label]++
			if i%3 == 0 {
				queries = append(queries, evaluate.Query{ID: b.ImageID, Label: b.Label, Vec: sparse.Vector{Idx: b.WordIDs, Val: b.Weights}})
			}
		}
		path := filepath.Join(dir, formats.ShardName("bow", p, parts))
		if err := fileio.WriteFile(ctx, path, rows); err != nil {
			t.Fatal(err)
		}
		all = append(all, formats.Part{Name: "bow", Part: p, Parts: parts, Path: path, Rows: bags})
	}
	keep := func(b *formats.BoW) bool { return !out[b.ImageID] }
	w := make([]float32, vocab)
	for i := range w {
		w[i] = float32(1 + i%3)
	}
	rank := func(opt evaluate.Options) []evaluate.QueryScore {
		t.Helper()
		rk := evaluate.NewRanking(queries, 0, images, relevant)
		if err := RankParts(ctx, rk, all, opt, w, vocab, keep); err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		sc, err := rk.Scores()
		if err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
		return sc
	}
	want := rank(evaluate.Options{})
	for _, opt := range []evaluate.Options{
		{ChunkPostings: 1},
		{ChunkPostings: postings / 7},
		{ChunkPostings: postings - 1},
		{ChunkImages: 1},
		{ChunkImages: 17, ChunkPostings: postings / 3},
	} {
		got := rank(opt)
		if len(got) != len(want) {
			t.Fatalf("%+v: %d scores, want %d", opt, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].AP != want[i].AP || got[i].P10 != want[i].P10 || got[i].NDCG10 != want[i].NDCG10 {
				t.Errorf("%+v: query %s: AP %v P@10 %v NDCG %v, want %s %v %v %v", opt, got[i].ID, got[i].AP, got[i].P10, got[i].NDCG10,
					want[i].ID, want[i].AP, want[i].P10, want[i].NDCG10)
			}
		}
	}
}
