package global

import (
	"image"
	"math"
)

// Parameters of the Gabor filter bank (Manjunath and Ma, 1996).
const (
	gaborScales  = 5
	gaborOrients = 8
	gaborStats   = 3    // mean, standard deviation, cube root of third central moment
	gaborUl      = 0.05 // centre frequency of the coarsest scale, cycles per pixel
	gaborUh      = 0.4  // centre frequency of the finest scale
	// gaborPad is the width of the mirror border added before the FFT, so that
	// the circular convolution does not wrap one side of the image onto the
	// other; a multiple of the largest decimation, 16.
	gaborPad = 32
	// gaborTrunc is the value of the quadratic form Q at which a filter is cut
	// off: e^{−Q/2} < 10⁻⁴ of its peak is treated as 0.
	gaborTrunc = 18.420680743952367 // 2·ln 10⁴
)

// gaborFilter is one filter of the bank in the frequency domain.
type gaborFilter struct {
	w, su, sv float64 // centre frequency and Gaussian widths, cycles per pixel
	cos, sin  float64 // of the orientation θ
	d         int     // decimation of the output grid
}

// gaborBank holds the filters, scale-major (coarse to fine), orientation
// minor.
var gaborBank = func() (bank [gaborScales * gaborOrients]gaborFilter) {
	a := math.Pow(gaborUh/gaborUl, 1/float64(gaborScales-1))
	ln2 := math.Ln2
	// Manjunath and Ma's widths for the finest scale, chosen so that adjacent
	// filters' half-peak contours touch in scale and in orientation.
	su := (a - 1) * gaborUh / ((a + 1) * math.Sqrt(2*ln2))
	sv := math.Tan(math.Pi/(2*gaborOrients)) * (gaborUh - 2*ln2*su*su/gaborUh) /
		math.Sqrt(2*ln2-(2*ln2)*(2*ln2)*su*su/(gaborUh*gaborUh))
	for s := 0; s < gaborScales; s++ {
		f := math.Pow(a, float64(s-(gaborScales-1))) // W_s / U_h
		g := gaborFilter{w: gaborUh * f, su: su * f, sv: sv * f}
		// The envelope |r| of the response is band-limited to about ±2σ around
		// the centre, so sampling it every d ≤ 1/(4σ) pixels keeps its
		// distribution; d is a power of two at most 16.
		g.d = 1
		for g.d < 16 && float64(2*g.d) <= 1/(4*max(g.su, g.sv)) {
			g.d *= 2
		}
		for o := 0; o < gaborOrients; o++ {
			th := math.Pi * float64(o) / gaborOrients
			g.sin, g.cos = math.Sincos(th)
			bank[s*gaborOrients+o] = g
		}
	}
	return bank
}()

// Gabor returns the Gabor wavelet texture descriptor of img, computed on the
// luma of the image resized to fit Side×Side, in dst[:GaborDim], reusing
// dst's storage if it is large enough.
//
// The paper says "Gabor wavelets transformation (n = 120)" and no more; the
// bank and statistics chosen are Manjunath and Ma's (1996) with 5 scales, 8
// orientations and 3 statistics: 5·8·3 = 120. Filter (s, o) is the Gaussian,
// in the frequency domain (u, v) in cycles per pixel (v up),
//
//	G_so(u, v) = exp(−½[(u′ − W_s)²/σ_u,s² + v′²/σ_v,s²]),
//	u′ = u cos θ_o + v sin θ_o,   v′ = −u sin θ_o + v cos θ_o,   θ_o = oπ/8,
//
// with W_s = U_l·a^s, a = (U_h/U_l)^{1/4}, U_l = 0.05, U_h = 0.4, and σ_u,s,
// σ_v,s Manjunath and Ma's widths (half-peak contours of neighbouring filters
// touch), proportional to W_s. Each filter has one lobe, so its response r is
// complex and |r| is the local amplitude at that scale and orientation; θ_o is
// the direction of the wave vector (perpendicular to the stripes), counter-
// clockwise from +x, and a sinusoid A cos(2π W_s (x cos θ_o + y sin θ_o))
// gives |r| = A/2 in filter (s, o). G is cut to 0 below 10⁻⁴ of its peak, and
// at zero frequency, so a uniform image gives r = 0.
//
// Entries (s·8 + o)·3 + {0, 1, 2} are, over the image,
//
//	μ = E|r|,   σ = (E[(|r| − μ)²])^{1/2},   ∛E[(|r| − μ)³]
//
// (Manjunath and Ma's mean and deviation, and the third moment as in Colour).
// The luma is mirrored 32 pixels beyond each side before the FFT, and the
// expectations are over the image's own pixels on a grid of spacing d_s = 2,
// 4, 8, 8, 16 pixels for s = 4…0: |r| varies no faster than the filter's
// bandwidth, and r on that grid is computed exactly, at a fraction of the cost,
// by folding the filtered spectrum onto a d_s-times smaller one before the
// inverse FFT.
func (e *Extractor) Gabor(img image.Image, dst []float32) ([]float32, error) {
	if err := e.prepare(img); err != nil {
		return nil, err
	}
	dst = resize(dst, GaborDim)
	e.gabor(dst)
	return dst, nil
}

// smooth5 reports whether n has no prime factor above 5.
func smooth5(n int) bool {
	for _, p := range []int{2, 3, 5} {
		for n%p == 0 {
			n /= p
		}
	}
	return n == 1
}

// gaborSize returns the padded transform length for an image side n: the
// smallest multiple 16·q ≥ n + 2·gaborPad with q having no prime factor above
// 5, so that every decimated grid has a fast FFT.
func gaborSize(n int) int {
	q := (n + 2*gaborPad + 15) / 16
	for !smooth5(q) {
		q++
	}
	return 16 * q
}

// mirror maps p to [0, n) by half-sample symmetric extension
// (… 1 0 | 0 1 … n−1 | n−1 n−2 …), periodic with period 2n.
func mirror(p, n int) int {
	p %= 2 * n
	if p < 0 {
		p += 2 * n
	}
	if p >= n {
		p = 2*n - 1 - p
	}
	return p
}

// plan2 returns a 2-D FFT of size w×h from cached 1-D plans, and a work
// buffer for it.
func (e *Extractor) plan2(w, h int) (fft2, []complex128) {
	plan := func(n int) *fftPlan {
		p := e.plans[n]
		if p == nil {
			if len(e.plans) >= 64 { // many image shapes: start over rather than grow
				clear(e.plans)
			}
			p = newFFTPlan(n)
			e.plans[n] = p
		}
		return p
	}
	e.work = grow(e.work, w*h)
	return fft2{w: w, h: h, rows: plan(w), cols: plan(h)}, e.work
}

// gabor computes the Gabor descriptor of the prepared image into dst.
func (e *Extractor) gabor(dst []float32) {
	w, h := e.w, e.h
	nx, ny := gaborSize(w), gaborSize(h)
	e.spec = grow(e.spec, nx*ny)
	spec := e.spec
	Y := e.y
	e.padIdx = grow(e.padIdx, nx)
	for x := range e.padIdx {
		e.padIdx[x] = int32(mirror(x-gaborPad, w))
	}
	for y := 0; y < ny; y++ {
		src := Y[mirror(y-gaborPad, h)*w:][:w]
		row := spec[y*nx : y*nx+nx]
		for x := range row {
			row[x] = complex(float64(src[e.padIdx[x]]), 0)
		}
	}
	f, work := e.plan2(nx, ny)
	f.forward(spec, work)

	for fi := range gaborBank {
		mags := e.gaborMags(&gaborBank[fi], gaborBank[fi].d, nx, ny)
		mu, sigma, skew := moments(mags)
		dst[fi*gaborStats] = float32(mu)
		dst[fi*gaborStats+1] = float32(sigma)
		dst[fi*gaborStats+2] = float32(skew)
	}
}

// gaborMags returns |r| of filter g on the pixels t·d of the image (row-major
// over the grid), given the padded spectrum e.spec of size nx×ny; d must
// divide 16. The slice is e.mags, overwritten by the next call.
func (e *Extractor) gaborMags(g *gaborFilter, d, nx, ny int) []float32 {
	w, h := e.w, e.h
	spec := e.spec
	bx, by := nx/d, ny/d
	e.small = grow(e.small, bx*by)
	small := e.small
	clear(small)

	// Sampling r every d pixels is the same as folding its spectrum: with
	// R_k = F_k·G_k, r(t·d) = (1/N) Σ_{j<N/d} (Σ_l R_{j + l·N/d}) e^{2πi jt/(N/d)},
	// exactly, whatever the support of R; so the small grid is filled by adding
	// each filtered frequency into bin k mod (N/d), and one small inverse FFT
	// gives r on the grid.
	//
	// Along a row of fixed v, Q(u) = A u² + B u + C; solve Q ≤ gaborTrunc for
	// the run of u to visit, then step e^{−Q/2} along it by the recurrence
	// e^{−Q(u+Δ)/2} = e^{−Q(u)/2}·ρ(u), ρ(u+Δ) = ρ(u)·e^{−AΔ²}, so a row costs
	// two exponentials.
	du := 1 / float64(nx)
	iu, iv := 1/(g.su*g.su), 1/(g.sv*g.sv)
	c, s := g.cos, g.sin
	A := c*c*iu + s*s*iv
	kappa := math.Exp(-A * du * du)
	for ky := -ny / 2; ky < ny/2; ky++ {
		v := -float64(ky) / float64(ny)
		B := 2 * (c*(v*s-g.w)*iu - s*v*c*iv)
		C := (v*s-g.w)*(v*s-g.w)*iu + v*v*c*c*iv
		disc := B*B - 4*A*(C-gaborTrunc)
		if disc < 0 {
			continue
		}
		sq := math.Sqrt(disc)
		lo := max(int(math.Ceil((-B-sq)/(2*A)*float64(nx))), -nx/2)
		hi := min(int(math.Floor((-B+sq)/(2*A)*float64(nx))), nx/2-1)
		if lo > hi {
			continue
		}
		u := float64(lo) * du
		gv := math.Exp(-0.5 * (A*u*u + B*u + C))
		rho := math.Exp(-0.5 * (A*(2*u*du+du*du) + B*du))
		srow := spec[((ky+ny)%ny)*nx:][:nx]
		drow := small[((ky%by+by)%by)*bx:][:bx]
		is, id := (lo+nx)%nx, (lo%bx+bx)%bx // kx mod nx and mod bx
		for kx := lo; kx <= hi; kx++ {
			if kx != 0 || ky != 0 {
				drow[id] += mulReal(srow[is], gv)
			}
			gv *= rho
			rho *= kappa
			if is++; is == nx {
				is = 0
			}
			if id++; id == bx {
				id = 0
			}
		}
	}

	// Output sample t is pixel t·d of the padded image; the image occupies
	// [gaborPad, gaborPad + w), and gaborPad is a multiple of d, so the first
	// image row and column are always on the grid.
	tx0, tx1 := gaborPad/d, (gaborPad+w+d-1)/d
	ty0, ty1 := gaborPad/d, (gaborPad+h+d-1)/d
	f, work := e.plan2(bx, by)
	f.inverse(small, work, ty0, ty1)
	e.mags = grow(e.mags, (tx1-tx0)*(ty1-ty0))
	mags := e.mags
	norm := 1 / float64(nx*ny)
	k := 0
	for ty := ty0; ty < ty1; ty++ {
		for _, z := range small[ty*bx+tx0 : ty*bx+tx1] {
			mags[k] = float32(math.Sqrt(real(z)*real(z)+imag(z)*imag(z)) * norm)
			k++
		}
	}
	return mags
}
