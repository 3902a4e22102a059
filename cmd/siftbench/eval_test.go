package main

import (
	"math"
	"testing"

	"github.com/bowline/bowline/transforms/sift"
)

func TestHomographyInverse(t *testing.T) {
	for _, H := range []homography{
		rotation(640, 480, 37),
		aboutCentre(640, 480, 1.4, 0.2, -0.1, 0.8),
		families(640, 480)[len(families(640, 480))-20].H,
	} {
		I := H.mul(H.inverse())
		for i, want := range identity() {
			if math.Abs(I[i]-want) > 1e-9 {
				t.Fatalf("H·H⁻¹ = %v", I)
			}
		}
		x, y := H.apply(100, 200)
		if bx, by := H.inverse().apply(x, y); math.Hypot(bx-100, by-200) > 1e-9 {
			t.Errorf("round trip gives (%v, %v)", bx, by)
		}
	}
	// Rotation is clockwise as displayed, about the centre.
	x, y := rotation(101, 101, 90).apply(100, 50)
	if math.Hypot(x-50, y-100) > 1e-9 {
		t.Errorf("90° rotation maps (100, 50) to (%v, %v), want (50, 100)", x, y)
	}
}

// TestEvaluate checks the scores on keypoints placed by hand: exact
// correspondences, one keypoint displaced beyond the tolerance, one outside
// the overlap, and descriptors that match only where they should.
func TestEvaluate(t *testing.T) {
	const w, h = 200, 100
	H := aboutCentre(w, h, 2, 0, 0, 2) // ×2 zoom: only the middle of A is in B
	var a, b features
	desc := func(i int) []byte {
		d := make([]byte, sift.DescriptorSize)
		d[i%sift.DescriptorSize] = 200
		d[(i*7+3)%sift.DescriptorSize] = 100
		return d
	}
	// Four keypoints of A in the overlap, all re-detected in B; the last
	// one 2 px off in A's frame (4 px in B's): not corresponding.
	pts := [][2]float64{{90, 45}, {110, 55}, {80, 40}, {120, 50}}
	for i, p := range pts {
		a.kps = append(a.kps, sift.Keypoint{X: float32(p[0]), Y: float32(p[1])})
		a.desc = append(a.desc, desc(i)...)
		x, y := H.apply(p[0], p[1])
		if i == 3 {
			x += 4
		}
		b.kps = append(b.kps, sift.Keypoint{X: float32(x), Y: float32(y)})
		b.desc = append(b.desc, desc(i)...)
	}
	// One keypoint of A outside the overlap (maps outside B).
	a.kps = append(a.kps, sift.Keypoint{X: 5, Y: 5})
	a.desc = append(a.desc, desc(9)...)

	s := evaluate(a, b, H, w, h)
	if s.inA != 4 || s.inB != 4 {
		t.Fatalf("overlap |A′| = %d, |B′| = %d, want 4, 4", s.inA, s.inB)
	}
	if s.repeated != 3 {
		t.Errorf("repeated = %d, want 3", s.repeated)
	}
	if s.matched != 4 || s.correctMatch != 3 {
		t.Errorf("matched %d, correct %d; want 4, 3", s.matched, s.correctMatch)
	}
	if r, m := s.Repeatability(), s.MatchingScore(); r != 0.75 || m != 0.75 {
		t.Errorf("repeatability %v, matching score %v, want 0.75, 0.75", r, m)
	}
}

func TestWarpIdentityAndRotation(t *testing.T) {
	g := newGray(40, 30)
	for i := range g.pix {
		g.pix[i] = float64(i % 17)
	}
	same := warp(g, identity(), 40, 30)
	for i, v := range g.pix {
		if math.Abs(same.pix[i]-v) > 1e-9 {
			t.Fatalf("identity warp changed pixel %d: %v → %v", i, v, same.pix[i])
		}
	}
	// A 90° rotation of a square image moves pixels exactly.
	sq := newGray(31, 31)
	for i := range sq.pix {
		sq.pix[i] = float64(i % 23)
	}
	rot := warp(sq, rotation(31, 31, 90), 31, 31)
	for y := 0; y < 31; y++ {
		for x := 0; x < 31; x++ {
			// Output (x, y) comes from input (y, 30 − x).
			if want := sq.pix[(30-x)*31+y]; math.Abs(rot.pix[y*31+x]-want) > 1e-9 {
				t.Fatalf("rotated (%d, %d) = %v, want %v", x, y, rot.pix[y*31+x], want)
			}
		}
	}
}
