package bowbeam

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// TestWeightPartCountsPostings: a bag-of-words part records the postings
// of the bags it wrote — the words whose TF-IDF weight is not zero, so a
// word in every image (idf 0) is not counted — which bound the training
// groups of real photos.
func TestWeightPartCountsPostings(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	counts := []formats.BoW{
		{ImageID: "a", Label: "x", WordIDs: []uint32{0, 1, 2}, Weights: []float32{1, 2, 1}},
		{ImageID: "b", Label: "y", WordIDs: []uint32{0, 3}, Weights: []float32{3, 1}},
		{ImageID: "c", Label: "y", WordIDs: []uint32{0}, Weights: []float32{1}},
	}
	path := filepath.Join(dir, "counts-00000-of-00001.parquet")
	if err := fileio.WriteFile(ctx, path, counts); err != nil {
		t.Fatal(err)
	}
	df := DF{N: 3, DF: []int64{3, 1, 1, 1}} // word 0 is in every image
	f := &weightPartFn{Dir: dir}
	var got []formats.Part
	err := f.ProcessElement(ctx, formats.Part{Name: CountsName, Part: 0, Parts: 1, Path: path, Rows: 3},
		func(d *DF) bool { *d = df; return true }, func(p formats.Part) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d parts emitted, want 1", len(got))
	}
	var want int64
	if err := fileio.ReadEach(ctx, got[0].Path, func(b *formats.BoW) error { want += int64(len(b.WordIDs)); return nil }); err != nil {
		t.Fatal(err)
	}
	if got[0].Postings != want || want != 3 {
		t.Errorf("part records %d postings; its file holds %d, want 3 (words 1, 2 and 3)", got[0].Postings, want)
	}
}
