package global

import (
	"fmt"
	"math"
)

// fftPlan computes discrete Fourier transforms of one length n,
//
//	X_k = Σ_{j<n} x_j e^{∓2πi jk/n},
//
// with a mixed-radix Stockham autosort algorithm (radices 4, 2, 3, 5, and a
// plain O(r²) butterfly for any other prime factor r), so any length works and
// lengths with small factors are fast. The inverse is unnormalised: applying
// forward then inverse multiplies by n.
//
// gonum's dsp/fourier (a port of FFTPACK) would serve, and gonum is already a
// requirement of the module, but this plan is faster on the lengths the
// package uses: gonum took 2.7–5.6× as long per 2-D transform (4.0× at
// 320×320, the size of GIST and of Gabor on a 256-pixel image; 2.7× at
// 266×266, whose factor 19 takes the generic butterfly here) and 2.7–5.0× per
// 1-D transform (AMD EPYC, Go 1.26, gonum v0.17.0), measured with
//
//	go test -run '^$' -bench FFT ./transforms/global/
//
// (BenchmarkFFTGonum; TestFFTMatchesGonum checks that both give the same
// transform). Part of the gap is the batched column pass, which gonum's 1-D
// API cannot do without gathering each column.
type fftPlan struct {
	n       int
	radices []int
	tw      []complex128         // tw[j] = e^{−2πi j/n}
	twInv   []complex128         // conjugates of tw, for the inverse
	scratch []complex128         // generic butterfly inputs, len = largest radix
	trig    map[int][][2]float64 // for each radix r > 5: cos and sin of 2πt/r
}

// newFFTPlan returns a plan for length n ≥ 1.
func newFFTPlan(n int) *fftPlan {
	if n < 1 {
		panic(fmt.Sprintf("global: FFT length %d < 1", n))
	}
	p := &fftPlan{n: n, tw: make([]complex128, n), twInv: make([]complex128, n)}
	for j := range p.tw {
		s, c := math.Sincos(-2 * math.Pi * float64(j) / float64(n))
		p.tw[j] = complex(c, s)
		p.twInv[j] = complex(c, -s)
	}
	m := n
	for m%4 == 0 {
		p.radices = append(p.radices, 4)
		m /= 4
	}
	for _, r := range []int{2, 3, 5} {
		for m%r == 0 {
			p.radices = append(p.radices, r)
			m /= r
		}
	}
	for r := 7; m > 1; r += 2 {
		for m%r == 0 {
			p.radices = append(p.radices, r)
			m /= r
		}
		if r*r > m && m > 1 {
			p.radices = append(p.radices, m)
			m = 1
		}
	}
	maxR := 1
	for _, r := range p.radices {
		maxR = max(maxR, r)
	}
	p.scratch = make([]complex128, maxR)
	p.trig = make(map[int][][2]float64)
	for _, r := range p.radices {
		if r > 5 && p.trig[r] == nil {
			t := make([][2]float64, r)
			for e := range t {
				s, c := math.Sincos(2 * math.Pi * float64(e) / float64(r))
				t[e] = [2]float64{c, s}
			}
			p.trig[r] = t
		}
	}
	return p
}

// transform replaces x (len n) by its DFT, forward (e^{−2πi jk/n}) or, if
// inverse, unnormalised inverse (e^{+2πi jk/n}). work must have len ≥ n and
// not overlap x.
func (p *fftPlan) transform(x, work []complex128, inverse bool) {
	p.transformBatch(x, work, 1, inverse)
}

// transformBatch transforms batch interleaved sequences at once: x holds n
// elements of batch values each, element e of sequence b at x[e·batch + b].
// With batch = the width of a row-major array this transforms its columns in
// place, with every inner loop running along contiguous rows. work must have
// len ≥ n·batch and not overlap x.
func (p *fftPlan) transformBatch(x, work []complex128, batch int, inverse bool) {
	n := p.n
	if len(x) != n*batch || len(work) < n*batch {
		panic(fmt.Sprintf("global: FFT of length %d×%d given %d values and %d of work", n, batch, len(x), len(work)))
	}
	tw := p.tw
	if inverse {
		tw = p.twInv
	}
	src, dst := x, work[:n*batch]
	// Stage with radix r on sub-transforms of length l = n/s: write
	// u = q + s(j + m·i) (q < s, i < r, j < m = l/r), then
	//   X[q + s(k + r·t)] = DFT_m over j of ω_l^{jk} Σ_i a_i ω_r^{ik},
	// so each stage does the r-point butterflies and twiddles and leaves m-point
	// transforms, interleaved with stride r·s, for the next stage, already in
	// natural output order. With batches, an element is batch values wide, so
	// memory strides are s·batch while the twiddles still step by s.
	s := 1
	for _, r := range p.radices {
		m := n / (s * r)
		ms := s * batch
		switch r {
		case 4:
			radix4(src, dst, tw, ms, s, m, inverse)
		case 2:
			radix2(src, dst, tw, ms, s, m)
		case 3:
			radix3(src, dst, tw, ms, s, m, inverse)
		case 5:
			radix5(src, dst, tw, ms, s, m, inverse)
		default:
			radixAny(src, dst, tw, ms, s, m, r, p.scratch[:r], p.trig[r], inverse)
		}
		src, dst = dst, src
		s *= r
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
}

// The butterflies below write, for each j < m and q < s, the r outputs
// dst[q + s(r·j + k)] = ω_l^{jk} Σ_i src[q + s(j + i·m)] ω_r^{ik}, where s is
// the memory stride; tw is ω_n^e (conjugated for the inverse) and
// ω_l^{jk} = tw[j·k·ts]. The inner loops over q run along contiguous memory;
// each is written over sub-slices so that bounds checks hoist.

// mulI returns i·z if inverse, else −i·z: the factor ±i of the radix-4, -3
// and -5 butterflies, whose sign flips with the direction of the transform.
func mulI(z complex128, inverse bool) complex128 {
	if inverse {
		return complex(-imag(z), real(z))
	}
	return complex(imag(z), -real(z))
}

// mulReal returns z·k for real k in two multiplications; Go's complex product
// with complex(k, 0) takes four.
func mulReal(z complex128, k float64) complex128 {
	return complex(real(z)*k, imag(z)*k)
}

func radix2(src, dst, tw []complex128, s, ts, m int) {
	for j := 0; j < m; j++ {
		w := tw[j*ts]
		a := src[s*j : s*j+s]
		b := src[s*(j+m) : s*(j+m)+s]
		y0 := dst[s*2*j : s*2*j+s]
		y1 := dst[s*(2*j+1) : s*(2*j+1)+s]
		for q := range a {
			u, v := a[q], b[q]
			y0[q] = u + v
			y1[q] = (u - v) * w
		}
	}
}

func radix4(src, dst, tw []complex128, s, ts, m int, inverse bool) {
	if s == 1 { // then ts = 1 too
		for j := 0; j < m; j++ {
			b0, b1, b2, b3 := src[j], src[j+m], src[j+2*m], src[j+3*m]
			t0, t1 := b0+b2, b0-b2
			t2, jt3 := b1+b3, mulI(b1-b3, inverse)
			y := dst[4*j : 4*j+4]
			y[0] = t0 + t2
			y[1] = (t1 + jt3) * tw[j]
			y[2] = (t0 - t2) * tw[2*j]
			y[3] = (t1 - jt3) * tw[3*j]
		}
		return
	}
	for j := 0; j < m; j++ {
		w1, w2, w3 := tw[j*ts], tw[2*j*ts], tw[3*j*ts]
		a0 := src[s*j : s*j+s]
		a1 := src[s*(j+m) : s*(j+m)+s]
		a2 := src[s*(j+2*m) : s*(j+2*m)+s]
		a3 := src[s*(j+3*m) : s*(j+3*m)+s]
		o := s * 4 * j
		y0 := dst[o : o+s]
		y1 := dst[o+s : o+2*s]
		y2 := dst[o+2*s : o+3*s]
		y3 := dst[o+3*s : o+4*s]
		for q := range a0 {
			b0, b1, b2, b3 := a0[q], a1[q], a2[q], a3[q]
			t0, t1 := b0+b2, b0-b2
			t2, jt3 := b1+b3, mulI(b1-b3, inverse)
			y0[q] = t0 + t2
			y1[q] = (t1 + jt3) * w1
			y2[q] = (t0 - t2) * w2
			y3[q] = (t1 - jt3) * w3
		}
	}
}

// sin60 is sin(2π/3); cos(2π/3) = −1/2.
var sin60 = math.Sqrt(3) / 2

func radix3(src, dst, tw []complex128, s, ts, m int, inverse bool) {
	for j := 0; j < m; j++ {
		w1, w2 := tw[j*ts], tw[2*j*ts]
		a0 := src[s*j : s*j+s]
		a1 := src[s*(j+m) : s*(j+m)+s]
		a2 := src[s*(j+2*m) : s*(j+2*m)+s]
		o := s * 3 * j
		y0 := dst[o : o+s]
		y1 := dst[o+s : o+2*s]
		y2 := dst[o+2*s : o+3*s]
		for q := range a0 {
			b0, b1, b2 := a0[q], a1[q], a2[q]
			t1 := b1 + b2
			t2 := b0 - t1*0.5
			t3 := mulI(mulReal(b1-b2, sin60), inverse)
			y0[q] = b0 + t1
			y1[q] = (t2 + t3) * w1
			y2[q] = (t2 - t3) * w2
		}
	}
}

// Cosines and sines of 2π/5 and 4π/5 for the radix-5 butterfly.
var (
	c51, s51 = math.Cos(2 * math.Pi / 5), math.Sin(2 * math.Pi / 5)
	c52, s52 = math.Cos(4 * math.Pi / 5), math.Sin(4 * math.Pi / 5)
)

func radix5(src, dst, tw []complex128, s, ts, m int, inverse bool) {
	for j := 0; j < m; j++ {
		w1, w2, w3, w4 := tw[j*ts], tw[2*j*ts], tw[3*j*ts], tw[4*j*ts]
		a0 := src[s*j : s*j+s]
		a1 := src[s*(j+m) : s*(j+m)+s]
		a2 := src[s*(j+2*m) : s*(j+2*m)+s]
		a3 := src[s*(j+3*m) : s*(j+3*m)+s]
		a4 := src[s*(j+4*m) : s*(j+4*m)+s]
		o := s * 5 * j
		y0 := dst[o : o+s]
		y1 := dst[o+s : o+2*s]
		y2 := dst[o+2*s : o+3*s]
		y3 := dst[o+3*s : o+4*s]
		y4 := dst[o+4*s : o+5*s]
		for q := range a0 {
			b0 := a0[q]
			p1, p2 := a1[q]+a4[q], a2[q]+a3[q]
			d1, d2 := a1[q]-a4[q], a2[q]-a3[q]
			r1 := b0 + mulReal(p1, c51) + mulReal(p2, c52)
			r2 := b0 + mulReal(p1, c52) + mulReal(p2, c51)
			i1 := mulI(mulReal(d1, s51)+mulReal(d2, s52), inverse)
			i2 := mulI(mulReal(d1, s52)-mulReal(d2, s51), inverse)
			y0[q] = b0 + p1 + p2
			y1[q] = (r1 + i1) * w1
			y2[q] = (r2 + i2) * w2
			y3[q] = (r2 - i2) * w3
			y4[q] = (r1 - i1) * w4
		}
	}
}

// radixAny is the butterfly for any other odd prime r, in O(r²) real
// multiplications: pairing inputs i and r−i,
//
//	y_k = a_0 + Σ_{i=1}^{(r−1)/2} [cos(2πik/r)(a_i + a_{r−i}) ∓ i·sin(2πik/r)(a_i − a_{r−i})],
//
// which takes a quarter of the work of complex products. a holds r values and
// cs the cosines and sines of 2πt/r.
func radixAny(src, dst, tw []complex128, s, ts, m, r int, a []complex128, cs [][2]float64, inverse bool) {
	h := (r - 1) / 2
	for j := 0; j < m; j++ {
		for q := 0; q < s; q++ {
			a0 := src[q+s*j]
			sum := a0
			for i := 1; i <= h; i++ {
				u, v := src[q+s*(j+i*m)], src[q+s*(j+(r-i)*m)]
				a[i], a[r-i] = u+v, u-v
				sum += u + v
			}
			dst[q+s*r*j] = sum
			for k := 1; k <= h; k++ {
				re, im := a0, complex128(0)
				e := 0
				for i := 1; i <= h; i++ {
					e += k
					if e >= r {
						e -= r
					}
					re += mulReal(a[i], cs[e][0])
					im += mulReal(a[r-i], cs[e][1])
				}
				im = mulI(im, inverse)
				dst[q+s*(r*j+k)] = (re + im) * tw[j*k*ts]
				dst[q+s*(r*j+r-k)] = (re - im) * tw[j*(r-k)*ts]
			}
		}
	}
}

// fft2 is a 2-D transform of a row-major w×h complex array through 1-D plans
// for its rows and columns.
type fft2 struct {
	w, h       int
	rows, cols *fftPlan
}

// forward replaces a (len w·h, row-major) by its 2-D DFT. work must have
// len ≥ w·h: the column pass transforms all columns at once.
func (f fft2) forward(a, work []complex128) {
	f.check(a, work)
	for y := 0; y < f.h; y++ {
		f.rows.transform(a[y*f.w:y*f.w+f.w], work, false)
	}
	f.cols.transformBatch(a, work, f.w, false)
}

// inverse replaces rows [lo, hi) of a by those of its unnormalised inverse
// 2-D DFT; the other rows are left holding intermediate values. Columns are
// transformed first so that the last pass, over rows, can be limited to the
// rows a caller reads. work is as for forward.
func (f fft2) inverse(a, work []complex128, lo, hi int) {
	f.check(a, work)
	if lo < 0 || hi > f.h || lo > hi {
		panic(fmt.Sprintf("global: inverse 2-D FFT rows [%d, %d) of %d", lo, hi, f.h))
	}
	f.cols.transformBatch(a, work, f.w, true)
	for y := lo; y < hi; y++ {
		f.rows.transform(a[y*f.w:y*f.w+f.w], work, true)
	}
}

func (f fft2) check(a, work []complex128) {
	if len(a) != f.w*f.h || len(work) < f.w*f.h {
		panic(fmt.Sprintf("global: 2-D FFT of %d×%d given %d values and %d of work", f.w, f.h, len(a), len(work)))
	}
}
