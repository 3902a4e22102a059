package sift

import (
	"bytes"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConvSymMatchesGo checks that the vector convolution gives bit for bit
// what convSymGo gives, for every row length around the vector widths,
// every kernel radius the blurs use and scattered row offsets.
func TestConvSymMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no vector code on this platform")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, 4096)
	for i := range src {
		src[i] = rng.Float32()
	}
	for r := 1; r <= 15; r++ {
		k := make([]float32, r+1)
		for i := range k {
			k[i] = rng.Float32()
		}
		offs := make([]int, 2*r)
		for n := 0; n <= 150; n++ {
			for i := range offs {
				offs[i] = rng.IntN(1001) - 500 // rows above and below
			}
			c := 1024 + rng.IntN(1024)
			want := make([]float32, n)
			got := make([]float32, n)
			convSymGo(want, src, c, offs, k)
			convSym(got, src, c, offs, k)
			for x := range want {
				if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
					t.Fatalf("r=%d n=%d x=%d: vector %v, scalar %v", r, n, x, got[x], want[x])
				}
			}
		}
	}
}

// TestConvSym4MatchesConvSym checks that the four-row convolution gives,
// bit for bit, convSymGo of each row, with the vector code and without, for
// row lengths around the vector width, every kernel radius up to past the
// scalar code's stack buffer, row strides, and scattered rows (the ring's
// reflected rows repeat and wrap around).
func TestConvSym4MatchesConvSym(t *testing.T) { forEachPath(t, testConvSym4) }

func testConvSym4(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	src := make([]float32, 8192)
	for i := range src {
		src[i] = rng.Float32()
	}
	for r := 1; r <= 18; r++ {
		k := make([]float32, r+1)
		for i := range k {
			k[i] = rng.Float32()
		}
		rows := make([]int, 2*r+4)
		offs := make([]int, 2*r)
		for n := 0; n <= 40; n++ {
			for i := range rows {
				rows[i] = rng.IntN(len(src) - n + 1)
			}
			stride := n + rng.IntN(5)
			dst := make([]float32, 3*stride+n)
			convSym4(dst, stride, n, src, rows, k)
			for j := range 4 {
				c := rows[r+j]
				for i := 1; i <= r; i++ {
					offs[2*i-2], offs[2*i-1] = rows[r+j-i]-c, rows[r+j+i]-c
				}
				want := make([]float32, n)
				convSymGo(want, src, c, offs, k)
				for x := range want {
					if got := dst[j*stride+x]; math.Float32bits(got) != math.Float32bits(want[x]) {
						t.Fatalf("r=%d n=%d row %d x=%d: %v, want %v", r, n, j, x, got, want[x])
					}
				}
			}
		}
	}
}

func TestConvSym4PanicsOutside(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a row outside the source")
		}
	}()
	src := make([]float32, 100)
	convSym4(make([]float32, 40), 10, 10, src, []int{0, 10, 20, 30, 40, 91}, []float32{0.5, 0.25})
}

func TestConvSymPanicsOutside(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an offset outside the source")
		}
	}()
	src := make([]float32, 100)
	convSym(make([]float32, 10), src, 5, []int{-6, 6}, []float32{0.5, 0.25})
}

// TestGradPolarMatchesGo checks the vector gradient magnitude and angle bit
// for bit against the scalar code, on all octants, axes, zeros and ties.
func TestGradPolarMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	special := []float32{0, 1, -1, 0.5, -0.5, 1e-20, -1e-20, 3}
	var dx, dy []float32
	for _, x := range special {
		for _, y := range special {
			dx, dy = append(dx, x), append(dy, y)
		}
	}
	for range 20000 {
		s := float32(math.Pow(10, rng.Float64()*4-3))
		dx = append(dx, (rng.Float32()-0.5)*s)
		dy = append(dy, (rng.Float32()-0.5)*s)
	}
	for _, n := range []int{0, 1, 7, 8, 9, 63, len(dx)} {
		mag, ang := make([]float32, n), make([]float32, n)
		wmag, wang := make([]float32, n), make([]float32, n)
		gradPolar(dx[:n], dy[:n], mag, ang)
		gradPolarGo(dx[:n], dy[:n], wmag, wang)
		for i := range n {
			if math.Float32bits(mag[i]) != math.Float32bits(wmag[i]) || math.Float32bits(ang[i]) != math.Float32bits(wang[i]) {
				t.Fatalf("(%v, %v): got |%v| ∠%v, scalar |%v| ∠%v", dx[i], dy[i], mag[i], ang[i], wmag[i], wang[i])
			}
		}
	}
}

// TestDogMask checks the vector candidate search against the definition,
// with plateaus, ties and values at the threshold, for row lengths around
// the vector width.
func TestDogMask(t *testing.T) {
	forEachPath(t, testDogMask)
}

// forEachPath runs f with the vector code, if there is any, and without.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	saved := useAVX
	defer func() { useAVX = saved }()
	if saved {
		t.Run("vector", f)
	}
	useAVX = false
	t.Run("scalar", f)
}

func testDogMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const thr = 0.25
	for n := 1; n <= 70; n++ {
		lo := make([]float32, n+2)
		hi := make([]float32, n+2)
		for i := range lo {
			// Few distinct differences, so ties and plateaus are common;
			// all exact in float32.
			lo[i] = float32(rng.IntN(5)) / 8
			hi[i] = lo[i] + float32(rng.IntN(9)-4)/8
		}
		mask := make([]uint8, (n+7)/8)
		for i := range mask {
			mask[i] = 0xa5 // must be overwritten
		}
		d := make([]float32, n+2)
		dogMask(lo, hi, thr, mask, d)
		for x := range d {
			if d[x] != hi[x]-lo[x] {
				t.Fatalf("n=%d: d[%d] = %v, want %v", n, x, d[x], hi[x]-lo[x])
			}
		}
		for x := 0; x < 8*len(mask); x++ {
			got := mask[x/8]&(1<<(x%8)) != 0
			want := false
			if x < n {
				l, v, r := hi[x]-lo[x], hi[x+1]-lo[x+1], hi[x+2]-lo[x+2]
				want = v > thr && v >= l && v >= r || v < -thr && v <= l && v <= r
			}
			if got != want {
				t.Fatalf("n=%d x=%d: got %v, want %v", n, x, got, want)
			}
		}
	}
}

// TestDogRefine checks the check of candidates against the DoG rows above
// and below, vector and scalar, against its definition, on rows of a few
// levels (ties common) with a NaN now and then and masks of every density.
func TestDogRefine(t *testing.T) { forEachPath(t, testDogRefine) }

func testDogRefine(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var kept, cleared int
	for trial := range 300 {
		nm := 1 + trial%37 // past the vector code's groups of 16 bytes
		n := 8*nm + 2
		rows := make([][]float32, 3)
		for j := range rows {
			rows[j] = make([]float32, n)
			for x := range rows[j] {
				rows[j][x] = float32(rng.IntN(5)-2) / 4
				if rng.IntN(300) == 0 {
					rows[j][x] = float32(math.NaN())
				}
			}
		}
		up, d, dn := rows[0], rows[1], rows[2]
		mask := make([]uint8, nm)
		for i := range mask {
			mask[i] = uint8(rng.Uint32()) & uint8(rng.Uint32()>>8|uint32(trial%2)*0xff)
		}
		want := slices.Clone(mask)
		for x := 0; x < 8*nm; x++ {
			v := d[1+x]
			beats := true
			for _, q := range []float32{up[x], up[x+1], up[x+2], dn[x], dn[x+1], dn[x+2]} {
				if v > 0 && !(v >= q) || !(v > 0) && !(v <= q) {
					beats = false
				}
			}
			if !beats {
				want[x/8] &^= 1 << (x % 8)
			}
		}
		got := slices.Clone(mask)
		dogRefine(up, d, dn, got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: %08b, want %08b (from %08b)", trial, got, want, mask)
		}
		for i := range mask {
			kept += bits.OnesCount8(want[i])
			cleared += bits.OnesCount8(mask[i] &^ want[i])
		}
	}
	if kept < 100 || cleared < 100 {
		t.Errorf("%d kept and %d cleared: the cases are too one-sided", kept, cleared)
	}
}

// TestOrientRows checks the gather of the orientation window, vector and
// scalar, against its definition for window widths around the vector
// width (whole vectors, a repeated last vector, and narrower than one).
func TestOrientRows(t *testing.T) { forEachPath(t, testOrientRows) }

func testOrientRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const w, h = 48, 12
	g := make([]float32, w*h)
	for i := range g {
		g[i] = rng.Float32()
	}
	for m := 1; m <= 40; m++ {
		for rows := 1; rows <= 3; rows++ {
			x0, y0 := 1+m%5, 1+rows
			if x0+m+1 > w {
				x0 = w - m - 1
			}
			wy, wx := make([]float32, rows), make([]float32, m)
			for i := range wy {
				wy[i] = rng.Float32()
			}
			for i := range wx {
				wx[i] = rng.Float32()
			}
			n := rows * m
			dx, dy, wts := make([]float32, n+1), make([]float32, n+1), make([]float32, n+1)
			dx[n], dy[n], wts[n] = -1, -1, -1 // past the window: untouched
			orientRows(g, y0*w+x0, w, m, wy, wx, dx, dy, wts)
			for ty := range rows {
				for x := range m {
					p, o := (y0+ty)*w+x0+x, ty*m+x
					if dx[o] != g[p+1]-g[p-1] || dy[o] != g[p-w]-g[p+w] || wts[o] != wy[ty]*wx[x] {
						t.Fatalf("m=%d rows=%d (%d, %d): %v %v %v", m, rows, x, ty, dx[o], dy[o], wts[o])
					}
				}
			}
			if dx[n] != -1 || dy[n] != -1 || wts[n] != -1 {
				t.Fatalf("m=%d rows=%d: wrote past the window", m, rows)
			}
		}
	}
}

// TestDownsample2 checks the halving that starts each octave, vector and
// scalar, for widths around the vector width and odd sizes.
func TestDownsample2(t *testing.T) { forEachPath(t, testDownsample2) }

func testDownsample2(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for sw := 2; sw <= 42; sw++ {
		sh := 2 + sw%5
		src := make([]float32, sw*sh)
		for i := range src {
			src[i] = rng.Float32()
		}
		dw, dh := sw/2, sh/2
		dst := make([]float32, dw*dh+1)
		dst[dw*dh] = -1
		downsample2(src, sw, sh, dst[:dw*dh], dw, dh)
		for y := range dh {
			for x := range dw {
				if got, want := dst[y*dw+x], src[2*y*sw+2*x]; got != want {
					t.Fatalf("%dx%d (%d, %d): %v, want %v", sw, sh, x, y, got, want)
				}
			}
		}
		if dst[dw*dh] != -1 {
			t.Fatalf("%dx%d: wrote past the destination", sw, sh)
		}
	}
}

func TestSub(t *testing.T) { forEachPath(t, testSub) }

func testSub(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 0; n <= 70; n++ {
		a, b, d := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = rng.Float32(), rng.Float32()
		}
		sub(d, a, b)
		for i := range d {
			if d[i] != b[i]-a[i] {
				t.Fatalf("n=%d i=%d: %v − %v = %v", n, i, b[i], a[i], d[i])
			}
		}
	}
}

// TestExtractVectorMatchesScalar checks that the vector code changes nothing
// but speed: keypoints and descriptors are bit for bit those of the scalar
// code.
func TestExtractVectorMatchesScalar(t *testing.T) {
	if !useAVX {
		t.Skip("no vector code on this platform")
	}
	im := texture(250, 190, 12)
	kv, dv := mustExtractor(t, DefaultOptions()).Extract(im)
	useAVX = false
	defer func() { useAVX = true }()
	ks, ds := mustExtractor(t, DefaultOptions()).Extract(im)
	if len(kv) < 100 {
		t.Fatalf("only %d keypoints", len(kv))
	}
	if !slices.Equal(kv, ks) || !bytes.Equal(dv, ds) {
		t.Errorf("vector and scalar extraction differ: %d and %d keypoints", len(kv), len(ks))
	}
}

// TestDescWeightsMatchesGo checks that the vector descriptor weights are the
// scalar ones bit for bit, for sample counts around the vector width, with
// bins on cell and bin boundaries and angles at the ends of their range
// (an orientation bin of exactly ±8 wraps to 0).
func TestDescWeightsMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no vector code on this platform")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 41; n++ {
		in := descSampleSlices{}
		for _, p := range []*[]float32{&in.mag, &in.wr, &in.wc, &in.ang, &in.rbin, &in.cbin} {
			*p = make([]float32, n)
		}
		ori := float32(rng.IntN(4)) * 90 // 0 and 90 lie on bin boundaries
		for k := 0; k < n; k++ {
			in.mag[k] = rng.Float32()
			in.wr[k], in.wc[k] = rng.Float32(), rng.Float32()
			in.ang[k] = rng.Float32() * 360
			in.rbin[k] = rng.Float32()*4.99 - 0.995
			in.cbin[k] = rng.Float32()*4.99 - 0.995
			switch k % 5 {
			case 1:
				in.ang[k] = 360
			case 2:
				in.ang[k] = 0
			case 3:
				in.rbin[k], in.cbin[k] = float32(rng.IntN(4)), 0
			}
		}
		idxV, idxS := make([]int32, n), make([]int32, n)
		m := (n + 7) &^ 7 * 8
		wV, wS := make([]float32, m), make([]float32, m)
		descWeights(&in, ori, descBins/360.0, idxV, wV)
		descWeightsGo(&in, 0, ori, descBins/360.0, idxS, wS)
		for k := 0; k < n; k++ {
			if idxV[k] != idxS[k] {
				t.Fatalf("n=%d k=%d: index %d, want %d", n, k, idxV[k], idxS[k])
			}
			for j := 0; j < 8; j++ {
				i := 8*(k&^7) + 8*j + k&7
				if math.Float32bits(wV[i]) != math.Float32bits(wS[i]) {
					t.Fatalf("n=%d k=%d corner %d: weight %v, want %v", n, k, j, wV[i], wS[i])
				}
			}
		}
	}
}

// TestScatterMatchesSequential checks that summing runs of samples with the
// same bins (or cells) in registers gives, bit for bit, the histogram of
// adding every sample's weights to memory in order, with runs of every
// length, bins that overlap between neighbouring runs, runs of the same
// cells with changing orientations (bin 7 spilling into bin 8 among them),
// and weights of zero, with each vector code and without.
func TestScatterMatchesSequential(t *testing.T) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	if saved {
		t.Run("cells", func(t *testing.T) { forEachPath(t, testScatter) })
	}
	useAVX2 = false
	forEachPath(t, testScatter)
}

func testScatter(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 500, 2000} {
		idx := make([]int32, n)
		base := int32(histCol + histRow + 1)
		for k := range idx {
			switch c := rng.IntN(6); {
			case k > 0 && c < 2:
				idx[k] = idx[k-1] // a run
			case k > 0 && c < 4:
				// The same cells, another orientation.
				idx[k] = idx[k-1] - idx[k-1]%histRow + int32(rng.IntN(descBins))
			case c < 5:
				// Bins that overlap the previous sample's now and then.
				idx[k] = base + int32(rng.IntN(3))*histRow + int32(rng.IntN(3))
			default:
				// Any cell with a margin, any orientation.
				idx[k] = int32(rng.IntN(descWidth+1)*histCol + rng.IntN(descWidth+1)*histRow + rng.IntN(descBins))
			}
		}
		wts := make([]float32, (n+7)&^7*8)
		for i := range wts {
			wts[i] = rng.Float32() * float32(math.Exp2(float64(rng.IntN(40)-20)))
			if rng.IntN(10) == 0 {
				wts[i] = 0
			}
		}
		want := make([]float32, histLen)
		for k, i := range idx {
			w := wts[8*(k&^7)+k&7:]
			for j, o := range []int32{0, 1, histRow, histRow + 1, histCol, histCol + 1, histCol + histRow, histCol + histRow + 1} {
				want[i+o] += w[8*j]
			}
		}
		got := make([]float32, histLen)
		scatter(got, idx, wts)
		for b := range want {
			if math.Float32bits(got[b]) != math.Float32bits(want[b]) {
				t.Fatalf("n=%d bin %d: %v, want %v", n, b, got[b], want[b])
			}
		}
	}
}

// TestScatterPanicsOutside checks that scatter refuses, rather than write
// outside the histogram or into the next cell, indices past its end,
// negative ones and (on the vector paths, which need it) orientation bins
// of 8 or 9, at any position in a block.
func TestScatterPanicsOutside(t *testing.T) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, cells := range []bool{true, false} {
		useAVX2 = cells && saved
		for _, bad := range []int32{-1, histLen - histCol - histRow - 1, 1 << 20, histCol + histRow + descBins} {
			for _, at := range []int{0, 5, 8, 13} {
				refuse := bad < 0 || int(bad)+histCol+histRow+2 > histLen || useAVX2 && bad%histRow >= descBins
				if !refuse {
					continue // in bounds: scatterGo and scatterAVX add it up
				}
				idx := make([]int32, 16)
				for k := range idx {
					idx[k] = histCol + histRow + 3
				}
				idx[at] = bad
				wts := make([]float32, 16*8)
				func() {
					defer func() {
						if recover() == nil {
							t.Errorf("cells=%v: index %d at %d accepted", useAVX2, bad, at)
						}
					}()
					scatter(make([]float32, histLen), idx, wts)
				}()
			}
		}
	}
}

// TestIsExtremumMatchesGo checks the vector 26-neighbour test against the
// scalar one on planes of a few grey levels (so that ties and plateaus,
// zero DoG values and both signs are common), with a NaN now and then, at
// every sample away from the edges (and two from the right one, which the
// vector code reads past).
func TestIsExtremumMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no vector code on this platform")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	const w, h = 13, 7
	plane := w * h
	g := make([]float32, 5*plane)
	var yes, no int
	for trial := 0; trial < 400; trial++ {
		levels := 2 + trial%4
		for i := range g {
			g[i] = float32(rng.IntN(levels)) / 4
			if rng.IntN(500) == 0 {
				g[i] = float32(math.NaN())
			}
		}
		for layer := 1; layer <= 3; layer++ {
			top := layer == 3 // 5 planes: layer 3 has no layer above
			for y := 1; y < h-1; y++ {
				for x := 1; x < w-2; x++ { // the vector code reads x+2
					p := y*w + x
					want := isExtremumGo(g, plane, w, layer, p, top)
					if got := isExtremum(g, plane, w, layer, p, top); got != want {
						t.Fatalf("trial %d layer %d (%d, %d): %v, want %v", trial, layer, x, y, got, want)
					}
					if want {
						yes++
					} else {
						no++
					}
				}
			}
		}
	}
	if yes < 1000 || no < 1000 {
		t.Errorf("%d extrema and %d others: the cases are too one-sided", yes, no)
	}
}

// TestBlurMatchesDirect checks the blocked, ring-buffered blur against the
// plain separable convolution with reflected borders, bit for bit (the same
// sums in the same order), on sizes that leave partial strips and row
// blocks and kernels wider than the image.
func TestBlurMatchesDirect(t *testing.T) {
	forEachPath(t, testBlurMatchesDirect)
}

func testBlurMatchesDirect(t *testing.T) {
	conv := func(k []float32, at func(i int) float32) float32 {
		acc := k[0] * at(0)
		for i := 1; i < len(k); i++ {
			acc += float32(k[i] * (at(-i) + at(i)))
		}
		return acc
	}
	e := mustExtractor(t, DefaultOptions())
	for _, sz := range [][2]int{{1, 1}, {7, 5}, {130, 37}, {300, 9}, {257, 131}, {70, 38}, {72, 40}} {
		w, h := sz[0], sz[1]
		src := texture(w, h, uint64(w*h)).Pix
		for _, sigma := range []float64{0.8, 3.09} {
			k := gaussianKernel(sigma)
			tmp := make([]float32, w*h)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					tmp[y*w+x] = conv(k, func(i int) float32 { return src[y*w+reflect101(x+i, w)] })
				}
			}
			dst := make([]float32, w*h)
			e.blur(src, dst, w, h, k)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					want := conv(k, func(i int) float32 { return tmp[reflect101(y+i, h)*w+x] })
					if got := dst[y*w+x]; math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("%dx%d σ=%v (%d, %d): %v, want %v", w, h, sigma, x, y, got, want)
					}
				}
			}
		}
	}
}

// TestConvRows checks the 8-column filtering of scattered rows, vector and
// scalar, against convSymGo for every count of rows around the vector
// code's groups of four and kernels of every radius the blurs use.
func TestConvRows(t *testing.T) { forEachPath(t, testConvRows) }

func testConvRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	src := make([]float32, 64*40)
	for i := range src {
		src[i] = rng.Float32()
	}
	for _, sigma := range []float64{0.6, 1.25, 3.09} {
		k := gaussianKernel(sigma)
		r := len(k) - 1
		offs := make([]int, 2*r)
		for i := 1; i <= r; i++ {
			offs[2*i-2], offs[2*i-1] = -i, i
		}
		for n := 0; n <= 9; n++ {
			rows := make([]int, n)
			for i := range rows {
				rows[i] = (i*7%40)*64 + r + rng.IntN(64-8-2*r)
			}
			got := make([]float32, 8*n)
			convRows(got, src, rows, k)
			for i, o := range rows {
				want := make([]float32, 8)
				convSymGo(want, src, o, offs, k)
				if !slices.Equal(got[8*i:8*i+8], want) {
					t.Fatalf("σ=%v rows=%d row %d: %v, want %v", sigma, n, i, got[8*i:8*i+8], want)
				}
			}
		}
	}
}

// TestTopDoGMatchesPlane checks that the octave's last scale computed
// around a sample (topDoG) is the blurred plane's bit for bit, at every
// sample of images narrower and lower than the kernel and wider, so that
// both the vector rows and the reflected edge columns are exercised, and
// that the cached neighbourhood is the one asked for.
func TestTopDoGMatchesPlane(t *testing.T) { forEachPath(t, testTopDoG) }

func testTopDoG(t *testing.T) {
	e := mustExtractor(t, DefaultOptions())
	S := e.opt.ScalesPerOctave
	for _, sz := range [][2]int{{9, 6}, {40, 31}, {130, 37}} {
		w, h := sz[0], sz[1]
		plane := w * h
		g := make([]float32, (S+2)*plane)
		lt := g[(S+1)*plane:]
		copy(lt, texture(w, h, uint64(w+h)).Pix)
		full := make([]float32, plane)
		e.blur(lt, full, w, h, e.kern[S+2])
		e.top.ok = false
		for r := 1; r < h-1; r++ {
			for c := 1; c < w-1; c++ {
				for range 2 { // the second time from the cache
					var d [3][3]float32
					e.topDoG(0, g, w, h, r, c, &d)
					for j := range 3 {
						for i := range 3 {
							q := (r-1+j)*w + c - 1 + i
							if want := full[q] - lt[q]; math.Float32bits(d[j][i]) != math.Float32bits(want) {
								t.Fatalf("%dx%d (%d, %d) [%d][%d]: %v, want %v", w, h, c, r, j, i, d[j][i], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestUpsample2VectorMatchesScalar checks that the vector blends of
// upsample2 are the scalar ones bit for bit, for widths around the vector
// width.
// TestUpRowsMatchesUpsample2 checks that the doubled image made a row at a
// time is upsample2's, bit for bit, with the vector code and without, for
// one and more source rows and widths around the vector width.
func TestUpRowsMatchesUpsample2(t *testing.T) { forEachPath(t, testUpRows) }

func testUpRows(t *testing.T) {
	var u upRows
	for w := 1; w <= 20; w++ {
		for _, h := range []int{1, 2, 3, 6} {
			src := texture(max(w, 16), max(h, 16), uint64(w+h)).Pix[:w*h]
			want := make([]float32, 4*w*h)
			upsample2(src, w, h, want)
			u.start(src, w, h)
			for Y := 0; Y < 2*h; Y++ {
				got := u.row(Y)
				for x := range 2 * w {
					if g, v := got[x], want[Y*2*w+x]; math.Float32bits(g) != math.Float32bits(v) {
						t.Fatalf("%dx%d: row %d, x=%d: %v, want %v", w, h, Y, x, g, v)
					}
				}
			}
		}
	}
}

func TestUpsample2VectorMatchesScalar(t *testing.T) {
	if !useAVX {
		t.Skip("no vector code on this platform")
	}
	defer func() { useAVX = true }()
	for w := 1; w <= 35; w++ {
		for _, h := range []int{1, 2, 5} {
			src := texture(max(w, 16), max(h, 16), uint64(w)).Pix[:w*h]
			var got [2][]float32
			for i, v := range []bool{true, false} {
				useAVX = v
				got[i] = make([]float32, 4*w*h)
				upsample2(src, w, h, got[i])
			}
			for i := range got[0] {
				if math.Float32bits(got[0][i]) != math.Float32bits(got[1][i]) {
					t.Fatalf("%dx%d: sample %d is %v, want %v", w, h, i, got[0][i], got[1][i])
				}
			}
		}
	}
}

// TestGatherRowMatchesGo checks the one-pass gathering of a patch row
// against the Go code bit for bit, for row lengths around the vector
// width, at columns on both sides of the keypoint and rotations of every
// quadrant.
func TestGatherRowMatchesGo(t *testing.T) {
	if !useAVX {
		t.Skip("no vector code on this platform")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for n := 1; n <= 41; n++ {
		left := make([]float32, n+2)
		up, dn, wcSrc := make([]float32, n), make([]float32, n), make([]float32, n)
		for _, s := range [][]float32{left, up, dn, wcSrc} {
			for i := range s {
				s[i] = rng.Float32()
			}
		}
		out := func() *rowSlices {
			r := &rowSlices{left: left, up: up, dn: dn, wcSrc: wcSrc}
			for _, p := range []*[]float32{&r.dx, &r.dy, &r.rbin, &r.cbin, &r.wr, &r.wc} {
				*p = make([]float32, n)
			}
			return r
		}
		th := rng.Float64() * 2 * math.Pi
		hw := 1 + 8*rng.Float32()
		sinT, cosT := float32(math.Sin(th))/hw, float32(math.Cos(th))/hw
		fi := float32(rng.IntN(61) - 30)
		j0 := rng.IntN(61) - 30 - n/2
		g := out()
		gatherRowGo(g, 0, j0, sinT, cosT, fi*cosT, fi*sinT, 0.75)
		// Exact lengths (the tail in Go), then room for whole vectors.
		for _, room := range []bool{false, true} {
			v := out()
			if room {
				for _, p := range []*[]float32{&v.left, &v.up, &v.dn, &v.wcSrc, &v.dx, &v.dy, &v.rbin, &v.cbin, &v.wr, &v.wc} {
					*p = slices.Grow(slices.Clone(*p), 8)
				}
			}
			gatherRow(v, j0, sinT, cosT, fi*cosT, fi*sinT, 0.75)
			for name, p := range map[string][2][]float32{"dx": {v.dx, g.dx}, "dy": {v.dy, g.dy}, "rbin": {v.rbin, g.rbin}, "cbin": {v.cbin, g.cbin}, "wr": {v.wr, g.wr}, "wc": {v.wc, g.wc}} {
				for i := range p[0] {
					if math.Float32bits(p[0][i]) != math.Float32bits(p[1][i]) {
						t.Fatalf("n=%d room=%v %s[%d] = %v, want %v", n, room, name, i, p[0][i], p[1][i])
					}
				}
			}
		}
		// And the Go code is what compute did before, step by step.
		dx, dy, rb, cb := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		sub(dx, left[:n], left[2:])
		sub(dy, dn, up)
		gridCoordsGo(rb, cb, j0, sinT, cosT, fi*cosT, fi*sinT)
		if !slices.Equal(dx, g.dx) || !slices.Equal(dy, g.dy) || !slices.Equal(rb, g.rbin) || !slices.Equal(cb, g.cbin) || !slices.Equal(wcSrc, g.wc) || slices.ContainsFunc(g.wr, func(x float32) bool { return x != 0.75 }) {
			t.Fatalf("n=%d: gatherRowGo differs from the steps it stands for", n)
		}
	}
}
