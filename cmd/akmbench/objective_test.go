package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

func TestReadCodebookOrdersWords(t *testing.T) {
	dir := t.TempDir()
	row := func(id uint32) formats.Word {
		c := make([]float32, dim)
		c[0] = float32(id)
		return formats.Word{WordID: id, Centroid: c}
	}
	if err := fileio.WriteFile(context.Background(), filepath.Join(dir, "codebook-00000-of-00002.parquet"), []formats.Word{row(2), row(0)}); err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(context.Background(), filepath.Join(dir, "codebook-00001-of-00002.parquet"), []formats.Word{row(1)}); err != nil {
		t.Fatal(err)
	}
	cent, err := readCodebook(filepath.Join(dir, "codebook-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []float32{cent[0], cent[dim], cent[2*dim]}; len(cent) != 3*dim || !slices.Equal(got, []float32{0, 1, 2}) {
		t.Errorf("%d values, words' first values %v; want 3 words 0, 1, 2", len(cent), got)
	}
	// A missing word is an error, not a shifted codebook.
	if err := fileio.WriteFile(context.Background(), filepath.Join(dir, "gap-00000-of-00001.parquet"), []formats.Word{row(0), row(2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := readCodebook(filepath.Join(dir, "gap-*.parquet")); err == nil || !strings.Contains(err.Error(), "id 2") {
		t.Errorf("a codebook without word 1: err %v, want one naming id 2", err)
	}
}
