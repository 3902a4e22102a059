package main

import (
	"context"
	"fmt"

	"github.com/bowline/bowline/formats/fileio"
)

// readCodebook reads the words of a run's codebook Parquet files
// (formats.Word rows, pattern a glob) as row-major float32 centroids,
// word i at row i: as many words as the files hold rows (their footers).
func readCodebook(pattern string) ([]float32, error) {
	ctx := context.Background()
	paths, err := fileio.Glob(ctx, pattern)
	if err != nil {
		return nil, err
	}
	k, err := fileio.CountRows(ctx, pattern)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 || k == 0 {
		return nil, fmt.Errorf("codebook %s: no words", pattern)
	}
	return fileio.ReadCentroids(ctx, paths, int(k), dim)
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
