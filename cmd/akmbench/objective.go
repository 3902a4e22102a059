package main

import (
	"context"
	"fmt"

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
	cent, err := formats.Centroids(words, dim)
	if err != nil {
		return nil, fmt.Errorf("codebook %s: %w", pattern, err)
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
