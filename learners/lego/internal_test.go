package lego

import (
	"math"
	"testing"
)

// TestFactorFallback checks the eigen-factor used when A is not
// numerically positive definite: for a singular positive semi-definite A
// it must still give LᵀL = A, and Item must then embed with it.
func TestFactorFallback(t *testing.T) {
	// A = [[1, 1, 0], [1, 1, 0], [0, 0, 4]]: eigenvalues 0, 2, 4.
	a := []float64{1, 1, 0, 1, 1, 0, 0, 0, 4}
	if _, ok := cholesky(a, 3); ok {
		t.Fatal("Cholesky factorised a singular matrix; the test does not reach the fallback")
	}
	e := factor(a, 3)
	if e.full.Data == nil {
		t.Fatal("factor of a singular matrix is not the eigen-factor")
	}
	L := e.full.Data
	for i := range 3 {
		for j := range 3 {
			var s float64
			for k := range 3 {
				s += L[k*3+i] * L[k*3+j]
			}
			if math.Abs(s-a[i*3+j]) > 1e-14 {
				t.Errorf("(LᵀL)[%d,%d] = %v, want %v", i, j, s, a[i*3+j])
			}
		}
	}
	l, err := New([]int{3}, DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	copy(l.a, a)
	l.emb.Store(nil)
	x, y := []float64{1, 2, 3}, []float64{0, 0, 1}
	ex, ey := l.Item(nil, x), l.Item(nil, y)
	var d2 float64
	for j := range ex {
		d2 += (ex[j] - ey[j]) * (ex[j] - ey[j])
	}
	// z = (1, 2, 2): zᵀAz = (1 + 2)² + 4·2² = 25.
	if math.Abs(d2-25) > 1e-13 || math.Abs(l.Distance(x, y)-25) > 1e-13 {
		t.Errorf("‖Item(x) − Item(y)‖² = %v, d_A = %v, want 25", d2, l.Distance(x, y))
	}
}
