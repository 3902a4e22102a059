package evaluatebeam

import (
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/evaluate"
)

// A shard's rows list each query once under each method it scored: the
// model and its re-ranked and expanded rankings, as their report rows
// name them.
func TestQueryRows(t *testing.T) {
	q := func(id string, held bool, ap float64) evaluate.QueryScore {
		return evaluate.QueryScore{ID: id, Held: held, AP: ap}
	}
	r := shardResult{Model: "solis-ada",
		Scores:   []evaluate.QueryScore{q("a", true, 0.5), q("b", false, 0.25)},
		Reranked: []evaluate.QueryScore{q("a", true, 0.75), q("b", false, 0.5)},
		Expanded: []evaluate.QueryScore{q("a", true, 1), q("b", false, 0.75)}}
	var got []formats.QueryScore
	(&queryRowsFn{Input: "bow"}).ProcessElement(r, func(row formats.QueryScore) { got = append(got, row) })
	want := []formats.QueryScore{
		{Method: "solis-ada", Input: "bow", Split: evaluate.HeldOut, ImageID: "a", AP: 0.5},
		{Method: "solis-ada", Input: "bow", Split: evaluate.Training, ImageID: "b", AP: 0.25},
		{Method: "solis-ada" + evaluate.RerankedSuffix, Input: "bow", Split: evaluate.HeldOut, ImageID: "a", AP: 0.75},
		{Method: "solis-ada" + evaluate.RerankedSuffix, Input: "bow", Split: evaluate.Training, ImageID: "b", AP: 0.5},
		{Method: "solis-ada" + evaluate.ExpandedSuffix, Input: "bow", Split: evaluate.HeldOut, ImageID: "a", AP: 1},
		{Method: "solis-ada" + evaluate.ExpandedSuffix, Input: "bow", Split: evaluate.Training, ImageID: "b", AP: 0.75},
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
