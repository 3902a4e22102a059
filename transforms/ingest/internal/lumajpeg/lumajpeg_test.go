package lumajpeg

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// inputs are JPEGs of every sampling and coding this package must decode:
// its own testdata (libjpeg-turbo's, 203×141 so that MCUs are partial,
// with restart intervals, baseline and progressive, colour and grey) and
// image/jpeg's test images in GOROOT (4:4:4, 4:2:2, 4:4:0, 4:1:1, 4:1:0,
// restarts, separate DC progressions), when present.
func inputs(t testing.TB) map[string][]byte {
	t.Helper()
	paths, _ := filepath.Glob("testdata/*.jpg")
	var goroot []string
	if root, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot, _ = filepath.Glob(filepath.Join(strings.TrimSpace(string(root)), "src", "image", "testdata", "video-00*.jpeg"))
	}
	if len(goroot) == 0 {
		t.Log("GOROOT's image testdata is absent: its samplings are not tested")
	}
	out := map[string][]byte{}
	for _, p := range append(paths, goroot...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	if len(paths) < 3 {
		t.Fatalf("testdata: %d JPEGs", len(paths))
	}
	return out
}

// stdLuma decodes data with image/jpeg and returns its luma plane, or nil
// for an image whose component 0 is not luma.
func stdLuma(t testing.TB, data []byte) (*image.Gray, error) {
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	switch m := img.(type) {
	case *image.Gray:
		return m, nil
	case *image.YCbCr:
		b := m.Bounds()
		g := image.NewGray(b)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			copy(g.Pix[(y-b.Min.Y)*g.Stride:], m.Y[m.YOffset(b.Min.X, y):m.YOffset(b.Max.X-1, y)+1])
		}
		return g, nil
	}
	return nil, nil
}

// TestFullScale: at scale 1 the luma is image/jpeg's, byte for byte; a
// JPEG whose component 0 is not luma is ErrNotLuma; a broken one fails
// with image/jpeg's error.
func TestFullScale(t *testing.T) {
	for name, data := range inputs(t) {
		want, stdErr := stdLuma(t, data)
		got, err := Decode(bytes.NewReader(data), 0, Reduced)
		switch {
		case stdErr != nil:
			if err == nil || err.Error() != stdErr.Error() {
				t.Errorf("%s: error %v, image/jpeg's %v", name, err, stdErr)
			}
		case want == nil:
			if !errors.Is(err, ErrNotLuma) {
				t.Errorf("%s: not luma, but got %v", name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case got.Bounds() != want.Bounds():
			t.Errorf("%s: bounds %v, want %v", name, got.Bounds(), want.Bounds())
		default:
			b := want.Bounds()
			for y := b.Min.Y; y < b.Max.Y; y++ {
				if g, w := got.Pix[got.PixOffset(0, y):][:b.Dx()], want.Pix[want.PixOffset(0, y):][:b.Dx()]; !bytes.Equal(g, w) {
					t.Errorf("%s: row %d differs from image/jpeg's luma", name, y)
					break
				}
			}
		}
	}
}

// area returns the mean of each s×s cell of g (cells cut by the edge
// average the pixels they hold): the exact area downscale.
func area(g *image.Gray, s int) *image.Gray {
	b := g.Bounds()
	w, h := (b.Dx()+s-1)/s, (b.Dy()+s-1)/s
	out := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			sum, n := 0, 0
			for yy := y * s; yy < min(y*s+s, b.Dy()); yy++ {
				for xx := x * s; xx < min(x*s+s, b.Dx()); xx++ {
					sum += int(g.Pix[g.PixOffset(b.Min.X+xx, b.Min.Y+yy)])
					n++
				}
			}
			out.Pix[y*out.Stride+x] = uint8((sum + n/2) / n)
		}
	}
	return out
}

// Tolerances of the scaled decodes against the area downscale of the full
// decode, in grey levels (of 255), by filter and shift: the mean absolute
// difference, and the largest. At 1/8 the DC coefficient is the block's
// mean before the full IDCT's rounding and clipping. At 1/2 and 1/4 Box
// drops the frequencies above the new grid's, which the area mean only
// damps, and Reduced and Sharpen keep more of those it holds, so the
// difference is a fraction of the local contrast, largest at sharp edges.
// Measured (go test -run Scaled -v): the worst are image/jpeg's video-001
// files (a 150×103 video frame at quality 50, all edges).
var tolerance = [nFilters]map[int]struct{ mean, max float64 }{
	Reduced: {1: {3.5, 72}, 2: {3.5, 48}, 3: {0.8, 22}},
	Box:     {1: {3.0, 55}, 2: {2.5, 40}, 3: {0.8, 22}},
	Sharpen: {1: {4.5, 95}, 2: {5.2, 55}, 3: {0.8, 22}},
}

// TestScaled: each scaled decode is the size libjpeg's is, and close to
// the area downscale of the full decode.
func TestScaled(t *testing.T) {
	for name, data := range inputs(t) {
		full, err := Decode(bytes.NewReader(data), 0, Reduced)
		if err != nil {
			continue // TestFullScale covers errors
		}
		for f := range nFilters {
			for shift := 1; shift <= MaxShift; shift++ {
				got, err := Decode(bytes.NewReader(data), shift, f)
				if err != nil {
					t.Errorf("%s 1/%d: %v", name, 1<<shift, err)
					continue
				}
				want := area(full, 1<<shift)
				if got.Bounds() != want.Bounds() {
					t.Errorf("%s 1/%d: bounds %v, want %v", name, 1<<shift, got.Bounds(), want.Bounds())
					continue
				}
				mean, worst := difference(got, want)
				t.Logf("%s filter %d 1/%d: mean |Δ| %.3f, max %.0f", name, f, 1<<shift, mean, worst)
				if tol := tolerance[f][shift]; mean > tol.mean || worst > tol.max {
					t.Errorf("%s filter %d 1/%d: mean |Δ| %.3f, max %.0f against the area downscale; tolerance %.1f, %.0f",
						name, f, 1<<shift, mean, worst, tol.mean, tol.max)
				}
			}
		}
	}
}

// difference is the mean and the largest absolute difference of a and b,
// of the same bounds, in grey levels.
func difference(a, b *image.Gray) (mean, worst float64) {
	r := a.Bounds()
	var sum float64
	for y := range r.Dy() {
		for x := range r.Dx() {
			d := math.Abs(float64(a.Pix[a.PixOffset(r.Min.X+x, r.Min.Y+y)]) - float64(b.Pix[b.PixOffset(b.Bounds().Min.X+x, b.Bounds().Min.Y+y)]))
			sum += d
			worst = max(worst, d)
		}
	}
	return sum / float64(r.Dx()*r.Dy()), worst
}

// FuzzAgree: on any input image/jpeg decodes, Decode at scale 1 returns
// image/jpeg's luma byte for byte, and never panics on any input. On a
// progressive JPEG it may decode what image/jpeg refuses (it does not read
// scans of chroma alone), and it ends an end-of-band run at its scan's end
// as libjpeg does, so there only the sequential JPEGs are compared. Run it
// with
//
//	go test -run '^$' -fuzz FuzzAgree -fuzztime 2m ./transforms/ingest/internal/lumajpeg/
func FuzzAgree(f *testing.F) {
	for _, data := range inputs(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if cfg, err := jpeg.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width*cfg.Height > 1<<18 {
			return
		}
		got, err := Decode(bytes.NewReader(data), 0, Reduced)
		for shift := 1; shift <= MaxShift; shift++ {
			for f := range nFilters {
				Decode(bytes.NewReader(data), shift, f)
			}
		}
		want, stdErr := stdLuma(t, data)
		if stdErr != nil || want == nil || progressive(data) {
			return
		}
		if err != nil {
			t.Fatalf("error %v; image/jpeg decodes it", err)
		}
		if got.Bounds() != want.Bounds() {
			t.Fatalf("bounds %v, image/jpeg's %v", got.Bounds(), want.Bounds())
		}
		b := want.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			if !bytes.Equal(got.Pix[got.PixOffset(0, y):][:b.Dx()], want.Pix[want.PixOffset(0, y):][:b.Dx()]) {
				t.Fatalf("row %d differs from image/jpeg's luma", y)
			}
		}
	})
}

// progressive reports whether data has a progressive frame header (SOF2)
// among the markers before its first scan.
func progressive(data []byte) bool {
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xff {
			return false
		}
		m := data[i+1]
		if m == 0xc2 {
			return true
		}
		if m == 0xda {
			return false
		}
		i += 2 + int(data[i+2])<<8 + int(data[i+3])
	}
	return false
}

// TestStoreBlock: storeBlock writes what idct and clip make of a block,
// for blocks with a DC coefficient alone, with AC coefficients in row 0
// alone and in random rows, over the int32 range where idct overflows too.
func TestStoreBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := decoder{gray: image.NewGray(image.Rect(0, 0, 8, 8))}
	for it := range 200000 {
		var b block
		bound := int64(1) << (4 + it%28)
		coef := func() int32 { return int32(rng.Int64N(2*bound) - bound) }
		b[0] = coef()
		var rows uint8
		if it%3 != 0 {
			nAC := 1 + rng.IntN(6)
			onlyRow0 := it%3 == 1
			for range nAC {
				zig := 1 + rng.IntN(blockSize-1)
				if onlyRow0 {
					zig = []int{1, 5, 6, 14, 15, 27, 28}[rng.IntN(7)]
				}
				b[unzig[zig]] = coef()
				rows |= zigRow[zig]
			}
		}
		want := b
		idct(&want)
		got := b
		d.storeBlock(&got, 0, 0, rows)
		for i, c := range want {
			if d.gray.Pix[i] != clip(c) {
				t.Fatalf("block %v (rows %08b): pixel %d is %d, idct's %d", b, rows, i, d.gray.Pix[i], clip(c))
			}
		}
	}
}

// TestLevel: level is clip.
func TestLevel(t *testing.T) {
	for c := int32(-1 << 16); c < 1<<16; c++ {
		if level(c) != clip(c) {
			t.Fatalf("level(%d) = %d, clip %d", c, level(c), clip(c))
		}
	}
}

// clip level-shifts a sample by 128 and clips it to a byte: the reference
// level is tested against.
func clip(c int32) byte {
	switch {
	case c < -128:
		return 0
	case c > 127:
		return 255
	}
	return byte(c + 128)
}

// idctScaledRef is the n×n scaled IDCT of scaled.go's comment in float64:
// p(i, j) = Σ_u Σ_v t(i, u)·t(j, v)·F(u, v), F the coefficients of b
// (which carry gainFrac fraction bits), rounded half up, level-shifted and
// clipped.
func idctScaledRef(b *block, n int) []byte {
	t := func(i, u int) float64 {
		c := 1.0
		if u == 0 {
			c = 1 / math.Sqrt2
		}
		return 0.5 * c * math.Cos(float64((2*i+1)*u)*math.Pi/float64(2*n))
	}
	out := make([]byte, n*n)
	for j := range n {
		for i := range n {
			var s float64
			for v := range n {
				for u := range n {
					s += t(i, u) * t(j, v) * float64(b[8*v+u]) / (1 << gainFrac)
				}
			}
			// s is a multiple of 2^−(3+gainFrac) at n ≤ 2: round off the
			// cosines' error first, so that a half rounds up.
			s = math.Round(s*1e6) / 1e6
			out[j*n+i] = clip(int32(math.Floor(s + 0.5)))
		}
	}
	return out
}

// TestIDCTScaled: the integer scaled IDCTs are the exact transform at 1/8
// and 1/4 (n = 2, whose constants are ±1/(2√2)), within one grey level at
// 1/2 (n = 4),
// on random blocks of dequantised coefficients (with gainFrac fraction
// bits) twice as large as 8-bit JPEGs make (2^11 with 2^gainFrac); and a block with a DC coefficient
// alone gives its mean at every scale, whether storeBlock's rows say so or
// not.
func TestIDCTScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const stride = 11
	for it := range 100000 {
		n := []int{1, 2, 4}[it%3]
		var b block
		bound := int64(1) << (4 + it%(9+gainFrac))
		coef := func() int32 { return int32(rng.Int64N(2*bound) - bound) }
		// A DC coefficient's gain is 1: it is a multiple of 2^gainFrac.
		b[0] = coef() &^ (1<<gainFrac - 1)
		dcOnly := it%5 == 0
		if !dcOnly {
			for range 1 + rng.IntN(16) {
				b[8*rng.IntN(n)+rng.IntN(n)] = coef()
			}
			// Coefficients outside the n×n corner are not read.
			b[8*rng.IntN(8)+4+rng.IntN(4)] = coef()
		}
		dst := make([]byte, 4*stride)
		idctScaled(&b, n, dst, stride, 0xff)
		want := idctScaledRef(&b, n)
		tol := 0
		if n == 4 && !dcOnly {
			tol = 1
		}
		for j := range n {
			for i := range n {
				got, w := int(dst[j*stride+i]), int(want[j*n+i])
				if got-w > tol || w-got > tol {
					t.Fatalf("1/%d block %v: pixel (%d, %d) %d, exact %d", 8/n, b, i, j, got, w)
				}
			}
		}
		if dcOnly {
			dc := make([]byte, 4*stride)
			idctScaled(&b, n, dc, stride, 0)
			if !bytes.Equal(dc, dst) {
				t.Fatalf("1/%d DC %d: %v with rows 0, %v without", 8/n, b[0], dc, dst)
			}
		}
	}
}

// TestIDCTAVX2: idctStore writes idctStoreGo's pixels, and idctScaled4
// idctScaled4Go's, on random blocks of every magnitude (int32 overflow
// included) and sparsity, at a stride wider than the block.
func TestIDCTAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: idctStore is idctStoreGo, idctScaled4 idctScaled4Go")
	}
	for _, tc := range []struct {
		name        string
		n           int // the rows of output
		asm, goIDCT func(b *block, dst []byte, stride int)
	}{
		{"idctStore", 8, func(b *block, dst []byte, stride int) { idctStore(b, dst, stride, false) }, idctStoreGo},
		{"idctStore transposed", 8, func(b *block, dst []byte, stride int) { idctStore(b, dst, stride, true) }, func(b *block, dst []byte, stride int) {
			transpose(b)
			idctStoreGo(b, dst, stride)
		}},
		{"idctScaled4", 4, idctScaled4, idctScaled4Go},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		const stride = 13
		for it := range 200000 {
			var b block
			bound := int64(1) << (4 + it%28)
			for range 1 + rng.IntN(64) {
				b[rng.IntN(blockSize)] = int32(rng.Int64N(2*bound) - bound)
			}
			want, got := make([]byte, tc.n*stride), make([]byte, tc.n*stride)
			for i := range want {
				want[i] = byte(i)
				got[i] = byte(i)
			}
			bw, bg := b, b
			tc.goIDCT(&bw, want, stride)
			tc.asm(&bg, got, stride)
			if !bytes.Equal(got, want) {
				t.Fatalf("block %v:\n%s   %v\n%sGo %v", b, tc.name, got, tc.name, want)
			}
		}
	}
}

// TestRecycle: a decode into a recycled buffer, whatever the buffer held,
// gives image/jpeg's luma, also for a JPEG none of whose scans holds luma
// (its luma is zero, as image/jpeg's); and a decode whose image is
// recycled allocates far less than the image.
func TestRecycle(t *testing.T) {
	in := inputs(t)
	noLuma := withoutLumaScans(t, in["420-progressive-restart.jpg"])
	in["no-luma-scan.jpg"] = noLuma
	if want, err := stdLuma(t, noLuma); err != nil || want == nil {
		t.Fatalf("no-luma-scan.jpg: image/jpeg: %v", err)
	}
	for name, data := range in {
		want, err := stdLuma(t, data)
		if err != nil || want == nil {
			continue
		}
		for shift := 0; shift <= MaxShift; shift++ {
			// A buffer of garbage, as large as any image here.
			junk := make([]byte, 1<<20)
			for i := range junk {
				junk[i] = byte(i*7 + 3)
			}
			Recycle(&image.Gray{Pix: junk})
			got, err := Decode(bytes.NewReader(data), shift, Sharpen)
			if err != nil {
				t.Fatalf("%s at 1/%d: %v", name, 1<<shift, err)
			}
			ref := want
			if shift > 0 {
				if ref, err = Decode(bytes.NewReader(data), shift, Sharpen); err != nil {
					t.Fatal(err)
				}
				fresh := *ref
				fresh.Pix = append([]byte(nil), ref.Pix...)
				ref = &fresh
				if name == "no-luma-scan.jpg" {
					clear(ref.Pix)
				}
			}
			b := ref.Bounds()
			if got.Bounds() != b {
				t.Fatalf("%s at 1/%d: bounds %v, want %v", name, 1<<shift, got.Bounds(), b)
			}
			for y := b.Min.Y; y < b.Max.Y; y++ {
				if !bytes.Equal(got.Pix[got.PixOffset(0, y):][:b.Dx()], ref.Pix[ref.PixOffset(0, y):][:b.Dx()]) {
					t.Fatalf("%s at 1/%d: row %d differs from a decode into a new buffer", name, 1<<shift, y)
				}
			}
			Recycle(got)
		}
	}

	data := in["420-restart.jpg"]
	g, err := Decode(bytes.NewReader(data), 0, Reduced)
	if err != nil {
		t.Fatal(err)
	}
	size := len(g.Pix)
	var m0, m1 runtime.MemStats
	const n = 20
	runtime.ReadMemStats(&m0)
	for range n {
		Recycle(g)
		if g, err = Decode(bytes.NewReader(data), 0, Reduced); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&m1)
	if per := (m1.TotalAlloc - m0.TotalAlloc) / n; per > uint64(size)/2 {
		t.Errorf("a decode after Recycle allocates %d bytes; the image has %d", per, size)
	}
}

// withoutLumaScans returns the JPEG data without the scans (their
// headers and entropy-coded data) that hold component 0.
func withoutLumaScans(t *testing.T, data []byte) []byte {
	t.Helper()
	out := append([]byte(nil), data[:2]...)
	var luma byte
	for i := 2; i+2 <= len(data); {
		if data[i] != 0xff {
			t.Fatalf("no marker at %d", i)
		}
		m := data[i+1]
		if m == 0xd9 {
			return append(out, data[i:]...)
		}
		end := i + 2 + int(data[i+2])<<8 + int(data[i+3])
		seg := data[i+4 : end]
		drop := false
		switch {
		case m >= 0xc0 && m <= 0xc2:
			luma = seg[6]
		case m == 0xda:
			for c := 0; c < int(seg[0]); c++ {
				drop = drop || seg[1+2*c] == luma
			}
			// The entropy-coded data runs to the next marker that is not
			// a stuffed 0xff or a restart marker.
			for end+1 < len(data) && !(data[end] == 0xff && data[end+1] != 0 && (data[end+1] < 0xd0 || data[end+1] > 0xd7)) {
				end++
			}
		}
		if !drop {
			out = append(out, data[i:end]...)
		}
		i = end
	}
	t.Fatal("no EOI marker")
	return nil
}

// TestFastACPairs: every fastAC entry decodes what decodeHuffman and
// receiveExtend decode symbol by symbol from its bits, whatever bits
// follow them (the run, coefficient and length of each of its one or two
// symbols, the code's length alone of an end of block), for the AC tables
// of the test JPEGs and random, also over-subscribed, tables; the JPEGs'
// tables pair symbols.
func TestFastACPairs(t *testing.T) {
	var tables [][]byte // DHT payloads of one AC table each
	for _, data := range inputs(t) {
		for i := 2; i+4 <= len(data) && data[i] == 0xff && data[i+1] != 0xda; {
			end := i + 2 + int(data[i+2])<<8 + int(data[i+3])
			if data[i+1] == dhtMarker {
				for p := data[i+4 : end]; len(p) >= 17; {
					n := 17
					for _, c := range p[1:17] {
						n += int(c)
					}
					if p[0]>>4 == acTable {
						tables = append(tables, p[:n])
					}
					p = p[n:]
				}
			}
			i = end
		}
	}
	if len(tables) == 0 {
		t.Fatal("no AC table in the test JPEGs")
	}
	real := len(tables)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		p := []byte{acTable << 4}
		total := 0
		for i := range 16 {
			c := 0
			if i < 12 {
				c = rng.IntN(1 << min(i+1, 5))
			}
			c = min(c, 256-total)
			total += c
			p = append(p, byte(c))
		}
		for range total {
			p = append(p, byte(rng.IntN(256)))
		}
		if total > 0 {
			tables = append(tables, p)
		}
	}
	pairs := 0
	for ti, p := range tables {
		d := &decoder{r: bytes.NewReader(p), huff: new([maxTc + 1][maxTh + 1]huffman)}
		if err := d.processDHT(len(p)); err != nil {
			t.Fatalf("table %d: %v", ti, err)
		}
		h := &d.huff[acTable][0]
		for x, e := range h.fastAC {
			if e == 0 {
				continue
			}
			l1 := uint32(e>>fastACLen1) & 63
			for y := range uint64(1) << l1 {
				d.bits = bits{acc: uint64(x)<<(64-lutSize) | y<<(64-lutSize-l1), n: 64}
				v, err := d.decodeHuffman(h)
				if err != nil {
					t.Fatalf("table %d, bits %010b: %v", ti, x, err)
				}
				run := uint64(v >> 4)
				if v == 0 {
					run = eobRun
				}
				if code := uint64(64 - d.bits.n); e>>fastACRun1&0x7f != run || e>>fastACCode1&0x0f != code {
					t.Fatalf("table %d, bits %010b: entry %#x, decoded %#x in %d bits", ti, x, e, v, code)
				}
				if v == 0 {
					continue
				}
				c, _ := d.receiveExtend(v & 0x0f)
				if int32(int16(e>>fastACCoeff1)) != c || uint64(64-d.bits.n) != uint64(l1) {
					t.Fatalf("table %d, bits %010b: entry %#x, coefficient %d in %d bits", ti, x, e, c, 64-d.bits.n)
				}
				step := e >> fastACStep2 & 0x1f
				if step == 0 {
					if e&63 != uint64(l1) || e>>fastACCoeff2 != 0 {
						t.Fatalf("table %d, bits %010b: entry %#x of one symbol", ti, x, e)
					}
					continue
				}
				if ti < real && y == 0 {
					pairs++
				}
				v2, _ := d.decodeHuffman(h)
				c2, _ := d.receiveExtend(v2 & 0x0f)
				if v2&0x0f == 0 || step != uint64(v2>>4)+1 || int32(int64(e)>>fastACCoeff2) != c2 || e&63 != uint64(64-d.bits.n) {
					t.Fatalf("table %d, bits %010b then %b: entry %#x, decoded %#x, %d in %d bits", ti, x, y, e, v2, c2, 64-d.bits.n)
				}
			}
		}
	}
	if pairs == 0 {
		t.Error("no entry of the test JPEGs' tables holds two symbols")
	}
}

// TestTablesKept: the Huffman tables a pooled decoder keeps from JPEG to
// JPEG change nothing: decoding the test JPEGs one after another, again
// and again, gives image/jpeg's luma or error every time, and a JPEG that
// selects tables it does not define fails as image/jpeg fails, even after
// a JPEG that defined them.
func TestTablesKept(t *testing.T) {
	in := inputs(t)
	noDHT := withoutSegments(in["420-restart.jpg"], dhtMarker)
	_, stdErr := stdLuma(t, noDHT)
	if stdErr == nil {
		t.Fatal("image/jpeg decodes a JPEG without Huffman tables")
	}
	names := make([]string, 0, len(in))
	for name := range in {
		names = append(names, name)
	}
	for round := range 3 {
		for _, name := range names {
			data := in[name]
			want, wantErr := stdLuma(t, data)
			got, err := Decode(bytes.NewReader(data), 0, Reduced)
			switch {
			case wantErr != nil || want == nil:
				if (err == nil) != (wantErr == nil && want != nil) {
					t.Fatalf("round %d, %s: error %v, image/jpeg's %v", round, name, err, wantErr)
				}
			case err != nil:
				t.Fatalf("round %d, %s: %v", round, name, err)
			default:
				b := want.Bounds()
				for y := b.Min.Y; y < b.Max.Y; y++ {
					if !bytes.Equal(got.Pix[got.PixOffset(0, y):][:b.Dx()], want.Pix[want.PixOffset(0, y):][:b.Dx()]) {
						t.Fatalf("round %d, %s: row %d differs from image/jpeg's luma", round, name, y)
					}
				}
			}
			if _, err := Decode(bytes.NewReader(noDHT), 0, Reduced); err == nil || err.Error() != stdErr.Error() {
				t.Fatalf("round %d, after %s: a JPEG without tables: error %v, image/jpeg's %v", round, name, err, stdErr)
			}
		}
	}
}

// withoutSegments returns the JPEG data without its marker segments of
// the kind marker (before the first scan).
func withoutSegments(data []byte, marker byte) []byte {
	out := append([]byte(nil), data[:2]...)
	i := 2
	for i+4 <= len(data) && data[i] == 0xff && data[i+1] != 0xda {
		end := i + 2 + int(data[i+2])<<8 + int(data[i+3])
		if data[i+1] != marker {
			out = append(out, data[i:end]...)
		}
		i = end
	}
	return append(out, data[i:]...)
}

// TestExtend: extend is EXTEND of section F.2.2.1 for every size and
// value: V < 2^(T−1) gives V − 2^T + 1, others V.
func TestExtend(t *testing.T) {
	for size := uint32(1); size <= 16; size++ {
		for v := int32(0); v < 1<<size; v++ {
			want := v
			if v < 1<<(size-1) {
				want = v - 1<<size + 1
			}
			if got := extend(v, size); got != want {
				t.Fatalf("extend(%d, %d) = %d, want %d", v, size, got, want)
			}
		}
	}
}

// areaTo is the exact area downscale of g to w×h (w ≤ g's width, h ≤ its
// height), as SIFT's: each output pixel the mean of the input area it
// covers, with fractional coverage at its edges; in float64.
func areaTo(g *image.Gray, w, h int) []float64 {
	b := g.Bounds()
	weights := func(n, m int) [][]float64 { // weights[d][i]
		f := float64(n) / float64(m)
		out := make([][]float64, m)
		for d := range out {
			out[d] = make([]float64, n)
			lo, hi := float64(d)*f, float64(d+1)*f
			for i := int(lo); i < n && float64(i) < hi; i++ {
				if ov := math.Min(hi, float64(i+1)) - math.Max(lo, float64(i)); ov > 0 {
					out[d][i] = ov / f
				}
			}
		}
		return out
	}
	wx, wy := weights(b.Dx(), w), weights(b.Dy(), h)
	tmp := make([]float64, w*b.Dy())
	for y := range b.Dy() {
		for x := range w {
			for i, c := range wx[x] {
				if c != 0 {
					tmp[y*w+x] += c * float64(g.Pix[g.PixOffset(b.Min.X+i, b.Min.Y+y)])
				}
			}
		}
	}
	out := make([]float64, w*h)
	for y := range h {
		for j, c := range wy[y] {
			if c != 0 {
				for x := range w {
					out[y*w+x] += c * tmp[j*w+x]
				}
			}
		}
	}
	return out
}

// eth80 returns the JPEGs of ETH-80's first view of each object (80
// photos at 256×256) from ../shared, or none if it is absent.
func eth80(t *testing.T) map[string][]byte {
	paths, _ := filepath.Glob("../../../../../shared/data/eth80/images/*/*-000-000.jpg")
	out := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = data
	}
	return out
}

// TestFilters: each filter is the one its use asks for. Box's decode at
// 1/2 and 1/4 is closer to the area downscale of the full decode than the
// other filters' (summed over the inputs and ETH-80's photos); and on
// photos (ETH-80's, skipped when absent), area-downscaling a decode at 1/2
// or 1/4 further, by a factor of about 1.9, comes closest to the full
// decode's area downscale to that size with Sharpen. (On the video frames
// at quality 50 of inputs, Reduced is as close at 1/4.)
func TestFilters(t *testing.T) {
	photos := eth80(t)
	if len(photos) == 0 {
		t.Log("ETH-80 is absent: Sharpen is not compared")
	}
	in := inputs(t)
	for name, data := range photos {
		in[name] = data
	}
	for shift := 1; shift <= 2; shift++ {
		var atSize, further [nFilters]float64 // summed |Δ|, and squared Δ on photos
		for name, data := range in {
			full, err := Decode(bytes.NewReader(data), 0, Reduced)
			if err != nil {
				continue
			}
			fb := full.Bounds()
			want := area(full, 1<<shift)
			// The downscale of the reduced image by about 1.9, and the full
			// decode's to the same size.
			w, h := max(1, want.Bounds().Dx()*10/19), max(1, want.Bounds().Dy()*10/19)
			_, photo := photos[name]
			var wantFurther []float64
			if photo {
				wantFurther = areaTo(full, w, h)
			}
			for f := range nFilters {
				got, err := Decode(bytes.NewReader(data), shift, f)
				if err != nil {
					t.Fatal(err)
				}
				mean, _ := difference(got, want)
				atSize[f] += mean * float64(fb.Dx()*fb.Dy())
				if photo {
					for i, v := range areaTo(got, w, h) {
						further[f] += (v - wantFurther[i]) * (v - wantFurther[i])
					}
				}
			}
		}
		t.Logf("1/%d: (Reduced, Box, Sharpen) summed |Δ| at the reduced size %.4g; squared Δ downscaled further %.4g", 1<<shift, atSize, further)
		for f := range nFilters {
			if f != Box && atSize[f] <= atSize[Box] {
				t.Errorf("1/%d: filter %d is as close to the area downscale as Box: %.4g against %.4g", 1<<shift, f, atSize[f], atSize[Box])
			}
			if len(photos) > 0 && f != Sharpen && further[f] <= further[Sharpen] {
				t.Errorf("1/%d: downscaled further, filter %d is as close as Sharpen: %.4g against %.4g", 1<<shift, f, further[f], further[Sharpen])
			}
		}
	}
}
