package formats

import (
	"fmt"
	"math"
	"slices"
)

// Centroids returns the centroids of a codebook's rows (codebook-*.parquet,
// in any order) as row-major float32, word i at row i: an error unless the
// ids are 0…len(words)−1, each once, and every centroid holds dim finite
// values. It sorts words by id.
func Centroids(words []Word, dim int) ([]float32, error) {
	if len(words) == 0 {
		return nil, fmt.Errorf("no words")
	}
	slices.SortFunc(words, func(a, b Word) int {
		switch {
		case a.WordID < b.WordID:
			return -1
		case a.WordID > b.WordID:
			return 1
		}
		return 0
	})
	cent := make([]float32, 0, len(words)*dim)
	for i, w := range words {
		if int(w.WordID) != i || len(w.Centroid) != dim {
			return nil, fmt.Errorf("word %d of %d has id %d and %d values, want ids 0…%d of %d values", i, len(words), w.WordID, len(w.Centroid), len(words)-1, dim)
		}
		for _, v := range w.Centroid {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("word %d has a non-finite centroid", i)
			}
		}
		cent = append(cent, w.Centroid...)
	}
	return cent, nil
}
