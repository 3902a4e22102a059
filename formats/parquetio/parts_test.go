package parquetio

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// TestPartsCountPostings: the parts listed from a finished run carry their
// rows and, for bags of words, their postings, read from the footers, as
// the job's own parts record them (training groups are bounded by them).
func TestPartsCountPostings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bags := [][]formats.BoW{
		{{ImageID: "a", WordIDs: []uint32{1, 2, 3}, Weights: []float32{1, 1, 1}}, {ImageID: "b", WordIDs: []uint32{4}, Weights: []float32{1}}},
		{{ImageID: "c", WordIDs: []uint32{5, 6}, Weights: []float32{1, 1}}},
	}
	for p, rows := range bags {
		if err := fileio.WriteFile(ctx, filepath.Join(dir, formats.ShardName("bow", p, len(bags))), rows); err != nil {
			t.Fatal(err)
		}
	}
	var got []formats.Part
	if err := (&partsFn{Dir: dir, Name: "bow"}).ProcessElement(ctx, nil, func(p formats.Part) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Part < got[j].Part })
	if len(got) != 2 || got[0].Rows != 2 || got[0].Postings != 4 || got[1].Rows != 1 || got[1].Postings != 2 {
		t.Errorf("parts %+v, want rows 2 and 1, postings 4 and 2", got)
	}
}
