// Package hardtest draws the triplets with "hard" negatives that the tests
// of the diagonal learners' non-negative option (solis, oasis) share: on
// them an unconstrained learner turns background words negative, so a test
// that the option keeps w ≥ 0 can fail.
//
// It is imported only by the learners' tests.
package hardtest

import (
	"math/rand/v2"
	"slices"

	"github.com/bowline/bowline/learners/sparse"
)

// Words 0..Objects-1 name objects, Objects..Vocab-1 are background.
const (
	Vocab   = 40
	Objects = 10
)

// Triplet draws a triplet feature (into dst) whose negative is hard, as
// mined negatives are: the query has one object word, which its positive
// shares, and 12 background words; the positive keeps each of those with
// probability 1/4, the negative (another object) with probability 3/4, and
// each adds 4 background words of its own. Word values are drawn from
// [0.5, 1]. So u is positive on the object word and, on average, negative
// on the query's background words: an unconstrained learner meets the
// margin partly by giving shared background negative weights.
func Triplet(r *rand.Rand, dst sparse.Vector) sparse.Vector {
	words := func(ids []int) sparse.Vector {
		slices.Sort(ids)
		ids = slices.Compact(ids)
		var v sparse.Vector
		for _, i := range ids {
			v.Idx = append(v.Idx, uint32(i))
			v.Val = append(v.Val, float32(0.5+0.5*r.Float64()))
		}
		return v
	}
	perm := r.Perm(Objects)
	x, pos, neg := []int{perm[0]}, []int{perm[0]}, []int{perm[1]}
	background := func() int { return Objects + r.IntN(Vocab-Objects) }
	for range 12 {
		b := background()
		x = append(x, b)
		if r.IntN(4) == 0 {
			pos = append(pos, b)
		}
		if r.IntN(4) != 0 {
			neg = append(neg, b)
		}
	}
	for range 4 {
		pos, neg = append(pos, background()), append(neg, background())
	}
	return sparse.TripletFeature(dst, words(x), words(pos), words(neg))
}

// Stream returns n triplets of Triplet drawn from seed.
func Stream(seed uint64, n int) []sparse.Vector {
	r := rand.New(rand.NewPCG(seed, 23))
	us := make([]sparse.Vector, n)
	for i := range us {
		us[i] = Triplet(r, sparse.Vector{})
	}
	return us
}
