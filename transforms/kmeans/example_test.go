package kmeans_test

import (
	"fmt"
	"log"
	"slices"

	"github.com/bowline/bowline/transforms/kmeans"
)

// Training a vocabulary: Train clusters n points of dimension dim, stored
// row-major in one slice, into K centroids. Here 60 points in the plane lie
// around three centres; a visual vocabulary is the same call on SIFT
// descriptors (dim 128) with K in the thousands, where Approx (AKM) keeps
// each iteration affordable.
func ExampleTrain() {
	const dim = 2
	centres := [][dim]float32{{0, 0}, {10, 0}, {0, 10}}
	var data []float32
	for i := range 60 {
		c := centres[i%3]
		// A small, fixed spread around each centre.
		dx, dy := float32(i%5)/10, float32(i%7)/10
		data = append(data, c[0]+dx, c[1]+dy)
	}

	voc, err := kmeans.Train(data, dim, kmeans.Options{K: 3, MaxIter: 20, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}

	var found []string
	for c := range voc.K {
		x, y := voc.Centroids[c*dim], voc.Centroids[c*dim+1]
		found = append(found, fmt.Sprintf("(%.0f, %.0f)", x, y))
	}
	slices.Sort(found) // the order of the clusters depends on the seed
	fmt.Println(voc.K, "words of dimension", voc.Dim, "converged:", voc.Converged)
	fmt.Println(found)
	// Output:
	// 3 words of dimension 2 converged: true
	// [(0, 0) (0, 10) (10, 0)]
}
