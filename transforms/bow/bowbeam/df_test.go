package bowbeam

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
)

// The document frequencies of parts whose highest word differs sum to the
// same images and counts in whatever order the runner merges them, and
// merging leaves the parts' own frequencies as they were: the IDF, and so
// every bag of words, must not depend on the order the parts are merged in.
func TestMergeDFOrder(t *testing.T) {
	parts := [][]formats.BoW{
		{{ImageID: "a", WordIDs: []uint32{0, 2}}, {ImageID: "b", WordIDs: []uint32{1}}},
		{{ImageID: "c", WordIDs: []uint32{0, 5}}},
		{{ImageID: "d", WordIDs: []uint32{3}}, {ImageID: "e", WordIDs: []uint32{0, 3}}, {ImageID: "f"}},
	}
	dfOf := func(bows []formats.BoW) DF {
		d := dfFn{}.CreateAccumulator()
		for _, b := range bows {
			d = dfFn{}.AddInput(d, b)
		}
		return d
	}
	want := DF{N: 6, DF: []int64{3, 1, 1, 2, 0, 1}}
	check := func(name string, got DF) {
		t.Helper()
		if got.N != want.N || !slices.Equal(got.DF, want.DF) {
			t.Errorf("%s: merged %+v, want %+v", name, got, want)
		}
	}
	for _, order := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		dfs := make([]DF, len(parts))
		for i, p := range parts {
			dfs[i] = dfOf(p)
		}
		orig := make([]DF, len(dfs))
		for i, d := range dfs {
			orig[i] = DF{N: d.N, DF: slices.Clone(d.DF)}
		}
		var f mergeDFFn
		acc := f.CreateAccumulator()
		for _, i := range order {
			acc = f.AddInput(acc, dfs[i])
		}
		check(fmt.Sprintf("AddInput in order %v", order), f.ExtractOutput(acc))
		for i := range dfs {
			if dfs[i].N != orig[i].N || !slices.Equal(dfs[i].DF, orig[i].DF) {
				t.Errorf("order %v: part %d's frequencies became %+v, were %+v", order, i, dfs[i], orig[i])
			}
		}
		a, b, c := dfOf(parts[order[0]]), dfOf(parts[order[1]]), dfOf(parts[order[2]])
		check(fmt.Sprintf("MergeAccumulators in order %v", order), f.MergeAccumulators(f.MergeAccumulators(a, b), c))
	}
}
