package global

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func naiveDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	y := make([]complex128, n)
	for k := range y {
		for j, v := range x {
			y[k] += v * cmplx.Rect(1, sign*2*math.Pi*float64(j*k%n)/float64(n))
		}
	}
	return y
}

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 30, 38, 49, 64, 100, 133, 266, 320} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		p := newFFTPlan(n)
		work := make([]complex128, n)
		for _, inv := range []bool{false, true} {
			want := naiveDFT(x, inv)
			got := append([]complex128(nil), x...)
			p.transform(got, work, inv)
			for k := range got {
				if cmplx.Abs(got[k]-want[k]) > 1e-9*float64(n) {
					t.Fatalf("n=%d inverse=%v: X[%d] = %v, want %v", n, inv, k, got[k], want[k])
				}
			}
		}
	}
}

func TestFFT2(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w, h := 12, 10
	a := make([]complex128, w*h)
	for i := range a {
		a[i] = complex(rng.NormFloat64(), 0)
	}
	orig := append([]complex128(nil), a...)
	f := fft2{w: w, h: h, rows: newFFTPlan(w), cols: newFFTPlan(h)}
	work := make([]complex128, w*h)
	f.forward(a, work)
	// Against the definition, X[ky][kx] = Σ x[y][x] e^{−2πi(kx·x/w + ky·y/h)}.
	for ky := 0; ky < h; ky++ {
		for kx := 0; kx < w; kx++ {
			var want complex128
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					ph := -2 * math.Pi * (float64(kx*x)/float64(w) + float64(ky*y)/float64(h))
					want += orig[y*w+x] * cmplx.Rect(1, ph)
				}
			}
			if got := a[ky*w+kx]; cmplx.Abs(got-want) > 1e-9 {
				t.Fatalf("X[%d][%d] = %v, want %v", ky, kx, got, want)
			}
		}
	}
	f.inverse(a, work, 0, h)
	for i := range a {
		if cmplx.Abs(a[i]/complex(float64(w*h), 0)-orig[i]) > 1e-12 {
			t.Fatalf("round trip [%d] = %v, want %v", i, a[i]/complex(float64(w*h), 0), orig[i])
		}
	}
}

func BenchmarkFFT2(b *testing.B) {
	for _, n := range []int{256, 266, 320, 576} {
		b.Run(itoa(n), func(b *testing.B) {
			f := fft2{w: n, h: n, rows: newFFTPlan(n), cols: newFFTPlan(n)}
			a := make([]complex128, n*n)
			work := make([]complex128, n*n)
			for i := range a {
				a[i] = complex(float64(i%7), 0)
			}
			for b.Loop() {
				f.forward(a, work)
			}
		})
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
