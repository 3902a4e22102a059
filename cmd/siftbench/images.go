package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/image/draw"
)

// gray is an 8-bit-range grayscale image held as float64 for the warps; it is
// quantised to bytes only when written, like a camera would.
type gray struct {
	w, h int
	pix  []float64
}

func newGray(w, h int) *gray { return &gray{w: w, h: h, pix: make([]float64, w*h)} }

// at returns the pixel at (x, y), replicating the border.
func (g *gray) at(x, y int) float64 {
	x = min(max(x, 0), g.w-1)
	y = min(max(y, 0), g.h-1)
	return g.pix[y*g.w+x]
}

// toImage quantises g to an 8-bit image, rounding and clamping.
func (g *gray) toImage() *image.Gray {
	im := image.NewGray(image.Rect(0, 0, g.w, g.h))
	for i, v := range g.pix {
		im.Pix[i] = uint8(min(max(math.Round(v), 0), 255))
	}
	return im
}

func fromImage(im *image.Gray) *gray {
	b := im.Bounds()
	g := newGray(b.Dx(), b.Dy())
	for y := 0; y < g.h; y++ {
		for x := 0; x < g.w; x++ {
			g.pix[y*g.w+x] = float64(im.GrayAt(b.Min.X+x, b.Min.Y+y).Y)
		}
	}
	return g
}

// listPhotos returns the JPEG and PNG files under dir, sorted, so that a seed
// picks the same photos on every machine.
func listPhotos(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".jpg", ".jpeg", ".png":
			if !d.IsDir() {
				out = append(out, p)
			}
		}
		return nil
	})
	slices.Sort(out)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no .jpg or .png files under %s", dir)
	}
	return out, err
}

// loadGray decodes a photo and takes its luma (for a JPEG, its Y plane).
func loadGray(path string) (*image.Gray, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b := im.Bounds()
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(g, g.Bounds(), im, b.Min, draw.Src)
	if y, ok := im.(*image.YCbCr); ok {
		for r := 0; r < b.Dy(); r++ {
			i := y.YOffset(b.Min.X, b.Min.Y+r)
			copy(g.Pix[r*g.Stride:r*g.Stride+b.Dx()], y.Y[i:i+b.Dx()])
		}
	}
	return g, nil
}

// photoPicker hands out photos in a seeded random order without repetition
// (cycling if it runs out), so different mosaics show different objects.
type photoPicker struct {
	paths []string
	next  int
}

func newPhotoPicker(paths []string, seed uint64) *photoPicker {
	p := slices.Clone(paths)
	rng := rand.New(rand.NewPCG(seed, 0xe7480))
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return &photoPicker{paths: p}
}

func (p *photoPicker) pick() string {
	s := p.paths[p.next%len(p.paths)]
	p.next++
	return s
}

// mosaic makes a w×h "photo" (w:h = 4:3) as a 4×3 grid of different photos,
// each resized to a (w/4)×(h/3) tile with a Catmull-Rom filter (which x/image
// widens when shrinking, so it also antialiases). For 1024×768 and 256×256
// photos the tiles are the photos themselves; for 640×480 they are shrunk to
// 160×160, as a lower-resolution camera would see them.
func mosaic(pick *photoPicker, w, h int) (*image.Gray, []string, error) {
	const cols, rows = 4, 3
	tw, th := w/cols, h/rows
	out := image.NewGray(image.Rect(0, 0, w, h))
	var used []string
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			p := pick.pick()
			src, err := loadGray(p)
			if err != nil {
				return nil, nil, err
			}
			used = append(used, p)
			dr := image.Rect(c*tw, r*th, (c+1)*tw, (r+1)*th)
			if src.Bounds().Dx() == tw && src.Bounds().Dy() == th {
				draw.Draw(out, dr, src, image.Point{}, draw.Src)
			} else {
				draw.CatmullRom.Scale(out, dr, src, src.Bounds(), draw.Src, nil)
			}
		}
	}
	return out, used, nil
}

func writePNG(path string, im image.Image) error {
	var buf bytes.Buffer
	if err := png.Encode(&buf, im); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// ---- geometry -------------------------------------------------------------------

// homography maps reference pixel coordinates to warped ones, in homogeneous
// coordinates, with the centre of pixel (i, j) at (i, j) as in SIFT keypoints.
type homography [9]float64

func identity() homography { return homography{1, 0, 0, 0, 1, 0, 0, 0, 1} }

func (h homography) mul(g homography) homography {
	var r homography
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				r[3*i+j] += h[3*i+k] * g[3*k+j]
			}
		}
	}
	return r
}

func (h homography) apply(x, y float64) (float64, float64) {
	w := h[6]*x + h[7]*y + h[8]
	return (h[0]*x + h[1]*y + h[2]) / w, (h[3]*x + h[4]*y + h[5]) / w
}

func (h homography) inverse() homography {
	a, b, c := h[0], h[1], h[2]
	d, e, f := h[3], h[4], h[5]
	g, k, l := h[6], h[7], h[8]
	A := e*l - f*k
	B := -(d*l - f*g)
	C := d*k - e*g
	det := a*A + b*B + c*C
	inv := homography{
		A, -(b*l - c*k), b*f - c*e,
		B, a*l - c*g, -(a*f - c*d),
		C, -(a*k - b*g), a*e - b*d,
	}
	for i := range inv {
		inv[i] /= det
	}
	return inv
}

func translate(tx, ty float64) homography { return homography{1, 0, tx, 0, 1, ty, 0, 0, 1} }

// aboutCentre conjugates the linear map m (2×2, row-major) with a translation,
// so the image centre stays put.
func aboutCentre(w, h int, a, b, c, d float64) homography {
	cx, cy := float64(w-1)/2, float64(h-1)/2
	return translate(cx, cy).mul(homography{a, b, 0, c, d, 0, 0, 0, 1}).mul(translate(-cx, -cy))
}

// rotation by deg degrees, clockwise as displayed (y down).
func rotation(w, h int, deg float64) homography {
	s, c := math.Sincos(deg * math.Pi / 180)
	return aboutCentre(w, h, c, -s, s, c)
}

// minification returns how many source pixels one output pixel spans, at
// most: the largest singular value of the Jacobian of the output→source map,
// taken over the centre and the corners of the output (for an affine map it
// is the same everywhere).
func minification(inv homography, w, h int) float64 {
	s := 0.0
	for _, p := range [][2]float64{{0.5, 0.5}, {0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		x, y := p[0]*float64(w-1), p[1]*float64(h-1)
		const d = 0.5
		x0, y0 := inv.apply(x, y)
		x1, y1 := inv.apply(x+d, y)
		x2, y2 := inv.apply(x, y+d)
		a, c := (x1-x0)/d, (y1-y0)/d
		b, e := (x2-x0)/d, (y2-y0)/d
		// Singular values of [a b; c e] from the eigenvalues of JᵀJ.
		p, q, r := a*a+c*c, a*b+c*e, b*b+e*e
		s = max(s, math.Sqrt((p+r+math.Sqrt((p-r)*(p-r)+4*q*q))/2))
	}
	return s
}

// warp resamples src through H (reference → warped) into a w×h image: each
// output pixel takes the bicubic (Keys, a = −½) interpolation of src at
// H⁻¹(pixel). Where H shrinks the image, src is first blurred so that the
// output carries the same ½-pixel blur SIFT assumes of a camera
// (σ_add = ½·sqrt(s² − 1) for a minification s), instead of aliasing.
// Output pixels that come from outside src get the mean of src, so the
// border of the valid region is as weak an edge as possible.
func warp(src *gray, H homography, w, h int) *gray {
	inv := H.inverse()
	if s := minification(inv, w, h); s > 1.01 {
		src = gaussBlur(src, 0.5*math.Sqrt(s*s-1))
	}
	mean := 0.0
	for _, v := range src.pix {
		mean += v
	}
	mean /= float64(len(src.pix))
	out := newGray(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			sx, sy := inv.apply(float64(x), float64(y))
			if sx < -0.5 || sy < -0.5 || sx > float64(src.w)-0.5 || sy > float64(src.h)-0.5 {
				out.pix[y*w+x] = mean
				continue
			}
			out.pix[y*w+x] = bicubic(src, sx, sy)
		}
	}
	return out
}

// keys is the Keys cubic convolution kernel with a = −½ (Catmull-Rom).
func keys(t float64) float64 {
	t = math.Abs(t)
	switch {
	case t < 1:
		return (1.5*t-2.5)*t*t + 1
	case t < 2:
		return ((-0.5*t+2.5)*t-4)*t + 2
	}
	return 0
}

func bicubic(g *gray, x, y float64) float64 {
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := x-float64(x0), y-float64(y0)
	var wx, wy [4]float64
	for i := range 4 {
		wx[i] = keys(fx - float64(i-1))
		wy[i] = keys(fy - float64(i-1))
	}
	s := 0.0
	for j := range 4 {
		r := 0.0
		for i := range 4 {
			r += wx[i] * g.at(x0+i-1, y0+j-1)
		}
		s += wy[j] * r
	}
	return s
}

// gaussBlur convolves g with a Gaussian of the given σ, truncated at 4σ,
// separably, replicating the border.
func gaussBlur(g *gray, sigma float64) *gray {
	r := int(math.Ceil(4 * sigma))
	k := make([]float64, 2*r+1)
	sum := 0.0
	for i := range k {
		d := float64(i - r)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	tmp, out := newGray(g.w, g.h), newGray(g.w, g.h)
	for y := 0; y < g.h; y++ {
		for x := 0; x < g.w; x++ {
			s := 0.0
			for i, kv := range k {
				s += kv * g.at(x+i-r, y)
			}
			tmp.pix[y*g.w+x] = s
		}
	}
	for y := 0; y < g.h; y++ {
		for x := 0; x < g.w; x++ {
			s := 0.0
			for i, kv := range k {
				s += kv * tmp.at(x, y+i-r)
			}
			out.pix[y*g.w+x] = s
		}
	}
	return out
}

// jpegRoundTrip encodes g as a grayscale JPEG of the given quality and
// decodes it again.
func jpegRoundTrip(g *gray, quality int) (*gray, error) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, g.toImage(), &jpeg.Options{Quality: quality}); err != nil {
		return nil, err
	}
	im, err := jpeg.Decode(&buf)
	if err != nil {
		return nil, err
	}
	gi, ok := im.(*image.Gray)
	if !ok {
		return nil, fmt.Errorf("jpeg decoded to %T, want *image.Gray", im)
	}
	return fromImage(gi), nil
}

// ---- families ---------------------------------------------------------------------

// variant is one transformed copy of a reference image and the homography
// that maps reference coordinates to its own.
type variant struct {
	family, param string
	H             homography
	make          func(ref *gray) (*gray, error)
}

// families lists the transformations, one family per kind of change. Every
// geometric one keeps the image size and the image centre; photometric ones
// have H = identity.
func families(w, h int) []variant {
	var vs []variant
	geo := func(family, param string, H homography) {
		vs = append(vs, variant{family, param, H, func(ref *gray) (*gray, error) { return warp(ref, H, w, h), nil }})
	}
	for _, deg := range []float64{10, 30, 45, 60, 90, 150} {
		geo("rotation", fmt.Sprintf("%g°", deg), rotation(w, h, deg))
	}
	for _, s := range []float64{0.5, 0.7, 1.4, 2} {
		geo("scale", fmt.Sprintf("×%g", s), aboutCentre(w, h, s, 0, 0, s))
	}
	// Shears and the affine map of a plane seen obliquely: compressed by a
	// factor t (tilt) along a direction φ, then rotated by 20°.
	geo("affine", "shear 0.2", aboutCentre(w, h, 1, 0.2, 0, 1))
	geo("affine", "shear 0.45", aboutCentre(w, h, 1, 0, 0.45, 1))
	for _, tc := range []struct{ tilt, phi float64 }{{1.5, 0}, {2, 45}} {
		s, c := math.Sincos(tc.phi * math.Pi / 180)
		rot := aboutCentre(w, h, c, -s, s, c)
		unrot := aboutCentre(w, h, c, s, -s, c)
		squash := aboutCentre(w, h, 1, 0, 0, 1/tc.tilt)
		geo("affine", fmt.Sprintf("tilt %g at %g°", tc.tilt, tc.phi), rotation(w, h, 20).mul(rot).mul(squash).mul(unrot))
	}
	// A plane seen in perspective: the far side is shorter.
	for _, p := range []float64{0.0004, 0.0008} {
		cx, cy := float64(w-1)/2, float64(h-1)/2
		P := translate(cx, cy).mul(homography{1, 0, 0, 0, 1, 0, p * 0.6, p, 1}).mul(translate(-cx, -cy))
		geo("perspective", fmt.Sprintf("%g", p), P)
	}
	for _, sigma := range []float64{1, 2, 3, 4} {
		vs = append(vs, variant{"blur", fmt.Sprintf("σ=%g", sigma), identity(), func(ref *gray) (*gray, error) {
			return gaussBlur(ref, sigma), nil
		}})
	}
	for _, q := range []int{90, 70, 50, 30, 10} {
		vs = append(vs, variant{"jpeg", fmt.Sprintf("q=%d", q), identity(), func(ref *gray) (*gray, error) {
			return jpegRoundTrip(ref, q)
		}})
	}
	light := func(param string, f func(float64) float64) {
		vs = append(vs, variant{"light", param, identity(), func(ref *gray) (*gray, error) {
			out := newGray(ref.w, ref.h)
			for i, v := range ref.pix {
				out.pix[i] = f(v)
			}
			return out, nil
		}})
	}
	light("+40", func(v float64) float64 { return v + 40 })
	light("−40", func(v float64) float64 { return v - 40 })
	light("contrast ×0.6", func(v float64) float64 { return 128 + 0.6*(v-128) })
	light("contrast ×1.5", func(v float64) float64 { return 128 + 1.5*(v-128) })
	light("γ=0.6", func(v float64) float64 { return 255 * math.Pow(v/255, 0.6) })
	return vs
}
