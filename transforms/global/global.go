// Package global computes the five global image descriptors of the OMDML
// paper (Xia, Wu, Hoi, "Online Multi-modal Distance Metric Learning with
// Application to Image Retrieval", §5.3), one modality each:
//
//	colour  81  72-bin HSV colour histogram + 9 colour moments
//	edge    37  edge direction histogram: 36 directions + non-edge pixels
//	gabor  120  Gabor wavelet texture: 5 scales × 8 orientations × 3 moments
//	lbp     59  uniform LBP(8,1) histogram
//	gist   512  GIST: 4 scales × 8 orientations × 4×4 blocks
//
// The paper gives only the names and dimensions; every definition below that
// it does not fix is a choice made here, stated in the doc comment of the
// modality's method (Extractor.Colour, Extractor.Edge, Extractor.Gabor,
// Extractor.LBP, Extractor.GIST).
//
// # Preprocessing
//
// As in the paper, every image is first resized to fit 500×500 with its aspect
// ratio kept: the longer side becomes exactly Side = 500 pixels and the
// shorter one round(500·short/long), at least 1. The paper says "all the
// images", so small images are enlarged too. Resampling is Catmull–Rom
// (golang.org/x/image/draw), which widens its kernel when shrinking and so
// does not alias; an image already of that size is used as it is (the
// resampler allocates a temporary of 32 bytes × 500 × the source height per
// call). Alpha is
// taken as premultiplied colour over black, as image/color defines it. All
// modalities but GIST work on this image; GIST resizes it once more, as its
// reference implementation does (see Extractor.GIST).
//
// Grey levels are Rec. 601 luma Y = 0.299R + 0.587G + 0.114B in [0, 1],
// except for GIST, whose reference implementation averages R, G and B.
//
// The vectors are not rescaled to [0, 1] per entry: the paper does that over
// a whole data set before learning, which is a property of the set, not of
// one image.
package global

import (
	"errors"
	"fmt"
	"image"

	xdraw "golang.org/x/image/draw"
)

// Side is the length in pixels of the longer side of the image every modality
// is computed from (the paper's 500×500 box).
const Side = 500

// Modality names one global descriptor and its dimension.
type Modality struct {
	Name string // "colour", "edge", "gabor", "lbp" or "gist"
	Dim  int    // length of its vectors
}

// Dimensions of the modalities' vectors.
const (
	ColourDim = 81
	EdgeDim   = 37
	GaborDim  = 120
	LBPDim    = 59
	GISTDim   = 512
)

// Modalities returns the five modalities in the fixed order in which Extract
// returns their vectors: colour, edge, gabor, lbp, gist.
func Modalities() []Modality {
	return []Modality{
		{"colour", ColourDim},
		{"edge", EdgeDim},
		{"gabor", GaborDim},
		{"lbp", LBPDim},
		{"gist", GISTDim},
	}
}

// Extractor computes the descriptors. It owns every buffer the computation
// needs and reuses them from one image to the next, so one Extractor should
// serve many images; it is not safe for concurrent use (use one per
// goroutine). The zero value is not ready; use NewExtractor.
type Extractor struct {
	rgba *image.RGBA // the image resized to fit Side×Side
	w, h int

	r, g, b, y []float32 // planes of rgba in [0, 1]; y is luma

	// colour
	hsv [3][]float32

	// edge
	blurTmp, smooth, gx, gy, mag []float32
	edgeState                    []uint8
	stack                        []int32

	// gabor
	spec   []complex128     // spectrum of the padded luma
	small  []complex128     // folded spectrum of one filter
	plans  map[int]*fftPlan // by length
	work   []complex128     // for every 2-D FFT
	padIdx []int32          // source column of each padded column
	mags   []float32        // |r| on one filter's grid

	// gist
	gistRGBA *image.RGBA
	gistPix  []float64    // 256×256 working image
	gistA    []complex128 // prefilter transforms (266×266)
	gistB    []complex128
	gistF    []complex128 // spectrum of the padded prefiltered image (320×320)
	gistR    []complex128 // one filter's response
}

// NewExtractor returns an Extractor with empty buffers; they grow to fit the
// first image and are reused after that.
func NewExtractor() *Extractor {
	return &Extractor{plans: make(map[int]*fftPlan)}
}

// Extract computes all five descriptors of img, in the order of Modalities.
// The vectors are newly allocated (one backing array) and stay valid after
// later calls. It fails only for a nil image or one with no pixels.
func (e *Extractor) Extract(img image.Image) ([][]float32, error) {
	if err := e.prepare(img); err != nil {
		return nil, err
	}
	mods := Modalities()
	total := 0
	for _, m := range mods {
		total += m.Dim
	}
	all := make([]float32, total)
	out := make([][]float32, len(mods))
	off := 0
	for i, m := range mods {
		out[i] = all[off : off+m.Dim : off+m.Dim]
		off += m.Dim
	}
	e.colour(out[0])
	e.edge(out[1])
	e.gabor(out[2])
	e.lbp(out[3])
	e.gist(out[4])
	return out, nil
}

// ErrEmpty is returned for an image with no pixels.
var ErrEmpty = errors.New("global: image has no pixels")

// prepare resizes img into e.rgba and fills the colour and luma planes.
func (e *Extractor) prepare(img image.Image) error {
	if img == nil {
		return errors.New("global: nil image")
	}
	b := img.Bounds()
	W, H := b.Dx(), b.Dy()
	if W <= 0 || H <= 0 {
		return fmt.Errorf("%w (bounds %v)", ErrEmpty, b)
	}
	w, h := fitSide(W, H, Side)
	e.w, e.h = w, h
	if e.rgba == nil || cap(e.rgba.Pix) < 4*w*h {
		e.rgba = image.NewRGBA(image.Rect(0, 0, w, h))
	} else {
		e.rgba.Pix = e.rgba.Pix[:4*w*h]
		e.rgba.Stride = 4 * w
		e.rgba.Rect = image.Rect(0, 0, w, h)
	}
	if w == W && h == H {
		xdraw.Copy(e.rgba, image.Point{}, img, b, xdraw.Src, nil)
	} else {
		xdraw.CatmullRom.Scale(e.rgba, e.rgba.Rect, img, b, xdraw.Src, nil)
	}

	n := w * h
	e.r, e.g, e.b, e.y = grow(e.r, n), grow(e.g, n), grow(e.b, n), grow(e.y, n)
	pix := e.rgba.Pix
	for i := 0; i < n; i++ {
		p := pix[4*i : 4*i+3]
		r, g, bl := float32(p[0])/255, float32(p[1])/255, float32(p[2])/255
		e.r[i], e.g[i], e.b[i] = r, g, bl
		e.y[i] = min(1, 0.299*r+0.587*g+0.114*bl)
	}
	return nil
}

// fitSide returns the size of a W×H image scaled so that its longer side is
// side, rounded, each at least 1.
func fitSide(W, H, side int) (w, h int) {
	if W >= H {
		return side, max(1, int((int64(H)*int64(side)*2+int64(W))/(2*int64(W))))
	}
	return max(1, int((int64(W)*int64(side)*2+int64(H))/(2*int64(H)))), side
}

// resize returns dst[:n] zeroed if dst has the capacity, else a new slice.
func resize(dst []float32, n int) []float32 {
	if cap(dst) < n {
		return make([]float32, n)
	}
	dst = dst[:n]
	clear(dst)
	return dst
}

// grow returns a slice of length n, reusing buf's storage if it is large
// enough; the contents are unspecified.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}
