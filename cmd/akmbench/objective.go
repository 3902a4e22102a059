package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// readCodebook reads the words of a run's codebook Parquet files
// (formats.Word rows, pattern a glob) as row-major float32 centroids,
// word i at row i.
func readCodebook(pattern string) ([]float32, error) {
	words, err := fileio.ReadAll[formats.Word](context.Background(), pattern)
	if err != nil {
		return nil, fmt.Errorf("codebook %s: %w", pattern, err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("codebook %s: no words", pattern)
	}
	slices.SortFunc(words, func(a, b formats.Word) int { return int(a.WordID) - int(b.WordID) })
	cent := make([]float32, 0, len(words)*dim)
	for i, w := range words {
		if int(w.WordID) != i || len(w.Centroid) != dim {
			return nil, fmt.Errorf("codebook %s: word %d of %d has id %d and %d values, want ids 0…%d of %d values", pattern, i, len(words), w.WordID, len(w.Centroid), len(words)-1, dim)
		}
		cent = append(cent, w.Centroid...)
	}
	return cent, nil
}

// heldOutObjective prints the k-means objective of the codebook matching
// pattern, the exact mean squared distance of each of the points to its
// nearest word, with the time it took.
func heldOutObjective(pattern string, pts []float32, workers int) error {
	cent, err := readCodebook(pattern)
	if err != nil {
		return err
	}
	c := start()
	j := objective(cent, pts, workers)
	wall, cpu := c.elapsed()
	fmt.Printf("codebook %s: %d words; objective on %d held-out descriptors %.1f (exact, %.1f s wall, %.1f s CPU)\n", pattern, len(cent)/dim, len(pts)/dim, j, wall, cpu)
	return nil
}
