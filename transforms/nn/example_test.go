package nn_test

import (
	"fmt"

	"github.com/bowline/bowline/transforms/nn"
)

// Quantising points against a vocabulary: an Exact over the words answers
// as Nearest does, a batch at a time. Words and points are stored
// row-major in one slice each.
func ExampleExact() {
	const dim = 2
	words := []float32{
		0, 0, // word 0
		10, 0, // word 1
		0, 10, // word 2
	}
	points := []float32{1, 1, 9, 2, 2, 8, 0.5, 0}
	n := len(points) / dim

	e := nn.NewExact(words, dim)
	labels, dist := make([]int32, n), make([]float32, n)
	for i := range labels {
		labels[i] = -1 // no previous assignment: every label counts as changed
	}
	changed := e.Assign(points, labels, dist, nil)
	fmt.Println(labels, dist, changed)

	w, d := nn.Nearest(words, dim, []float32{9, 2})
	fmt.Println(w, d)
	// Output:
	// [0 1 2 0] [2 5 8 0.25] 4
	// 1 5
}
