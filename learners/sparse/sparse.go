// Package sparse holds the sparse vector that bag-of-words images, triplet
// features and inverted-index queries share, and the few operations on it
// that more than one stage needs.
package sparse

import (
	"fmt"
	"math"
)

// Vector is a sparse vector: Val[k] is the coordinate Idx[k]. Idx is strictly
// ascending, which every function here relies on to merge in linear time.
type Vector struct {
	Idx []uint32
	Val []float32
}

// Len returns the number of stored coordinates.
func (v Vector) Len() int { return len(v.Idx) }

// Validate reports whether v is well formed for a space of dim dimensions:
// equal lengths, strictly ascending indices below dim, finite values.
func (v Vector) Validate(dim int) error {
	if len(v.Idx) != len(v.Val) {
		return fmt.Errorf("sparse: %d indices but %d values", len(v.Idx), len(v.Val))
	}
	for k, i := range v.Idx {
		if int64(i) >= int64(dim) {
			return fmt.Errorf("sparse: index %d out of range [0,%d)", i, dim)
		}
		if k > 0 && i <= v.Idx[k-1] {
			return fmt.Errorf("sparse: indices not strictly ascending at position %d (%d after %d)", k, i, v.Idx[k-1])
		}
		if f := float64(v.Val[k]); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("sparse: value %v at index %d is not finite", v.Val[k], i)
		}
	}
	return nil
}

// Dot returns Σ a_i b_i.
func Dot(a, b Vector) float64 {
	var s float64
	i, j := 0, 0
	for i < len(a.Idx) && j < len(b.Idx) {
		switch {
		case a.Idx[i] < b.Idx[j]:
			i++
		case a.Idx[i] > b.Idx[j]:
			j++
		default:
			s += float64(a.Val[i]) * float64(b.Val[j])
			i++
			j++
		}
	}
	return s
}

// Add returns a + b in new storage.
func Add(a, b Vector) Vector {
	out := Vector{Idx: make([]uint32, 0, len(a.Idx)+len(b.Idx)), Val: make([]float32, 0, len(a.Idx)+len(b.Idx))}
	i, j := 0, 0
	for i < len(a.Idx) || j < len(b.Idx) {
		switch {
		case j == len(b.Idx) || (i < len(a.Idx) && a.Idx[i] < b.Idx[j]):
			out.Idx, out.Val = append(out.Idx, a.Idx[i]), append(out.Val, a.Val[i])
			i++
		case i == len(a.Idx) || b.Idx[j] < a.Idx[i]:
			out.Idx, out.Val = append(out.Idx, b.Idx[j]), append(out.Val, b.Val[j])
			j++
		default:
			out.Idx, out.Val = append(out.Idx, a.Idx[i]), append(out.Val, a.Val[i]+b.Val[j])
			i, j = i+1, j+1
		}
	}
	return out
}

// Norm returns the Euclidean norm ‖v‖₂.
func Norm(v Vector) float64 {
	var s float64
	for _, x := range v.Val {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Normalize scales v in place to unit Euclidean norm and returns the norm it
// had. A zero vector is left as it is.
func Normalize(v Vector) float64 {
	n := Norm(v)
	if n == 0 {
		return 0
	}
	inv := 1 / n
	for k := range v.Val {
		v.Val[k] = float32(float64(v.Val[k]) * inv)
	}
	return n
}

// TripletFeature returns u = x ⊙ (pos − neg), the per-triplet feature for
// which S_w(x,pos) − S_w(x,neg) = w·u under a diagonal bilinear similarity.
// Its support is supp(x) ∩ (supp(pos) ∪ supp(neg)); coordinates where the
// difference is exactly zero are dropped. The result reuses dst's storage, so
// a caller that keeps dst between calls allocates nothing once it has grown.
func TripletFeature(dst Vector, x, pos, neg Vector) Vector {
	dst.Idx, dst.Val = dst.Idx[:0], dst.Val[:0]
	p, n := 0, 0
	for k, i := range x.Idx {
		for p < len(pos.Idx) && pos.Idx[p] < i {
			p++
		}
		for n < len(neg.Idx) && neg.Idx[n] < i {
			n++
		}
		var d float32
		if p < len(pos.Idx) && pos.Idx[p] == i {
			d = pos.Val[p]
		}
		if n < len(neg.Idx) && neg.Idx[n] == i {
			d -= neg.Val[n]
		}
		if d != 0 {
			dst.Idx = append(dst.Idx, i)
			dst.Val = append(dst.Val, x.Val[k]*d)
		}
	}
	return dst
}
