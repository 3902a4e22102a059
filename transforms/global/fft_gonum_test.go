package global

import (
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// This file compares the package's FFT with gonum's dsp/fourier (a port of
// FFTPACK) on the lengths the package transforms, so that the claim in
// fft.go that the hand-written one is faster can be re-measured:
//
//	go test -run '^$' -bench FFT ./transforms/global/

// fftLengths are the 1-D lengths the package's plans take: 320 is the GIST
// filter bank's transform (256 + 2·32) and Gabor's on a 256×256 image, 266
// GIST's prefilter (256 + 2·5, with the generic radix 7 and 19), 576 Gabor's
// on a 512-pixel side, and 20…160 and 36…288 Gabor's decimated grids (320 and
// 576 divided by 16, 8, 4 and 2).
var fftLengths = []int{20, 36, 40, 72, 80, 144, 160, 266, 288, 320, 576}

// fft2Sizes are the square 2-D transforms of BenchmarkFFT2 that the package
// runs (256: Gabor on a 192-pixel side).
var fft2Sizes = []int{256, 266, 320, 576}

// gonumFFT2 is the 2-D forward transform of a row-major w×h array with
// gonum's 1-D CmplxFFT, the way its API allows: rows in place, then each
// column gathered into col, transformed and scattered back.
type gonumFFT2 struct {
	w, h       int
	rows, cols *fourier.CmplxFFT
	col        []complex128
}

func newGonumFFT2(w, h int) *gonumFFT2 {
	return &gonumFFT2{w: w, h: h, rows: fourier.NewCmplxFFT(w), cols: fourier.NewCmplxFFT(h), col: make([]complex128, h)}
}

func (g *gonumFFT2) forward(a []complex128) {
	for y := 0; y < g.h; y++ {
		row := a[y*g.w : y*g.w+g.w]
		g.rows.Coefficients(row, row)
	}
	for x := 0; x < g.w; x++ {
		for y := range g.col {
			g.col[y] = a[y*g.w+x]
		}
		g.cols.Coefficients(g.col, g.col)
		for y, v := range g.col {
			a[y*g.w+x] = v
		}
	}
}

func randomComplex(rng *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
	}
	return x
}

// maxAbsDiff returns max_i |a_i − b_i| and max_i |b_i|.
func maxAbsDiff(a, b []complex128) (diff, scale float64) {
	for i := range a {
		diff = max(diff, cmplx.Abs(a[i]-b[i]))
		scale = max(scale, cmplx.Abs(b[i]))
	}
	return diff, scale
}

// TestFFTMatchesGonum checks that the two transforms compute the same thing
// (same sign convention, both unnormalised), so that the benchmarks below
// compare like with like.
func TestFFTMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range fftLengths {
		x := randomComplex(rng, n)
		p := newFFTPlan(n)
		g := fourier.NewCmplxFFT(n)
		work := make([]complex128, n)
		for _, inv := range []bool{false, true} {
			got := append([]complex128(nil), x...)
			p.transform(got, work, inv)
			var want []complex128
			if inv {
				want = g.Sequence(nil, x)
			} else {
				want = g.Coefficients(nil, x)
			}
			if d, s := maxAbsDiff(got, want); d > 1e-13*float64(n)*s {
				t.Errorf("n=%d inverse=%v: max |ours − gonum| = %g (max |X| = %g)", n, inv, d, s)
			}
		}
	}
	for _, n := range fft2Sizes {
		a := randomComplex(rng, n*n)
		b := append([]complex128(nil), a...)
		fft2{w: n, h: n, rows: newFFTPlan(n), cols: newFFTPlan(n)}.forward(a, make([]complex128, n*n))
		newGonumFFT2(n, n).forward(b)
		if d, s := maxAbsDiff(a, b); d > 1e-13*float64(n*n)*s {
			t.Errorf("%d×%d: max |ours − gonum| = %g (max |X| = %g)", n, n, d, s)
		}
	}
}

// BenchmarkFFTGonum times one forward transform by each implementation on
// the same input; compare ns/op of …/ours and …/gonum for each size. Each
// iteration copies the input in first (O(n), both alike), so that repeated
// transforms do not overflow.
func BenchmarkFFTGonum(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range fftLengths {
		x := randomComplex(rng, n)
		buf := make([]complex128, n)
		b.Run(fmt.Sprintf("1d/%d/ours", n), func(b *testing.B) {
			p := newFFTPlan(n)
			work := make([]complex128, n)
			for b.Loop() {
				copy(buf, x)
				p.transform(buf, work, false)
			}
		})
		b.Run(fmt.Sprintf("1d/%d/gonum", n), func(b *testing.B) {
			g := fourier.NewCmplxFFT(n)
			for b.Loop() {
				copy(buf, x)
				g.Coefficients(buf, buf)
			}
		})
	}
	for _, n := range fft2Sizes {
		x := randomComplex(rng, n*n)
		buf := make([]complex128, n*n)
		b.Run(fmt.Sprintf("2d/%d/ours", n), func(b *testing.B) {
			f := fft2{w: n, h: n, rows: newFFTPlan(n), cols: newFFTPlan(n)}
			work := make([]complex128, n*n)
			for b.Loop() {
				copy(buf, x)
				f.forward(buf, work)
			}
		})
		b.Run(fmt.Sprintf("2d/%d/gonum", n), func(b *testing.B) {
			g := newGonumFFT2(n, n)
			for b.Loop() {
				copy(buf, x)
				g.forward(buf)
			}
		})
	}
}
