package solis_test

import (
	"fmt"
	"log"

	"github.com/bowline/bowline/learners/solis"
	"github.com/bowline/bowline/learners/sparse"
)

// A learner's update: each triplet (x, pos, neg) of bags of words, where
// pos is more similar to x than neg, becomes the feature
// u = x ⊙ (pos − neg), and Update takes one step on the hinge loss
// max(0, 1 − w·u), returning the loss suffered before the step. Repeating
// a triplet drives its loss towards zero.
func ExampleADA_Update() {
	a, err := solis.NewADA(4, solis.DefaultADAParams())
	if err != nil {
		log.Fatal(err)
	}
	x := sparse.Vector{Idx: []uint32{0, 1, 2}, Val: []float32{0.5, 0.5, 0.5}}
	pos := sparse.Vector{Idx: []uint32{0, 1}, Val: []float32{1, 0.5}}
	neg := sparse.Vector{Idx: []uint32{1, 2}, Val: []float32{0.5, 0.5}}
	u := sparse.TripletFeature(sparse.Vector{}, x, pos, neg)
	fmt.Println("u:", u.Idx, u.Val)
	for range 3 {
		fmt.Printf("loss %.3f\n", a.Update(u))
	}
	fmt.Printf("weights %.3f after %d steps\n", a.Weights(nil), a.Steps())
	// Output:
	// u: [0 2] [0.5 -0.25]
	// loss 1.000
	// loss 0.250
	// loss 0.000
	// weights [1.414 0.000 -1.414 0.000] after 3 steps
}
