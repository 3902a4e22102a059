package spatial_test

import (
	"fmt"

	"github.com/bowline/bowline/transforms/spatial"
)

// Re-ranking a query's candidates: one Matcher per goroutine, reused for
// every candidate, and the inlier count as the score of a verified one.
func ExampleMatcher_Verify() {
	// The query's keypoints: word, x, y, σ, θ; the candidate shows the same
	// scene twice as large, moved by (100, 50), plus a keypoint of word 9
	// that is elsewhere.
	query := &spatial.Geometry{Width: 320, Height: 240}
	cand := &spatial.Geometry{Width: 640, Height: 480}
	for i, p := range [][2]float32{{10, 20}, {200, 30}, {50, 180}, {300, 200}, {150, 120}, {90, 60}} {
		query.Append(uint32(i), p[0], p[1], 2, 0.5)
		cand.Append(uint32(i), 2*p[0]+100, 2*p[1]+50, 4, 0.5)
	}
	query.Append(9, 40, 40, 3, 1)
	cand.Append(9, 600, 20, 6, 1)
	query.Sort() // Verify needs the keypoints sorted by word
	cand.Sort()

	m, err := spatial.NewMatcher(spatial.DefaultOptions())
	if err != nil {
		panic(err)
	}
	r := m.Verify(query, cand)
	x, y := r.Transform.Apply(0, 0)
	fmt.Printf("%d of %d correspondences agree (verified: %v)\n", r.Inliers, r.Correspondences, r.Verified)
	fmt.Printf("scale %.2f, rotation %.2f, (0, 0) ↦ (%.1f, %.1f)\n", r.Transform.Scale(), r.Transform.Rotation(), x, y)
	fmt.Println("inliers:", m.Inliers(nil))
	// Output:
	// 6 of 7 correspondences agree (verified: true)
	// scale 2.00, rotation 0.00, (0, 0) ↦ (100.0, 50.0)
	// inliers: [{0 0} {1 1} {2 2} {3 3} {4 4} {5 5}]
}
