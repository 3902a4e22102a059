package global

import (
	"errors"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/bowline/bowline/transforms/cpuclock"
)

// grayImage returns a w×h image whose grey level at pixel (x, y) is f(x, y),
// f in [0, 1].
func grayImage(w, h int, f func(x, y float64) float64) *image.Gray {
	im := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := math.Round(255 * math.Min(1, math.Max(0, f(float64(x), float64(y)))))
			im.Pix[y*im.Stride+x] = uint8(v)
		}
	}
	return im
}

// uniform returns a w×h image of colour c.
func uniform(w, h int, c color.RGBA) *image.RGBA {
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(im.Pix); i += 4 {
		im.Pix[i], im.Pix[i+1], im.Pix[i+2], im.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return im
}

// halfPlane returns a w×h image, bright (0.8) on the side of the line through
// the centre towards which the unit normal at phi degrees (counter-clockwise,
// y up) points and dark (0.2) on the other. It is antialiased by taking the
// covered fraction of each pixel as clamp(½ + signed distance, 0, 1). The
// boundary runs at phi − 90°, and the gradient points along phi.
func halfPlane(w, h int, phi float64) *image.Gray {
	s, c := math.Sincos(phi * math.Pi / 180)
	cx, cy := float64(w)/2, float64(h)/2
	return grayImage(w, h, func(x, y float64) float64 {
		d := (x+0.5-cx)*c + (cy-(y+0.5))*s
		return 0.2 + 0.6*math.Min(1, math.Max(0, 0.5+d))
	})
}

// grating returns 0.5 + 0.4 cos(2π f (x cos θ + y_up sin θ)), a sinusoid whose
// wave vector points at theta (radians, counter-clockwise, y up) with f cycles
// per pixel.
func grating(w, h int, f, theta float64) *image.Gray {
	s, c := math.Sincos(theta)
	return grayImage(w, h, func(x, y float64) float64 {
		return 0.5 + 0.4*math.Cos(2*math.Pi*f*(x*c-y*s))
	})
}

// photo returns a deterministic w×h colour image with some of the structure of
// a photograph: a smooth sky-to-ground gradient, overlapping coloured discs
// and rectangles with soft edges, a striped texture patch and mild noise.
func photo(w, h int, seed uint64) *image.RGBA {
	rng := rand.New(rand.NewPCG(seed, 7))
	im := image.NewRGBA(image.Rect(0, 0, w, h))
	type shape struct {
		disc                 bool
		x, y, rx, ry         float64
		r, g, b              float64
		stripes, orient, per float64
	}
	shapes := make([]shape, 24)
	for i := range shapes {
		shapes[i] = shape{
			disc: rng.IntN(2) == 0,
			x:    rng.Float64() * float64(w), y: rng.Float64() * float64(h),
			rx: 10 + rng.Float64()*float64(w)/6, ry: 10 + rng.Float64()*float64(h)/6,
			r: rng.Float64(), g: rng.Float64(), b: rng.Float64(),
			stripes: float64(rng.IntN(3)), orient: rng.Float64() * math.Pi, per: 4 + rng.Float64()*12,
		}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			t := float64(y) / float64(h)
			r, g, b := 0.4+0.3*(1-t), 0.5+0.2*(1-t), 0.9-0.5*t
			for _, s := range shapes {
				dx, dy := (float64(x)-s.x)/s.rx, (float64(y)-s.y)/s.ry
				var d float64
				if s.disc {
					d = math.Hypot(dx, dy)
				} else {
					d = math.Max(math.Abs(dx), math.Abs(dy))
				}
				a := math.Min(1, math.Max(0, (1-d)*8)) // soft edge
				if a == 0 {
					continue
				}
				k := 1.0
				if s.stripes > 0 {
					u := float64(x)*math.Cos(s.orient) + float64(y)*math.Sin(s.orient)
					k = 0.75 + 0.25*math.Sin(2*math.Pi*u/s.per)
				}
				r = (1-a)*r + a*s.r*k
				g = (1-a)*g + a*s.g*k
				b = (1-a)*b + a*s.b*k
			}
			n := 0.03 * rng.NormFloat64()
			i := im.PixOffset(x, y)
			im.Pix[i] = uint8(255 * math.Min(1, math.Max(0, r+n)))
			im.Pix[i+1] = uint8(255 * math.Min(1, math.Max(0, g+n)))
			im.Pix[i+2] = uint8(255 * math.Min(1, math.Max(0, b+n)))
			im.Pix[i+3] = 255
		}
	}
	return im
}

func argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

func sum(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x)
	}
	return s
}

func mustExtract(t testing.TB, e *Extractor, img image.Image) [][]float32 {
	t.Helper()
	v, err := e.Extract(img)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestModalities(t *testing.T) {
	want := []Modality{{"colour", 81}, {"edge", 37}, {"gabor", 120}, {"lbp", 59}, {"gist", 512}}
	got := Modalities()
	if len(got) != len(want) {
		t.Fatalf("%d modalities, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("modality %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	e := NewExtractor()
	v := mustExtract(t, e, photo(64, 48, 1))
	for i, m := range want {
		if len(v[i]) != m.Dim {
			t.Errorf("%s: len %d, want %d", m.Name, len(v[i]), m.Dim)
		}
	}
}

func TestFitSide(t *testing.T) {
	for _, c := range []struct{ W, H, w, h int }{
		{640, 480, 500, 375},
		{480, 640, 375, 500},
		{500, 500, 500, 500},
		{1, 1, 500, 500},
		{3, 2, 500, 333},
		{2000, 3, 500, 1},
		{10000, 10, 500, 1}, // 0.5 rounds up
		{100000, 1, 500, 1},
		{1, 3000, 1, 500},
	} {
		if w, h := fitSide(c.W, c.H, Side); w != c.w || h != c.h {
			t.Errorf("fitSide(%d, %d) = %d×%d, want %d×%d", c.W, c.H, w, h, c.w, c.h)
		}
	}
}

func TestUniformImage(t *testing.T) {
	for _, c := range []struct {
		name  string
		w, h  int
		col   color.RGBA
		bin   int        // colour histogram bin, 9h + 3s + v
		h_s_v [3]float64 // H/360, S, V
	}{
		// (200, 30, 30): H = 0°, S = 170/200 = 0.85, V = 200/255 ≈ 0.78: bins 0, 2, 2.
		{"red", 500, 375, color.RGBA{200, 30, 30, 255}, 8, [3]float64{0, 0.85, 200.0 / 255}},
		// (30, 200, 60): H = 60·(30/170 + 2) ≈ 130.6°, S = 0.85, V ≈ 0.78: bins 3, 2, 2.
		{"green", 37, 23, color.RGBA{30, 200, 60, 255}, 35, [3]float64{(60 * (30.0/170 + 2)) / 360, 0.85, 200.0 / 255}},
		// grey 128: H = S = 0, V ≈ 0.50: bins 0, 0, 1.
		{"grey", 1, 1, color.RGBA{128, 128, 128, 255}, 1, [3]float64{0, 0, 128.0 / 255}},
		// (40, 60, 120): H = 60·((40−60)/80 + 4) = 225°, S = 2/3, V ≈ 0.47: bins 5, 1, 1.
		{"blue", 700, 3, color.RGBA{40, 60, 120, 255}, 49, [3]float64{225.0 / 360, 80.0 / 120, 120.0 / 255}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := mustExtract(t, NewExtractor(), uniform(c.w, c.h, c.col))
			col, edge, gabor, lbp, gist := v[0], v[1], v[2], v[3], v[4]
			for i := 0; i < colourBins; i++ {
				want := float32(0)
				if i == c.bin {
					want = 1
				}
				if col[i] != want {
					t.Errorf("colour bin %d = %v, want %v", i, col[i], want)
				}
			}
			for ch := 0; ch < 3; ch++ {
				mu, sd, sk := col[colourBins+3*ch], col[colourBins+3*ch+1], col[colourBins+3*ch+2]
				if math.Abs(float64(mu)-c.h_s_v[ch]) > 1e-5 || math.Abs(float64(sd)) > 1e-5 || math.Abs(float64(sk)) > 1e-5 {
					t.Errorf("channel %d moments = %v %v %v, want %v 0 0", ch, mu, sd, sk, c.h_s_v[ch])
				}
			}
			for i, x := range edge[:edgeDirs] {
				if x != 0 {
					t.Errorf("edge bin %d = %v, want 0", i, x)
				}
			}
			if edge[edgeDirs] != 1 {
				t.Errorf("non-edge bin = %v, want 1", edge[edgeDirs])
			}
			for i, x := range gabor {
				if math.Abs(float64(x)) > 1e-6 {
					t.Errorf("gabor[%d] = %v, want ≈ 0", i, x)
				}
			}
			for i, x := range lbp {
				want := float32(0)
				if i == 57 { // code 255
					want = 1
				}
				if x != want {
					t.Errorf("lbp bin %d = %v, want %v", i, x, want)
				}
			}
			for i, x := range gist {
				if x != 0 {
					t.Errorf("gist[%d] = %v, want 0", i, x)
				}
			}
		})
	}
}

func TestEdgeHalfPlane(t *testing.T) {
	// phi is the gradient direction; the boundary runs at phi − 90°.
	for _, phi := range []float64{120, 0, 45, 75, 160, 300} {
		peak := func(phi float64) int {
			v, err := NewExtractor().Edge(halfPlane(500, 400, phi), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := int(math.Round(phi/10)) % edgeDirs
			k := argmax(v[:edgeDirs])
			if k != want {
				t.Errorf("phi %v°: peak in bin %d, want %d; hist %v", phi, k, want, v[:edgeDirs])
			}
			near := v[want] + v[(want+1)%edgeDirs] + v[(want+edgeDirs-1)%edgeDirs]
			if near < 0.9 {
				t.Errorf("phi %v°: %.3f of the edge mass within one bin of %d, want ≥ 0.9", phi, near, want)
			}
			if math.Abs(sum(v[:edgeDirs])-1) > 1e-5 {
				t.Errorf("phi %v°: direction bins sum to %v", phi, sum(v[:edgeDirs]))
			}
			// One line of edge pixels across the image: few, but some.
			if ne := v[edgeDirs]; ne < 0.99 || ne == 1 {
				t.Errorf("phi %v°: non-edge fraction %v", phi, ne)
			}
			return k
		}
		k0, k1 := peak(phi), peak(phi+90)
		if (k1-k0+edgeDirs)%edgeDirs != 9 {
			t.Errorf("rotating by 90° moved the peak from bin %d to %d, want +9", k0, k1)
		}
	}
}

func TestGaborGrating(t *testing.T) {
	a := math.Pow(gaborUh/gaborUl, 1.0/(gaborScales-1))
	for _, c := range []struct{ s, o int }{{2, 0}, {2, 3}, {3, 6}, {1, 5}, {4, 2}} {
		f := gaborUl * math.Pow(a, float64(c.s))
		th := math.Pi * float64(c.o) / gaborOrients
		v, err := NewExtractor().Gabor(grating(500, 375, f, th), nil)
		if err != nil {
			t.Fatal(err)
		}
		means := make([]float32, gaborScales*gaborOrients)
		for i := range means {
			means[i] = v[i*gaborStats]
		}
		best := argmax(means)
		if s, o := best/gaborOrients, best%gaborOrients; s != c.s || o != c.o {
			t.Errorf("grating at scale %d, orientation %d: largest mean response at scale %d, orientation %d", c.s, c.o, s, o)
		}
		// A sinusoid of amplitude 0.4 at the filter's centre: |r| ≈ 0.2 away
		// from the borders (where the mirrored grating changes phase), so the
		// mean is about 0.2 and the deviation small.
		mu, sd := v[best*gaborStats], v[best*gaborStats+1]
		if math.Abs(float64(mu)-0.2) > 0.02 || sd > 0.15*mu {
			t.Errorf("scale %d, orientation %d: mean %v, std %v, want ≈ 0.2 and ≈ 0", c.s, c.o, mu, sd)
		}
	}
}

// TestGaborFolding checks the decimated responses against the full-resolution
// ones: folding the spectrum must give r exactly on the coarse grid.
func TestGaborFolding(t *testing.T) {
	for s, want := range []int{16, 8, 8, 4, 2} { // as Gabor's doc says
		if d := gaborBank[s*gaborOrients].d; d != want {
			t.Errorf("scale %d: decimation %d, want %d", s, d, want)
		}
	}
	e := NewExtractor()
	if err := e.prepare(photo(131, 97, 3)); err != nil {
		t.Fatal(err)
	}
	nx, ny := gaborSize(e.w), gaborSize(e.h)
	e.gabor(make([]float32, GaborDim)) // fills e.spec
	for _, fi := range []int{0, 9, 20, 31, 39} {
		g := &gaborBank[fi]
		full := append([]float32(nil), e.gaborMags(g, 1, nx, ny)...)
		coarse := e.gaborMags(g, g.d, nx, ny)
		gw := (e.w + g.d - 1) / g.d
		k := 0
		for y := 0; y < e.h; y += g.d {
			for x := 0; x < e.w; x += g.d {
				if d := math.Abs(float64(coarse[k] - full[y*e.w+x])); d > 1e-6 {
					t.Fatalf("filter %d (d = %d): |r| at (%d, %d) = %v folded, %v full", fi, g.d, x, y, coarse[k], full[y*e.w+x])
				}
				k++
			}
		}
		if k != len(coarse) || len(coarse)%gw != 0 {
			t.Fatalf("filter %d: %d coarse samples, visited %d", fi, len(coarse), k)
		}
	}
}

func TestGISTGrating(t *testing.T) {
	// The 500×500 image becomes 256×256: f500 = 0.512 f256. Scale 1 of the
	// bank is tuned to 0.3/1.85 cycles per pixel of the 256 image.
	f := 0.512 * 0.3 / 1.85
	for _, j := range []int{0, 2, 5, 7} {
		v, err := NewExtractor().GIST(grating(500, 500, f, math.Pi*float64(j)/gistOrients), nil)
		if err != nil {
			t.Fatal(err)
		}
		var energy [gistOrients]float32
		var byScale [gistScales]float32
		for i := 0; i < gistFilters; i++ {
			s := float32(sum(v[i*16 : i*16+16]))
			energy[i%gistOrients] += s
			byScale[i/gistOrients] += s
		}
		if k := argmax(energy[:]); k != j {
			t.Errorf("grating at orientation %d: GIST energy peaks at %d (%v)", j, k, energy)
		}
		if k := argmax(byScale[:]); k != 1 {
			t.Errorf("grating at orientation %d: GIST energy peaks at scale %d (%v), want 1", j, k, byScale)
		}
		// A uniform grating fills every block alike.
		i := gistOrients + j
		blocks := v[i*16 : i*16+16]
		lo, hi := blocks[0], blocks[0]
		for _, x := range blocks {
			lo, hi = min(lo, x), max(hi, x)
		}
		if hi-lo > 0.1*hi {
			t.Errorf("orientation %d: blocks of the peak filter range over [%v, %v]", j, lo, hi)
		}
	}
}

func TestLBPCode(t *testing.T) {
	// Diagonal samples are interpolated: with t = 1/√2 the weights are
	// 0.0858 (centre), 0.2071 (each of the two pixels beside) and 0.5 (corner).
	for _, c := range []struct {
		name string
		n    [9]float32 // row-major, y down
		code uint8
		bin  uint8
	}{
		{"flat", [9]float32{.5, .5, .5, .5, .5, .5, .5, .5, .5}, 255, 57},
		{"dark", [9]float32{.1, .1, .1, .1, .5, .1, .1, .1, .1}, 0, 0},
		// E = W = 0.9 and N = S = 0.1 against centre 0.5 give bits 0 and 4.
		// NE = 0.0429 + 0.2071(0.9 + 0.1) + 0.5·0.1 = 0.300 → 0, NW = 0.700 → 1,
		// SW = 0.300 → 0, SE = 0.700 → 1. Bits 0, 3, 4, 7: 1 + 8 + 16 + 128 = 153,
		// 10011001 has four transitions: not uniform.
		{"saddle", [9]float32{.9, .1, .1, .9, .5, .9, .1, .1, .9}, 153, 58},
		// N = E = 0.3 (bits 2, 0 clear), W = S = 0.5 (ties, bits 4, 6 set). The NE
		// corner is brighter than the centre but its sample is not:
		// 0.0429 + 0.2071·0.6 + 0.5·0.62 = 0.477 → 0. NW = SE = 0.459 → 0.
		// SW = 0.0858·0.5 + 0.2071·1.0 + 0.5·0.5 = 0.5 exactly in exact arithmetic:
		// a tie → 1. Bits 4, 5, 6: 112, uniform; 24 uniform codes are smaller
		// (0 and the runs of 1s within bits 0–6 below 112).
		{"interpolated", [9]float32{.5, .3, .62, .5, .5, .3, .5, .5, .5}, 112, 24},
	} {
		code := lbpCode(&c.n)
		if code != c.code {
			t.Errorf("%s: code %d (%08b), want %d (%08b)", c.name, code, code, c.code, c.code)
		}
		if b := lbpUniform[code]; b != c.bin {
			t.Errorf("%s: bin %d, want %d", c.name, b, c.bin)
		}
	}
	uniformCodes := 0
	for _, b := range lbpUniform {
		if b != LBPDim-1 {
			uniformCodes++
		}
	}
	if uniformCodes != 58 {
		t.Errorf("%d uniform codes, want 58", uniformCodes)
	}
}

func TestLBPHistogram(t *testing.T) {
	for _, im := range []image.Image{photo(320, 240, 5), grating(200, 300, 0.1, 1), halfPlane(10, 2, 30)} {
		v, err := NewExtractor().LBP(im, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s := sum(v); math.Abs(s-1) > 1e-5 {
			t.Errorf("%v: histogram sums to %v", im.Bounds(), s)
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, b := photo(200, 150, 11), photo(150, 200, 12)
	e := NewExtractor()
	va := mustExtract(t, e, a)
	mustExtract(t, e, b) // buffers now sized and filled for another image
	va2 := mustExtract(t, e, a)
	va3 := mustExtract(t, NewExtractor(), a)
	for m := range va {
		for i := range va[m] {
			if math.Float32bits(va[m][i]) != math.Float32bits(va2[m][i]) || math.Float32bits(va[m][i]) != math.Float32bits(va3[m][i]) {
				t.Fatalf("modality %d entry %d: %v, %v after another image, %v fresh", m, i, va[m][i], va2[m][i], va3[m][i])
			}
		}
	}
	// The per-modality methods give what Extract gives.
	dst := make([]float32, 0, 600)
	for m, f := range []func(image.Image, []float32) ([]float32, error){e.Colour, e.Edge, e.Gabor, e.LBP, e.GIST} {
		v, err := f(a, dst)
		if err != nil {
			t.Fatal(err)
		}
		if &v[0] != &dst[:1][0] {
			t.Errorf("modality %d did not reuse dst", m)
		}
		for i := range v {
			if v[i] != va[m][i] {
				t.Fatalf("modality %d entry %d: %v from its method, %v from Extract", m, i, v[i], va[m][i])
			}
		}
	}
}

func TestTinyAndElongated(t *testing.T) {
	e := NewExtractor()
	for _, sz := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {7, 1}, {2000, 3}, {3, 2000}, {5000, 2}} {
		v := mustExtract(t, e, photo(sz[0], sz[1], uint64(sz[0]*7+sz[1])))
		for m, mod := range Modalities() {
			if len(v[m]) != mod.Dim {
				t.Errorf("%v %s: len %d", sz, mod.Name, len(v[m]))
			}
			for i, x := range v[m] {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Errorf("%v %s[%d] = %v", sz, mod.Name, i, x)
				}
			}
		}
		if s := sum(v[0][:colourBins]); math.Abs(s-1) > 1e-5 {
			t.Errorf("%v: colour histogram sums to %v", sz, s)
		}
		if s := sum(v[3]); math.Abs(s-1) > 1e-5 {
			t.Errorf("%v: LBP histogram sums to %v", sz, s)
		}
		if d := sum(v[1][:edgeDirs]); d != 0 && math.Abs(d-1) > 1e-5 {
			t.Errorf("%v: edge directions sum to %v", sz, d)
		}
	}
}

func TestErrors(t *testing.T) {
	e := NewExtractor()
	if _, err := e.Extract(image.NewRGBA(image.Rect(0, 0, 0, 5))); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty image: err = %v, want ErrEmpty", err)
	}
	if _, err := e.GIST(nil, nil); err == nil {
		t.Error("nil image: no error")
	}
	// A sub-image with an offset origin is read from its bounds.
	big := photo(300, 200, 9)
	sub := big.SubImage(image.Rect(50, 40, 250, 190))
	v1 := mustExtract(t, e, sub)
	cp := image.NewRGBA(image.Rect(0, 0, 200, 150))
	for y := 0; y < 150; y++ {
		copy(cp.Pix[y*cp.Stride:y*cp.Stride+800], big.Pix[big.PixOffset(50, 40+y):])
	}
	v2 := mustExtract(t, e, cp)
	for m := range v1 {
		for i := range v1[m] {
			if v1[m][i] != v2[m][i] {
				t.Fatalf("modality %d entry %d: sub-image %v, copy %v", m, i, v1[m][i], v2[m][i])
			}
		}
	}
}

// BenchmarkExtract times all five modalities of a 640×480 photo-like image,
// resizing included, and reports wall-clock and CPU (this thread's) ms per
// image; GC work on other threads is in neither.
func BenchmarkExtract(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	im := photo(640, 480, 42)
	e := NewExtractor()
	mustExtract(b, e, im) // size the buffers, build the GIST bank
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, ok := cpuclock.Thread()
	for b.Loop() {
		if _, err := e.Extract(im); err != nil {
			b.Fatal(err)
		}
	}
	cpu1, _ := cpuclock.Thread()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/image")
	if ok {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/image")
	}
}

// BenchmarkModality times each modality alone, resizing included, in CPU ms
// per image as BenchmarkExtract.
func BenchmarkModality(b *testing.B) {
	im := photo(640, 480, 42)
	e := NewExtractor()
	mustExtract(b, e, im)
	dst := make([]float32, 0, GISTDim)
	for i, f := range []func(image.Image, []float32) ([]float32, error){e.Colour, e.Edge, e.Gabor, e.LBP, e.GIST} {
		b.Run(Modalities()[i].Name, func(b *testing.B) {
			runtime.LockOSThread() // each b.Run is a goroutine of its own
			defer runtime.UnlockOSThread()
			cpu0, ok := cpuclock.Thread()
			for b.Loop() {
				if _, err := f(im, dst); err != nil {
					b.Fatal(err)
				}
			}
			cpu1, _ := cpuclock.Thread()
			if ok {
				b.ReportMetric(float64((cpu1-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/image")
			}
		})
	}
}
