package sparse

import (
	"math"
	"math/rand/v2"
	"testing"
)

func dense(v Vector, dim int) []float64 {
	d := make([]float64, dim)
	for k, i := range v.Idx {
		d[i] = float64(v.Val[k])
	}
	return d
}

func random(r *rand.Rand, dim int, p float64) Vector {
	var v Vector
	for i := 0; i < dim; i++ {
		if r.Float64() < p {
			v.Idx = append(v.Idx, uint32(i))
			v.Val = append(v.Val, float32(r.Float64()))
		}
	}
	return v
}

func TestTripletFeatureMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dim = 50
	var u Vector
	for trial := 0; trial < 200; trial++ {
		x, p, n := random(r, dim, 0.3), random(r, dim, 0.3), random(r, dim, 0.3)
		u = TripletFeature(u, x, p, n)
		if err := u.Validate(dim); err != nil {
			t.Fatal(err)
		}
		dx, dp, dn, du := dense(x, dim), dense(p, dim), dense(n, dim), dense(u, dim)
		for i := 0; i < dim; i++ {
			want := float64(float32(dx[i]) * (float32(dp[i]) - float32(dn[i])))
			if du[i] != want {
				t.Fatalf("trial %d: u[%d] = %v, want %v", trial, i, du[i], want)
			}
		}
		// w·u must equal S_w(x,p) − S_w(x,n) for w = 1.
		if got, want := Dot(u, Vector{Idx: u.Idx, Val: ones(len(u.Idx))}), Dot(x, p)-Dot(x, n); math.Abs(got-want) > 1e-5 {
			t.Fatalf("trial %d: Σu = %v, want S(x,p)−S(x,n) = %v", trial, got, want)
		}
	}
}

func ones(n int) []float32 {
	o := make([]float32, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    Vector
		ok   bool
	}{
		{"ok", Vector{Idx: []uint32{1, 3}, Val: []float32{1, 2}}, true},
		{"lengths", Vector{Idx: []uint32{1}, Val: nil}, false},
		{"order", Vector{Idx: []uint32{3, 1}, Val: []float32{1, 2}}, false},
		{"duplicate", Vector{Idx: []uint32{1, 1}, Val: []float32{1, 2}}, false},
		{"range", Vector{Idx: []uint32{10}, Val: []float32{1}}, false},
		{"nan", Vector{Idx: []uint32{1}, Val: []float32{float32(math.NaN())}}, false},
	} {
		if err := tc.v.Validate(10); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestNormalize(t *testing.T) {
	v := Vector{Idx: []uint32{0, 4}, Val: []float32{3, 4}}
	if n := Normalize(v); n != 5 {
		t.Fatalf("norm = %v, want 5", n)
	}
	if v.Val[0] != 0.6 || v.Val[1] != 0.8 {
		t.Fatalf("normalised = %v, want [0.6 0.8]", v.Val)
	}
	z := Vector{Idx: []uint32{2}, Val: []float32{0}}
	if n := Normalize(z); n != 0 || z.Val[0] != 0 {
		t.Fatalf("zero vector changed: %v %v", n, z.Val)
	}
}

// TestAdd: Add's sum is the dense sum, its indices strictly ascending,
// over random vectors that overlap, and with an empty operand.
func TestAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const dim = 50
	for range 20 {
		a, b := random(r, dim, 0.3), random(r, dim, 0.3)
		for _, c := range [][2]Vector{{a, b}, {a, {}}, {{}, b}} {
			got := Add(c[0], c[1])
			da, db, dg := dense(c[0], dim), dense(c[1], dim), dense(got, dim)
			for i := range dg {
				if want := float64(float32(da[i]) + float32(db[i])); dg[i] != want {
					t.Fatalf("coordinate %d: %v, want %v", i, dg[i], want)
				}
			}
			for k := 1; k < len(got.Idx); k++ {
				if got.Idx[k] <= got.Idx[k-1] {
					t.Fatalf("indices not strictly ascending: %v", got.Idx)
				}
			}
			if len(got.Idx) != len(got.Val) {
				t.Fatalf("%d indices, %d values", len(got.Idx), len(got.Val))
			}
		}
	}
}
