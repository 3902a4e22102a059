package evaluatebeam

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/evaluate"
)

// ReadShard returns shard's queries of shards, of a query set that
// carries no bags of words (Queries), with their bags read from parts:
// where[i] is the part (formats.Part.Part) that holds queries[i]. The
// queries, in order of part and then of index, are cut into shards runs
// whose sizes differ by at most one, so that a shard's queries lie in
// about len(parts)/shards + 1 parts; it reads those parts only, once
// each, and keeps a copy of its queries' bags only. The queries come back
// in their order in queries. A query missing from its part is an error:
// the part changed since the set was read from it.
func ReadShard(ctx context.Context, queries []evaluate.Query, where []int, shard, shards int, parts []formats.Part) ([]evaluate.Query, error) {
	if len(where) != len(queries) {
		panic(fmt.Sprintf("evaluatebeam: ReadShard: %d parts for %d queries", len(where), len(queries)))
	}
	idx := shardByPart(where, shard, shards)
	mine := make([]evaluate.Query, len(idx))
	bags := make(map[string]sparse.Vector, len(idx))
	need := map[int]bool{}
	for k, i := range idx {
		mine[k] = queries[i]
		bags[queries[i].ID] = sparse.Vector{}
		need[where[i]] = true
	}
	var read []formats.Part
	for _, p := range parts {
		if need[p.Part] {
			read = append(read, p)
			delete(need, p.Part)
		}
	}
	if len(need) > 0 {
		return nil, fmt.Errorf("queries: no bag-of-words part %d, which holds queries", slices.Min(slices.Collect(maps.Keys(need))))
	}
	found, err := readBags(ctx, read, bags)
	if err != nil {
		return nil, fmt.Errorf("queries: %w", err)
	}
	if found != len(bags) {
		return nil, fmt.Errorf("queries: the %d parts that hold the shard's %d queries hold %d of them: they changed since the query set was read", len(read), len(bags), found)
	}
	for k := range mine {
		mine[k].Vec = bags[mine[k].ID]
	}
	return mine, nil
}

// shardByPart returns the indices, in increasing order, of shard's
// queries of shards (ReadShard), where where[i] is the part of query i.
func shardByPart(where []int, shard, shards int) []int {
	order := make([]int, len(where))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return where[order[a]] < where[order[b]] })
	mine := order[shard*len(order)/shards : (shard+1)*len(order)/shards]
	slices.Sort(mine)
	return mine
}

// readBags sets bags[id], for each id among its keys, to a copy of that
// image's bag of words, reading parts in turn, and returns how many of
// the ids it found. The copies hold none of a part's decoding buffers.
func readBags(ctx context.Context, parts []formats.Part, bags map[string]sparse.Vector) (found int, err error) {
	for _, p := range parts {
		err := fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
			if _, ok := bags[b.ImageID]; ok {
				bags[b.ImageID] = sparse.Vector{Idx: slices.Clone(b.WordIDs), Val: slices.Clone(b.Weights)}
				found++
			}
			return nil
		})
		if err != nil {
			return found, err
		}
	}
	return found, nil
}
