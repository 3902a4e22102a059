package evaluatebeam

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/evaluate"
)

// TestReadShard shards a query set that carries no bags, as the
// evaluation's side input does, and checks that every query lands in
// exactly one shard, in set order, with its bag as written, that the
// shards' sizes differ by at most one, and that a shard spans few parts:
// it reads those, not the collection.
func TestReadShard(t *testing.T) {
	const nparts, rows = 7, 30
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	var parts []formats.Part
	var queries []evaluate.Query
	var where []int
	bags := map[string]formats.BoW{}
	// Parts listed out of order, as a side input may iterate them.
	for _, p := range []int{4, 0, 6, 2, 1, 5, 3} {
		var bs []formats.BoW
		for i := range rows {
			b := formats.BoW{ImageID: fmt.Sprintf("img-%02d-%d", i, p), Label: "l"}
			for w := range 40 {
				if r.IntN(4) == 0 {
					b.WordIDs, b.Weights = append(b.WordIDs, uint32(w)), append(b.Weights, float32(r.IntN(5)))
				}
			}
			bs = append(bs, b)
			bags[b.ImageID] = b
			if r.IntN(3) > 0 {
				queries = append(queries, evaluate.Query{ID: b.ImageID, Label: b.Label})
			}
		}
		path := filepath.Join(dir, formats.ShardName("bow", p, nparts))
		if err := fileio.WriteFile(ctx, path, bs); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, formats.Part{Name: "bow", Part: p, Parts: nparts, Path: path, Rows: rows})
	}
	// The set is sorted by id, which interleaves the parts.
	slices.SortFunc(queries, func(a, b evaluate.Query) int { return strings.Compare(a.ID, b.ID) })
	for _, q := range queries {
		var p int
		fmt.Sscanf(q.ID[strings.LastIndex(q.ID, "-")+1:], "%d", &p)
		where = append(where, p)
	}
	for _, shards := range []int{1, 2, 3, 7, 10, len(queries)} {
		seen := map[string]int{}
		for s := range shards {
			mine, err := ReadShard(ctx, queries, where, s, shards, parts)
			if err != nil {
				t.Fatalf("%d shards: shard %d: %v", shards, s, err)
			}
			if lo, hi := len(queries)/shards, (len(queries)+shards-1)/shards; len(mine) < lo || len(mine) > hi {
				t.Errorf("%d shards: shard %d has %d queries, want %d to %d", shards, s, len(mine), lo, hi)
			}
			if !slices.IsSortedFunc(mine, func(a, b evaluate.Query) int { return strings.Compare(a.ID, b.ID) }) {
				t.Errorf("%d shards: shard %d: queries not in the set's order", shards, s)
			}
			spans := map[int]bool{}
			for _, q := range mine {
				seen[q.ID]++
				b := bags[q.ID]
				if !slices.Equal(q.Vec.Idx, b.WordIDs) || !slices.Equal(q.Vec.Val, b.Weights) {
					t.Errorf("%d shards: query %s: bag %v %v, want %v %v", shards, q.ID, q.Vec.Idx, q.Vec.Val, b.WordIDs, b.Weights)
				}
				spans[where[slices.IndexFunc(queries, func(x evaluate.Query) bool { return x.ID == q.ID })]] = true
			}
			if max := nparts/shards + 2; len(spans) > max {
				t.Errorf("%d shards: shard %d spans %d parts, want at most %d", shards, s, len(spans), max)
			}
		}
		if len(seen) != len(queries) {
			t.Errorf("%d shards: %d distinct queries, want %d", shards, len(seen), len(queries))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%d shards: query %s in %d shards", shards, id, n)
			}
		}
	}
	// A query its part no longer holds.
	lost := slices.Clone(queries)
	lost[0].ID = "img-99-" + lost[0].ID[len(lost[0].ID)-1:]
	if _, err := ReadShard(ctx, lost, where, 0, 1, parts); err == nil || !strings.Contains(err.Error(), "changed since") {
		t.Errorf("a query missing from its part: error %v, want one that says the part changed", err)
	}
	if _, err := ReadShard(ctx, queries, where, 0, 1, parts[1:]); err == nil || !strings.Contains(err.Error(), "no bag-of-words part 4") {
		t.Errorf("a missing part: error %v, want one that names part 4", err)
	}
}
