package sift

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// resizeTwoPass is the area resize by its definition: every source row
// filtered horizontally into a whole intermediate image, skipping
// zero-weight taps, then every destination row summed from it. resampler
// must give its results bit for bit: features carried from earlier runs
// were computed with it.
func resizeTwoPass(src []float32, sw, sh int, dst []float32, dw, dh int) {
	var xs, ys taps
	xs.build(sw, dw)
	ys.build(sh, dh)
	tmp := make([]float32, dw*sh)
	n := xs.n
	for y := 0; y < sh; y++ {
		s := src[y*sw : y*sw+sw]
		for x := range dw {
			i0 := int(xs.first[x])
			var acc float32
			for k, wk := range xs.w[x*n : x*n+n] {
				if wk != 0 {
					acc += float32(wk * s[i0+k])
				}
			}
			tmp[y*dw+x] = acc
		}
	}
	n = ys.n
	for y := 0; y < dh; y++ {
		o := dst[y*dw : y*dw+dw]
		clear(o)
		i0 := int(ys.first[y])
		for k, wk := range ys.w[y*n : y*n+n] {
			if wk == 0 {
				continue
			}
			s := tmp[(i0+k)*dw : (i0+k)*dw+dw]
			for x := range o {
				o[x] += float32(wk * s[x])
			}
		}
	}
}

// forEachResizePath runs f with the vector code (if the CPU has it) and
// without.
func forEachResizePath(t *testing.T, f func(t *testing.T)) {
	avx, avx2 := useAVX, useAVX2
	defer func() { useAVX, useAVX2 = avx, avx2 }()
	if avx2 {
		t.Run("vector", f)
	}
	useAVX, useAVX2 = false, false
	t.Run("scalar", f)
}

// resizeCases are source and destination sizes: the factors of the
// job's photos (a 4000×3000 JPEG decoded at 1/2 to 1,024, at 1/4 to 800,
// at full size to 1,024), scaled down, and random ones, around the vector
// widths and the ring's groups of 8 rows.
func resizeCases(rng *rand.Rand) [][4]int {
	cases := [][4]int{
		{250, 188, 128, 96}, {2000, 24, 1024, 12}, {125, 94, 100, 75}, {500, 375, 128, 96},
		{64, 48, 32, 24}, {64, 48, 25, 19}, {17, 9, 16, 8}, {9, 9, 1, 1}, {40, 3, 7, 2},
	}
	for range 60 {
		sw, sh := 1+rng.IntN(90), 1+rng.IntN(90)
		cases = append(cases, [4]int{sw, sh, 1 + rng.IntN(sw), 1 + rng.IntN(sh)})
	}
	return cases
}

func TestResizeMatchesTwoPass(t *testing.T) {
	forEachResizePath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		var r resampler // reused across sizes, as an Extractor's is
		for _, c := range resizeCases(rng) {
			sw, sh, dw, dh := c[0], c[1], c[2], c[3]
			src := make([]float32, sw*sh)
			for i := range src {
				src[i] = rng.Float32()
			}
			want := make([]float32, dw*dh)
			resizeTwoPass(src, sw, sh, want, dw, dh)
			got := make([]float32, dw*dh+1)
			for i := range got {
				got[i] = -1 // overwritten, except the guard past the end
			}
			r.resize(src, sw, sh, got[:dw*dh], dw, dh)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d to %dx%d: pixel (%d, %d) %v, want %v", sw, sh, dw, dh, i%dw, i/dw, got[i], want[i])
				}
			}
			if got[dw*dh] != -1 {
				t.Fatalf("%dx%d to %dx%d: wrote past the destination", sw, sh, dw, dh)
			}
		}
	})
}

// TestResizeGrayMatchesFromImage: resizing a grey image from its bytes
// gives bit for bit the resize of FromImage's float copy, for a
// sub-image whose rows are longer than it.
func TestResizeGrayMatchesFromImage(t *testing.T) {
	forEachResizePath(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 24))
		var r resampler
		for _, c := range resizeCases(rng) {
			sw, sh, dw, dh := c[0], c[1], c[2], c[3]
			whole := image.NewGray(image.Rect(0, 0, sw+5, sh+2))
			for i := range whole.Pix {
				whole.Pix[i] = uint8(rng.IntN(256))
			}
			g := whole.SubImage(image.Rect(3, 1, 3+sw, 1+sh)).(*image.Gray)
			want := make([]float32, dw*dh)
			resizeTwoPass(FromImage(g, nil).Pix, sw, sh, want, dw, dh)
			got := make([]float32, dw*dh)
			r.resizeGray(g.Pix, g.Stride, sw, sh, got, dw, dh)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d to %dx%d: pixel (%d, %d) %v, want %v", sw, sh, dw, dh, i%dw, i/dw, got[i], want[i])
				}
			}
		}
	})
}

// TestGrayRow: every byte value converts to u8's float, vector or not.
func TestGrayRow(t *testing.T) {
	forEachResizePath(t, func(t *testing.T) {
		for n := 0; n <= 300; n += 1 + n/20 {
			s := make([]uint8, n)
			for i := range s {
				s[i] = uint8(i*37 + n)
			}
			o := make([]float32, n+1)
			o[n] = -1
			grayRow(s, o[:n])
			for i, v := range s {
				if math.Float32bits(o[i]) != math.Float32bits(float32(v)/255) {
					t.Fatalf("n=%d: byte %d gave %v, want %v", n, v, o[i], float32(v)/255)
				}
			}
			if o[n] != -1 {
				t.Fatalf("n=%d: wrote past the row", n)
			}
		}
	})
}

// TestExtractImageMatchesFromImage: ExtractImage gives bit for bit the
// keypoints and descriptors of ExtractReducedContext of FromImage's copy,
// for a grey image that MaxSide downscales (at full size and as a
// decoder's reduction of a larger image, the two paths that skip the
// copy), one it does not, a grey sub-image and a colour image.
func TestExtractImageMatchesFromImage(t *testing.T) {
	tex := texture(800, 600, 31)
	grey := image.NewGray(image.Rect(0, 0, 800, 600))
	for i, v := range tex.Pix {
		grey.Pix[i] = uint8(math.Round(float64(v) * 255))
	}
	half := image.NewGray(image.Rect(0, 0, 400, 300))
	for y := range 300 {
		for x := range 400 {
			half.Pix[y*400+x] = grey.Pix[2*y*800+2*x]
		}
	}
	colour := image.NewRGBA(grey.Rect)
	for i, v := range grey.Pix {
		colour.Pix[4*i], colour.Pix[4*i+1], colour.Pix[4*i+2], colour.Pix[4*i+3] = v, 255-v, v/2, 255
	}
	cases := []struct {
		name         string
		img          image.Image
		fullW, fullH int
		maxSide      int
	}{
		{"grey downscaled", grey, 0, 0, 300},
		{"grey reduction", half, 800, 600, 300},
		{"grey unscaled", grey, 0, 0, 1024},
		{"grey sub-image", grey.SubImage(image.Rect(13, 7, 713, 507)), 0, 0, 256},
		{"colour downscaled", colour, 0, 0, 300},
	}
	for _, c := range cases {
		opt := DefaultOptions()
		opt.MaxSide = c.maxSide
		a, err := NewExtractor(opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewExtractor(opt)
		wantK, wantD, err := a.ExtractReducedContext(t.Context(), FromImage(c.img, nil), c.fullW, c.fullH)
		if err != nil {
			t.Fatal(err)
		}
		for rep := range 2 { // the second with the Extractor's buffers in use
			gotK, gotD, err := b.ExtractImage(t.Context(), c.img, c.fullW, c.fullH)
			if err != nil {
				t.Fatal(err)
			}
			if len(wantK) == 0 || !slices.Equal(gotK, wantK) || !bytes.Equal(gotD, wantD) {
				t.Fatalf("%s, pass %d: %d keypoints, want the %d of FromImage's copy, the same", c.name, rep, len(gotK), len(wantK))
			}
		}
	}
}

// BenchmarkResizeGray times the MaxSide downscale of a 12-megapixel
// photo's luma as describe makes it: decoded at 1/2 (2000×1500) to 1,024 a
// side, and at 1/4 (1000×750) to 800, from the bytes:
//
//	go test -run '^$' -bench ResizeGray -cpu 1 ./transforms/sift/
func BenchmarkResizeGray(b *testing.B) {
	for _, c := range [][4]int{{2000, 1500, 1024, 768}, {1000, 750, 800, 600}} {
		sw, sh, dw, dh := c[0], c[1], c[2], c[3]
		g := image.NewGray(image.Rect(0, 0, sw, sh))
		for i := range g.Pix {
			g.Pix[i] = uint8(i*7 + i/sw*13)
		}
		dst := make([]float32, dw*dh)
		var r resampler
		b.Run(fmt.Sprintf("%dx%d-to-%d", sw, sh, dw), func(b *testing.B) {
			for b.Loop() {
				r.resizeGray(g.Pix, g.Stride, sw, sh, dst, dw, dh)
			}
		})
	}
}
