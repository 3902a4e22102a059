package kmeansbeam

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/kmeans"
)

// A seedChunk's view, without its points, draws and offers what its full
// kmeans.ParallelChunk does, before the first candidate and after a
// round, and leaves the chunk's D², labels and candidates as they were.
func TestSeedChunkView(t *testing.T) {
	const d, n, offset, total = formats.DescriptorSize, 300, 1000, 2000
	rng := rand.New(rand.NewPCG(3, 4))
	desc := make([]byte, n*d)
	for i := range desc {
		desc[i] = byte(rng.IntN(256))
	}
	dir := t.TempDir()
	c := seedChunk{C: chunk{Index: 3, N: n, Lo: offset, Total: total}}
	if err := writeDesc(context.Background(), dir, c.C.Index, desc); err != nil {
		t.Fatal(err)
	}
	full := func() *kmeans.ParallelChunk {
		pc, err := c.parallel(context.Background(), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return pc
	}
	// Seeds until the first candidate falls in the chunk, so that First
	// is seen to find it.
	var seed uint64
	for seed = 0; full().First(total, seed) == nil; seed++ {
	}
	if got, want := c.view().First(total, seed), full().First(total, seed); !reflect.DeepEqual(got, want) {
		t.Fatalf("round 0: view draws %v, the chunk %v", got, want)
	}
	pc := full()
	idx := []int32{offset + 5, offset + 77, offset + 200}
	pc.Lower(kmeans.NewParallelCandidates(pc.Points(idx), d, idx, 0, seed))
	c.D2, c.Label, c.Cand = pc.D2, pc.Label, pc.Cand
	before := seedChunk{D2: append([]float32(nil), c.D2...), Label: append([]int32(nil), c.Label...), Cand: append([]int32(nil), c.Cand...)}
	phi := full().Phi().Value()
	got, want := c.view().Sample(seed, 1, 50/phi), full().Sample(seed, 1, 50/phi)
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("round 1: view draws %v, the chunk %v", got, want)
	}
	if got, want := c.view().Farthest(10), full().Farthest(10); len(want) != 10 || !reflect.DeepEqual(got, want) {
		t.Fatalf("top-up: view offers %v, the chunk %v", got, want)
	}
	if !reflect.DeepEqual(c.D2, before.D2) || !reflect.DeepEqual(c.Label, before.Label) || !reflect.DeepEqual(c.Cand, before.Cand) {
		t.Fatal("the view changed the chunk's D², labels or candidates")
	}
}

// seedCountFn counts a chunk's labels by block of candidates, and
// addCounts adds two blocks' counts of different lengths, leaving its
// inputs as they were.
func TestSeedCounts(t *testing.T) {
	got := map[int][]int64{}
	seedCountFn{}.ProcessElement(seedChunk{Label: []int32{5, 0, 5, countBlock + 2, 2*countBlock + 1}, Start: 7}, func(b int, c seedCounts) {
		if c.Start != 7 {
			t.Errorf("block %d: start %d, want 7", b, c.Start)
		}
		got[b] = c.Count
	})
	want := map[int][]int64{0: {1, 0, 0, 0, 0, 2}, 1: {0, 0, 1}, 2: {0, 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
	a, b := seedCounts{Count: []int64{1, 2}, Start: 3}, seedCounts{Count: []int64{0, 1, 4}, Start: 9}
	for _, sum := range []seedCounts{addCounts(a, b), addCounts(b, a)} {
		if want := (seedCounts{Count: []int64{1, 3, 4}, Start: 9}); !reflect.DeepEqual(sum, want) {
			t.Errorf("sum %+v, want %+v", sum, want)
		}
	}
	if !reflect.DeepEqual(a.Count, []int64{1, 2}) || !reflect.DeepEqual(b.Count, []int64{0, 1, 4}) {
		t.Errorf("addCounts changed its inputs: %v, %v", a.Count, b.Count)
	}
	if sum := addCounts(seedCounts{}, a); !reflect.DeepEqual(sum, a) {
		t.Errorf("the empty accumulator and %+v sum to %+v", a, sum)
	}
}
