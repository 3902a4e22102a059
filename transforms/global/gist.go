package global

import (
	"image"
	"math"
	"sync"

	xdraw "golang.org/x/image/draw"
)

// Parameters of LMgist, Oliva and Torralba's reference implementation
// (LMgist.m, with the parameters of its demo, demoGist.m, which give the
// usual 512 dimensions).
const (
	gistSize     = 256                      // param.imageSize
	gistPad      = 32                       // param.boundaryExtension
	gistN        = gistSize + 2*gistPad     // transform size of the filter bank
	gistPrePad   = 5                        // prefilt's border, w
	gistPreN     = gistSize + 2*gistPrePad  // prefilt's transform size
	gistFc       = 4                        // param.fc_prefilt
	gistBlocks   = 4                        // param.numberBlocks
	gistScales   = 4                        // len(param.orientationsPerScale)
	gistOrients  = 8                        // param.orientationsPerScale(i)
	gistFilters  = gistScales * gistOrients // 32
	gistBlockLen = gistSize / gistBlocks    // 64
)

// gistBank returns LMgist's createGabor([8 8 8 8], 320) transfer functions,
// filter-major, each gistN×gistN in unshifted FFT order. Filter i = 8·scale +
// j has, with (f_x, f_y) the signed integer frequency (f_y along rows, down),
// f_r = |f| and φ = atan2(f_y, f_x),
//
//	G_i = exp(−3.5·(f_r/(320·f_0) − 1)² − 2π·(φ + θ_j)²),   f_0 = 0.3/1.85^scale, θ_j = jπ/8,
//
// with φ + θ_j wrapped to [−π, π]. It is computed once per process (13 MB)
// and only read afterwards, so Extractors share it.
var gistBank = sync.OnceValue(func() []float32 {
	// G_i is a radial factor, which depends on the scale only, times an
	// angular one, which depends on the orientation only: 12 planes of
	// exponentials make the 32 filters.
	const nn = gistN * gistN
	fr := make([]float64, nn)
	phi := make([]float64, nn)
	for ky := 0; ky < gistN; ky++ {
		fy := float64(signedFreq(ky, gistN))
		for kx := 0; kx < gistN; kx++ {
			fx := float64(signedFreq(kx, gistN))
			fr[ky*gistN+kx] = math.Hypot(fx, fy)
			phi[ky*gistN+kx] = math.Atan2(fy, fx)
		}
	}
	var radial [gistScales][]float64
	for sc := range radial {
		f0 := 0.3 / math.Pow(1.85, float64(sc))
		radial[sc] = make([]float64, nn)
		for i, r := range fr {
			x := r/gistN/f0 - 1
			radial[sc][i] = math.Exp(-10 * 0.35 * x * x)
		}
	}
	g := make([]float32, gistFilters*nn)
	ang := make([]float64, nn)
	for j := 0; j < gistOrients; j++ {
		th := math.Pi / gistOrients * float64(j)
		for i, p := range phi {
			tr := p + th
			if tr < -math.Pi {
				tr += 2 * math.Pi
			} else if tr > math.Pi {
				tr -= 2 * math.Pi
			}
			ang[i] = math.Exp(-2 * math.Pi * tr * tr)
		}
		for sc := range radial {
			out := g[(sc*gistOrients+j)*nn:][:nn]
			for i, r := range radial[sc] {
				out[i] = float32(r * ang[i])
			}
		}
	}
	return g
})

// signedFreq returns the signed frequency of FFT index k of length n (even):
// k for k < n/2, else k − n.
func signedFreq(k, n int) int {
	if k < n/2 {
		return k
	}
	return k - n
}

// gistPrefilt returns prefilt's separable Gaussian exp(−f²/s₁²), s₁ =
// fc/√ln 2, over the signed frequencies of a gistPreN-point transform.
var gistPrefilt = func() (g [gistPreN]float64) {
	s1 := gistFc / math.Sqrt(math.Ln2)
	for k := range g {
		f := float64(signedFreq(k, gistPreN))
		g[k] = math.Exp(-f * f / (s1 * s1))
	}
	return g
}()

// GIST returns the GIST descriptor of img in dst[:GISTDim], reusing dst's
// storage if it is large enough.
//
// It reproduces Oliva and Torralba's reference implementation, LMgist.m, with
// its default parameters (4 scales × 8 orientations, 4×4 blocks, 256×256
// image, boundary extension 32, prefilter fc = 4); the paper names GIST and
// its dimension only. Steps, on the image already resized to fit Side×Side:
//
//  1. grey = (R + G + B)/3; take the central square (side min(w, h)) and
//     resize it to 256×256 with an antialiased bilinear filter (LMgist's
//     imresizecrop scales first, then crops; the two agree up to sub-pixel
//     rounding of the crop). Stretch: I ← 255(I − min)/max(1, max − min), so
//     the range becomes [0, 255] unless it is under one grey level, and a
//     uniform image gives I = 0.
//  2. prefilt: I ← log(1 + I), mirror 5 pixels, whiten and normalise local
//     contrast in the frequency domain with H(f) = exp(−|f|²/s₁²), s₁ = 4/√ln 2:
//     O = I − H∗I, O ← O/(0.2 + √|H∗O²|), crop the border.
//  3. Mirror 32 pixels, FFT (320×320), and for each of the 32 transfer
//     functions G_i of createGabor (see gistBank) take |IFFT(F·G_i)| on the
//     256×256 image and average it over each 64×64 block of a 4×4 grid.
//
// Entry 16·i + 4·b_x + b_y is filter i (8·scale + orientation, scale 0 the
// finest, f_0 = 0.3 cycles per pixel of the 256 image, orientation j tuned to
// wave vectors at jπ/8 counter-clockwise from +x), block column b_x, block row
// b_y: LMgist's column-major order. Values are unnormalised, as LMgist
// returns them; a uniform image gives exactly 0.
func (e *Extractor) GIST(img image.Image, dst []float32) ([]float32, error) {
	if err := e.prepare(img); err != nil {
		return nil, err
	}
	dst = resize(dst, GISTDim)
	e.gist(dst)
	return dst, nil
}

// gist computes the GIST descriptor of the prepared image into dst.
func (e *Extractor) gist(dst []float32) {
	// 1. Central square, 256×256, grey, stretched.
	side := min(e.w, e.h)
	x0, y0 := (e.w-side)/2, (e.h-side)/2
	src := image.Rect(x0, y0, x0+side, y0+side)
	if e.gistRGBA == nil {
		e.gistRGBA = image.NewRGBA(image.Rect(0, 0, gistSize, gistSize))
	}
	if side == gistSize {
		xdraw.Copy(e.gistRGBA, image.Point{}, e.rgba, src, xdraw.Src, nil)
	} else {
		xdraw.BiLinear.Scale(e.gistRGBA, e.gistRGBA.Rect, e.rgba, src, xdraw.Src, nil)
	}
	const n = gistSize * gistSize
	I := grow(e.gistPix, n)
	e.gistPix = I
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range I {
		p := e.gistRGBA.Pix[4*i : 4*i+3]
		v := (float64(p[0]) + float64(p[1]) + float64(p[2])) / 3
		I[i] = v
		lo, hi = min(lo, v), max(hi, v)
	}
	// LMgist: img = 255*img/max(1, max(img(:))) after subtracting the minimum;
	// the floor of 1 keeps a uniform image at 0 rather than 0/0.
	k := 255 / max(1, hi-lo)
	for i, v := range I {
		I[i] = (v - lo) * k
	}

	// 2. prefilt.
	const pn = gistPreN
	a := grow(e.gistA, pn*pn)
	b := grow(e.gistB, pn*pn)
	e.gistA, e.gistB = a, b
	for y := 0; y < pn; y++ {
		row := I[mirror(y-gistPrePad, gistSize)*gistSize:][:gistSize]
		for x := 0; x < pn; x++ {
			a[y*pn+x] = complex(math.Log1p(row[mirror(x-gistPrePad, gistSize)]), 0)
		}
	}
	copy(b, a) // b keeps the log image
	pre, work := e.plan2(pn, pn)
	pre.forward(a, work)
	gistLowpass(a)
	pre.inverse(a, work, 0, pn)
	inv := 1 / float64(pn*pn)
	for i := range b {
		o := real(b[i]) - real(a[i])*inv // whitened
		b[i] = complex(o, 0)
		a[i] = complex(o*o, 0)
	}
	pre.forward(a, work)
	gistLowpass(a)
	pre.inverse(a, work, gistPrePad, gistPrePad+gistSize)
	for y := 0; y < gistSize; y++ {
		for x := 0; x < gistSize; x++ {
			i := (y+gistPrePad)*pn + x + gistPrePad
			z := mulReal(a[i], inv)
			localStd := math.Sqrt(math.Hypot(real(z), imag(z)))
			I[y*gistSize+x] = real(b[i]) / (0.2 + localStd)
		}
	}

	// 3. Gabor energies on a 4×4 grid.
	const gn = gistN
	F := grow(e.gistF, gn*gn)
	R := grow(e.gistR, gn*gn)
	e.gistF, e.gistR = F, R
	for y := 0; y < gn; y++ {
		row := I[mirror(y-gistPad, gistSize)*gistSize:][:gistSize]
		for x := 0; x < gn; x++ {
			F[y*gn+x] = complex(row[mirror(x-gistPad, gistSize)], 0)
		}
	}
	plan, work := e.plan2(gn, gn)
	plan.forward(F, work)
	bank := gistBank()
	scale := 1 / float64(gn*gn) / float64(gistBlockLen*gistBlockLen)
	for fi := 0; fi < gistFilters; fi++ {
		G := bank[fi*gn*gn:][:gn*gn]
		for i, f := range F {
			R[i] = mulReal(f, float64(G[i]))
		}
		plan.inverse(R, work, gistPad, gistPad+gistSize)
		var sums [gistBlocks * gistBlocks]float64
		for y := 0; y < gistSize; y++ {
			row := R[(y+gistPad)*gn+gistPad:][:gistSize]
			by := y / gistBlockLen
			for bx := 0; bx < gistBlocks; bx++ {
				var s float64
				for _, z := range row[bx*gistBlockLen : (bx+1)*gistBlockLen] {
					s += math.Sqrt(real(z)*real(z) + imag(z)*imag(z))
				}
				sums[bx*gistBlocks+by] += s
			}
		}
		for k, s := range sums {
			dst[fi*gistBlocks*gistBlocks+k] = float32(s * scale)
		}
	}
}

// gistLowpass multiplies a gistPreN×gistPreN spectrum by prefilt's Gaussian.
func gistLowpass(a []complex128) {
	for y := 0; y < gistPreN; y++ {
		gy := gistPrefilt[y]
		row := a[y*gistPreN:][:gistPreN]
		for x := range row {
			row[x] = mulReal(row[x], gy*gistPrefilt[x])
		}
	}
}
