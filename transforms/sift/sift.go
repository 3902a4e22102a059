// Package sift extracts DoG SIFT keypoints and 128-byte descriptors (Lowe,
// "Distinctive Image Features from Scale-Invariant Keypoints", IJCV 2004),
// following the conventions of OpenCV's cv::SIFT so that its output can be
// compared with, and substituted for, OpenCV's.
//
// The pipeline, per image:
//
//  1. Optionally area-downscale so the longer side is at most MaxSide, and
//     optionally upsample ×2 (DoubleImage, every image or those whose
//     longer side is below DoubleBelow; bilinear, centre-aligned, as
//     OpenCV). The input is assumed to carry a blur of σ_in = 0.5 pixels
//     (2·0.5 after doubling), so the base image is blurred by
//     sqrt(σ² − σ_in²) to reach σ.
//  2. Build a Gaussian scale space of S+3 images per octave (S =
//     ScalesPerOctave) with σ_i = σ·2^(i/S), each made from the previous one
//     by an incremental blur sqrt(σ_i² − σ_{i−1}²); the next octave starts
//     from image S (σ = 2σ) subsampled by 2.
//  3. Difference of Gaussians D_i = L_{i+1} − L_i approximates (k−1)σ²∇²G,
//     the scale-normalised Laplacian, so its extrema over (x, y, σ) are blob
//     centres at their characteristic scale.
//  4. Keep 3×3×3 extrema with |D| > 0.5·C/S, refine them to sub-pixel and
//     sub-scale accuracy with a quadratic fit, reject low contrast and edges.
//  5. Assign one or more orientations from a gradient histogram, and compute
//     the 4×4×8 gradient descriptor in the rotated frame (optionally as
//     RootSIFT).
//
// Everything runs on flat []float32 planes owned by an Extractor, which is
// reused across images. Only the Gaussian scales are stored: the DoG is
// computed on the fly, a row at a time, while scanning for extrema, and the
// blur's intermediate is a ring of rows. The last scale of an octave,
// L_{S+2}, is not stored either: only the extremum test of the top DoG
// layer and the refinement of its samples read it, at a few thousand
// samples an image, so those samples are computed where they are read
// (topDoG), by the blur's own sums.
//
// On amd64 the inner loops of the ×2 upsampling, the blur (whose vertical
// pass makes four rows at a time), the DoG and extremum scan, the
// 26-neighbour extremum test, the gradient magnitude and angle, and the
// descriptor's patch rows (gradients, grid coordinates and Gaussian
// factors in one pass), trilinear weights and histogram (with AVX2, the
// orientation bins of the four cells a sample adds to held in vectors)
// run on 8 floats at a time (AVX, when the CPU and OS support it; the
// purego build tag turns it off), and the orientation and descriptor
// patches prefetch their rows. The vector code
// performs exactly the scalar code's float32 operations in the same order,
// with no fused multiply-add, so results are bit-identical either way.
//
// Deliberate differences from OpenCV's float SIFT path, none of which changes
// the algorithm:
//   - keypoints from a doubled image are mapped back exactly (doubled pixel
//     X is input pixel X/2 − ¼ for a centre-aligned upsampling); OpenCV
//     halves the coordinates, so its keypoints lie ¼ pixel right of and
//     below ours, in x and in y;
//   - the extremum pre-filter is 0.5·C/S exactly, not floored to whole grey
//     levels (OpenCV: ⌊0.5·C/S·255⌋/255);
//   - OpenCV builds one more octave, which is always too small to hold an
//     extremum; it is skipped;
//   - MaxKeypoints is a hard cap (OpenCV keeps every tie at the boundary);
//   - blur taps are summed from the centre outwards, the 3×3 refinement
//     system is solved in float64, and Gaussian window weights come from
//     separable exp tables, which changes rounding only.
//
// On the photos of cmd/siftbench the keypoints are OpenCV's up to float
// rounding (where checked, the same keypoints, each at OpenCV's position
// less ¼ pixel in x and y; mean counts within 0.2%), and matching scores
// agree within 0.001 on every family of transformations; RootSIFT scores
// higher on all of them.
//
// # Speed and memory
//
// cmd/siftbench measures speed against OpenCV 4's SIFT on the same decoded
// images, as the ratio of their thread CPU times. What bounds the time is mostly the order of
// the sums and memory: a bin of the descriptor's histogram must see its
// samples in order, so a vectorised scatter stores and reloads a sample's
// four cells' vectors whenever the cells change; the blurs' two additions
// per tap and vector are fixed by the bit-identical order of the sums; and
// the scan and descriptors read planes of the scale space long out of the
// cache. Time grows linearly with the number of pixels and, for the
// descriptors, of keypoints.
//
// An Extractor keeps about 29 bytes of scratch per pixel of the first
// octave, nearly all of it the Gaussian scale space: S+2 float32 planes,
// and a third more for the smaller octaves. A doubled image's first octave
// has 4× its pixels, so 116 bytes per input pixel (35.7 MB for a doubled
// 640×480, 22.8 MB for an undoubled 1024×768). MaxSide bounds it for large
// photos, and with DoubleBelow at most MaxSide/2 a doubled image is never
// larger than the largest undoubled one.
//
// To reproduce (OpenCV is the reference only, never a dependency):
//
//	apt-get install python3-opencv   # for /usr/bin/python3
//	go run ./cmd/siftbench --images DIR   # DIR: photos, e.g. ETH-80's
//
// prints, in a few minutes, the quality table (repeatability, matching
// score and keypoints per family of transformations, for ours, ours with
// RootSIFT, and OpenCV) and the speed ratios; see its --help for the flags.
// The figures measured are in docs/results.md.
package sift

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"

	"github.com/bowline/bowline/transforms/setting"
)

// Image is a grayscale image, row-major, values in [0,1].
type Image struct {
	Width, Height int
	Pix           []float32
}

// Options configures an Extractor. The zero value is not valid; start from
// DefaultOptions.
type Options struct {
	// ScalesPerOctave is S, the number of DoG layers per octave searched for
	// extrema (Lowe's and OpenCV's default 3).
	ScalesPerOctave int
	// Sigma is the blur of the first scale of each octave (1.6).
	Sigma float64
	// ContrastThreshold rejects weak extrema, OpenCV convention: a keypoint
	// survives if |D(x̂)|·S ≥ ContrastThreshold, and only samples with
	// |D| > 0.5·ContrastThreshold/S are refined at all (0.04).
	ContrastThreshold float64
	// EdgeThreshold is r in Lowe's edge test trace(H)²/det(H) < (r+1)²/r (10).
	EdgeThreshold float64
	// DoubleImage upsamples the image ×2 (bilinear, centre-aligned) before
	// building the pyramid, which roughly quadruples the number of stable
	// keypoints (true).
	DoubleImage bool
	// DoubleBelow, if positive, limits DoubleImage to images whose longer
	// side, after any MaxSide downscale, is below DoubleBelow pixels; 0
	// doubles every image. It is left out of the JSON of Options when 0, so
	// that options recorded before it existed, which doubled every image,
	// read and compare as the same.
	DoubleBelow int `json:",omitempty"`
	// MaxKeypoints keeps only the strongest keypoints by |response|; 0 keeps
	// all.
	MaxKeypoints int
	// MaxSide, if positive, area-downscales the image so that its longer side
	// is at most MaxSide before extraction; coordinates and scales are still
	// reported in the frame of the image passed to Extract.
	MaxSide int
	// RootSIFT returns RootSIFT descriptors (Arandjelović & Zisserman, "Three
	// things everyone should know to improve object retrieval", CVPR 2012):
	// the clamped SIFT vector v is L1-normalised and square-rooted element by
	// element, r_i = sqrt(v_i/Σv), so that the Euclidean distance between
	// two descriptors is the Hellinger distance between the underlying
	// histograms, and large bins dominate less. r has unit L2 norm, and is
	// quantised exactly like SIFT: byte_i = min(255, round(512·r_i)), so the
	// byte vector again has L2 norm ≈ 512 and the same dynamic range.
	// Saturation would need one bin holding a quarter of the L1 mass, which
	// after the 0.2 clamp only a descriptor with nearly all its energy in at
	// most four bins can do. Keypoints are unaffected.
	RootSIFT bool
}

// DefaultOptions returns OpenCV's SIFT defaults.
func DefaultOptions() Options {
	return Options{
		ScalesPerOctave:   3,
		Sigma:             1.6,
		ContrastThreshold: 0.04,
		EdgeThreshold:     10,
		DoubleImage:       true,
	}
}

// MinImageSide is the shortest side, in pixels of the working image (after
// any MaxSide downscale), below which Extract returns no keypoints: the
// descriptor window of even the finest keypoint would not fit.
const MinImageSide = 16

const (
	maxScalesPerOctave = 16
	maxSigma           = 10
)

// Validate reports whether o is usable.
func (o Options) Validate() error {
	var errs []error
	if o.ScalesPerOctave < 1 || o.ScalesPerOctave > maxScalesPerOctave {
		errs = append(errs, fmt.Errorf("sift: ScalesPerOctave = %d, want 1..%d", o.ScalesPerOctave, maxScalesPerOctave))
	}
	if !(o.Sigma > 0 && o.Sigma <= maxSigma) {
		errs = append(errs, fmt.Errorf("sift: Sigma = %v, want in (0, %d]", o.Sigma, maxSigma))
	}
	if !(o.ContrastThreshold >= 0 && o.ContrastThreshold < 1) {
		errs = append(errs, fmt.Errorf("sift: ContrastThreshold = %v, want in [0, 1)", o.ContrastThreshold))
	}
	if !(o.EdgeThreshold > 0) || math.IsInf(o.EdgeThreshold, 0) {
		errs = append(errs, fmt.Errorf("sift: EdgeThreshold = %v, want finite and > 0", o.EdgeThreshold))
	}
	if o.MaxKeypoints < 0 {
		errs = append(errs, setting.Errorf("sift", "MaxKeypoints", o.MaxKeypoints, "0 (no cap) or more"))
	}
	switch {
	case o.DoubleBelow < 0 || o.DoubleBelow > 0 && o.DoubleBelow <= MinImageSide:
		// A bound at or below MinImageSide doubles no image that has
		// keypoints: say so rather than take it.
		errs = append(errs, setting.Errorf("sift", "DoubleBelow", o.DoubleBelow, "more than %d, or 0 (no bound)", MinImageSide))
	case o.DoubleBelow > 0 && !o.DoubleImage:
		// No image is doubled, which has one spelling.
		errs = append(errs, setting.Errorf("sift", "DoubleBelow", o.DoubleBelow, "0 without DoubleImage"))
	}
	if o.MaxSide != 0 && o.MaxSide < MinImageSide {
		errs = append(errs, setting.Errorf("sift", "MaxSide", o.MaxSide, "0 (never downscale) or %d or more", MinImageSide))
	}
	return errors.Join(errs...)
}

// SameFeatures reports whether a w×h image gets the same keypoints and
// descriptors under o as under prev: the options are equal but for
// MaxSide and the doubling (DoubleImage, DoubleBelow), both make the same
// working image of it (WorkingSize) — neither downscales it, or both to
// the same size — and both double it or neither does. An incremental run
// carries an image's features over a change of those settings by it. An
// image of unknown size (w or h not positive) has the same features only
// under equal options.
func (o Options) SameFeatures(prev Options, w, h int) bool {
	if o == prev {
		return true
	}
	if w <= 0 || h <= 0 {
		return false
	}
	ow, oh, _ := o.WorkingSize(w, h)
	pw, ph, _ := prev.WorkingSize(w, h)
	if ow != pw || oh != ph || o.doubles(ow, oh) != prev.doubles(pw, ph) {
		return false
	}
	o.MaxSide, o.DoubleImage, o.DoubleBelow = 0, false, 0
	prev.MaxSide, prev.DoubleImage, prev.DoubleBelow = 0, false, 0
	return o == prev
}

// Doubling states o's doubling as one value: the bound DoubleBelow (an
// int) when o doubles only the images below it, else DoubleImage (a
// bool).
func (o Options) Doubling() any {
	if o.DoubleImage && o.DoubleBelow != 0 {
		return o.DoubleBelow
	}
	return o.DoubleImage
}

// Resized reports whether o differs from prev only in how an image is
// sized — MaxSide and the doubling — in a way that leaves some images'
// features alike (SameFeatures): not when one doubles every image and the
// other none.
func (o Options) Resized(prev Options) bool {
	every := func(o Options) bool { return o.DoubleImage && o.DoubleBelow == 0 }
	if every(o) && !prev.DoubleImage || every(prev) && !o.DoubleImage {
		return false
	}
	p := prev
	p.MaxSide, p.DoubleImage, p.DoubleBelow = o.MaxSide, o.DoubleImage, o.DoubleBelow
	return p == o
}

// Keypoint is a detected feature.
//
// X, Y are pixel coordinates in the frame of the image passed to Extract,
// with the centre of pixel (i, j) at (i, j) as in OpenCV; MaxSide
// downscaling and DoubleImage upsampling are undone. Scale is the Gaussian σ
// of the keypoint in those pixels (OpenCV's KeyPoint.size is 2·Scale).
// Angle is the dominant gradient direction in radians in [0, 2π), measured
// from +x towards +y in image coordinates (y down), i.e. OpenCV's
// KeyPoint.angle converted to radians. Response is |D(x̂)|, the interpolated
// DoG contrast in units of image intensity [0,1]. Octave is OpenCV's
// unpacked octave: −1 for the ×2 upsampled octave, 0 for the working image
// (after any MaxSide downscale), o for the working image subsampled by 2^o.
type Keypoint struct {
	X, Y, Scale, Angle, Response float32
	Octave                       int32
}

// DescriptorSize is the length in bytes of one descriptor.
const DescriptorSize = descWidth * descWidth * descBins

// Constants from Lowe 2004 as used by OpenCV.
const (
	initSigma      = 0.5 // blur assumed present in the input image
	imgBorder      = 5   // extrema this close to an octave's edge are ignored
	maxInterpSteps = 5
	oriHistBins    = 36
	oriSigFactor   = 1.5 // orientation window σ, in units of keypoint σ
	oriRadius      = 3 * oriSigFactor
	oriPeakRatio   = 0.8
	descWidth      = 4   // descriptor is descWidth×descWidth histograms
	descBins       = 8   // of descBins orientations each
	descSclFactor  = 3.0 // one histogram cell spans 3σ
	descMagThr     = 0.2
	descIntFactor  = 512.0
	flt32Epsilon   = 1.1920928955078125e-07
)

// Extractor computes SIFT features. It owns all scratch buffers, which grow
// to fit the largest image seen and are reused, so steady-state extraction
// allocates only the returned slices. Not safe for concurrent use: give each
// goroutine its own Extractor.
type Extractor struct {
	opt Options

	// Gaussian kernels (half, centre first): kern[0] brings the base image to
	// Sigma, kern[i] takes scale i−1 to scale i; kernUp is kern[0] of a
	// doubled image, whose assumed blur is twice the input's.
	kern   [][]float32
	kernUp []float32
	// double reports whether the image being extracted is doubled
	// (Options.doubles).
	double bool

	work  Image     // MaxSide-downscaled input
	in    *Image    // ExtractImage's input converted by FromImage
	gauss []float32 // all octaves' Gaussian scales, octave after octave
	octs  []octave
	mask  []uint8   // candidate extrema of two rows' DoG layers, a bit per sample
	dog   []float32 // the DoG layers of the last three rows scanned
	tmp   []float32 // blur: ring of horizontally filtered rows
	pad   []float32 // one reflected row
	offs  []int     // blur tap offsets
	rs    resampler
	up    upRows

	kps  []kpoint
	desc descScratch
	ori  oriScratch
	top  topScratch

	// ctx is the context of the ExtractContext call running, nil for
	// Extract: see stopped.
	ctx context.Context
}

// topScratch holds topDoG's buffers and the last neighbourhood it computed.
type topScratch struct {
	ok      bool // o, r, c and d are those of this image
	o, r, c int
	d       [3][3]float32
	h       []float32 // the horizontal pass's 8 columns of 2r+4 rows
	rows    []int     // the offsets of h's source rows
	vrows   []int     // h's rows, for its vertical pass
}

// octave is the geometry of one octave's planes inside Extractor.gauss.
type octave struct {
	w, h int
	off  int // offset of scale 0; scale i starts at off + i*w*h
}

// kpoint is a keypoint in its octave's own frame, as the descriptor needs it.
type kpoint struct {
	x, y     float32 // octave pixel coordinates
	sigma    float32 // σ in octave pixels
	angle    float32 // OpenCV KeyPoint.angle, degrees in [0, 360)
	response float32
	octave   int32 // pyramid index, 0 = base (doubled) image
	layer    int32 // Gaussian scale the keypoint was refined to
}

// NewExtractor validates opt and precomputes the blur kernels.
func NewExtractor(opt Options) (*Extractor, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	S := opt.ScalesPerOctave
	e := &Extractor{opt: opt}
	e.kern = make([][]float32, S+3)

	base := func(inBlur float64) []float32 {
		return gaussianKernel(math.Sqrt(math.Max(opt.Sigma*opt.Sigma-inBlur*inBlur, 0.01)))
	}
	e.kern[0] = base(initSigma)
	if opt.DoubleImage {
		e.kernUp = base(2 * initSigma)
	}
	// Blurring by σ_a then σ_b equals blurring by sqrt(σ_a²+σ_b²), so each
	// scale is reached from the previous one by the difference in variance;
	// computed like OpenCV to get the same kernels.
	k := math.Pow(2, 1/float64(S))
	for i := 1; i < S+3; i++ {
		prev := math.Pow(k, float64(i-1)) * opt.Sigma
		total := prev * k
		e.kern[i] = gaussianKernel(math.Sqrt(total*total - prev*prev))
	}
	return e, nil
}

// Options returns the options the Extractor was built with.
func (e *Extractor) Options() Options { return e.opt }

// Extract returns the keypoints of img and their descriptors, DescriptorSize
// bytes each, row-major (len(desc) == DescriptorSize*len(kps)). Both slices
// are newly allocated and owned by the caller. The order is deterministic:
// by Octave, then Y, X, Scale, Angle. Images with a side shorter than
// MinImageSide (after any MaxSide downscale), and flat images, give no
// keypoints. Extract panics if len(img.Pix) < img.Width*img.Height.
func (e *Extractor) Extract(img *Image) ([]Keypoint, []byte) {
	kps, desc, _ := e.ExtractContext(context.Background(), img)
	return kps, desc
}

// Checkpoints of ExtractContext: ctx is looked at before every blur, every
// checkRows rows of an octave's extremum scan and every checkKeypoints
// descriptors, so that a cancelled extraction stops within a few
// milliseconds of work even on a large, keypoint-dense image (a noise photo
// of 1600² pixels takes seconds), while the cost of looking stays
// negligible.
const (
	checkRows      = 32
	checkKeypoints = 256
)

// ExtractContext is Extract that gives up when ctx is done, returning no
// keypoints and ctx's error: a service bounds a query's time with it
// (Extract's cost grows with pixels and keypoints, and a client's photo can
// have many of both). When ctx is not done the results are Extract's, bit
// for bit.
func (e *Extractor) ExtractContext(ctx context.Context, img *Image) ([]Keypoint, []byte, error) {
	return e.ExtractReducedContext(ctx, img, 0, 0)
}

// ctxErr returns the error of the running ExtractContext's context.
func (e *Extractor) ctxErr() error {
	if e.ctx == nil {
		return nil
	}
	return e.ctx.Err()
}

// stopped reports whether the running ExtractContext's context is done: the
// steps of the extraction return early when it is, and ExtractContext
// discards what they made.
func (e *Extractor) stopped() bool { return e.ctxErr() != nil }

// ExtractReduced is Extract of a fullW×fullH image of which img is a
// reduction by a decoder (a JPEG decoded DCT-scaled, img's pixel (x, y)
// standing for the full image's pixels from (x·fullW/img.Width,
// y·fullH/img.Height)): the MaxSide size is the one Extract gives the full
// image, img is area-downscaled to it, and keypoints are in the full
// image's coordinates. img must be no smaller than that size on either
// side; a reduction that is not (MaxSide 0, or an img larger than the
// MaxSide size would have been) panics, as a caller's mistake. An img of
// fullW×fullH is no reduction: ExtractReduced is Extract of it, so a
// decoder's caller passes the full size whether or not it reduced.
func (e *Extractor) ExtractReduced(img *Image, fullW, fullH int) ([]Keypoint, []byte) {
	return e.extract(img, nil, fullW, fullH)
}

// ExtractReducedContext is ExtractReduced that gives up when ctx is done,
// as ExtractContext does; with fullW 0 it is ExtractContext.
func (e *Extractor) ExtractReducedContext(ctx context.Context, img *Image, fullW, fullH int) ([]Keypoint, []byte, error) {
	return e.withContext(ctx, func() ([]Keypoint, []byte) { return e.extract(img, nil, fullW, fullH) })
}

// ExtractImage is ExtractReducedContext of FromImage(img), with fullW 0
// for an img that is no reduction, without a copy of img's size: a grey
// image (a decoded JPEG's luma) that MaxSide downscales is area-downscaled
// straight from its bytes, and any other image is converted into the
// Extractor's own buffer. The results are bit for bit those of
// ExtractReducedContext of FromImage(img).
func (e *Extractor) ExtractImage(ctx context.Context, img image.Image, fullW, fullH int) ([]Keypoint, []byte, error) {
	return e.withContext(ctx, func() ([]Keypoint, []byte) {
		b := img.Bounds()
		if g, ok := img.(*image.Gray); ok && b.Dx() > 0 && b.Dy() > 0 {
			fw, fh := fullW, fullH
			if fw <= 0 {
				fw, fh = b.Dx(), b.Dy()
			}
			if _, _, scaled := e.opt.WorkingSize(fw, fh); scaled {
				return e.extract(nil, g, fullW, fullH)
			}
		}
		e.in = FromImage(img, e.in)
		return e.extract(e.in, nil, fullW, fullH)
	})
}

// withContext runs extract with e.ctx set to ctx, returning ctx's error
// instead of extract's results once ctx is done.
func (e *Extractor) withContext(ctx context.Context, extract func() ([]Keypoint, []byte)) ([]Keypoint, []byte, error) {
	e.ctx = ctx
	defer func() { e.ctx = nil }()
	if err := e.ctxErr(); err != nil {
		return nil, nil, err
	}
	kps, desc := extract()
	if err := e.ctxErr(); err != nil {
		return nil, nil, err
	}
	return kps, desc, nil
}

// doubles reports whether a working image (after any MaxSide downscale) of
// w×h pixels is doubled: DoubleImage, and its longer side below
// DoubleBelow if that is set.
func (o Options) doubles(w, h int) bool {
	return o.DoubleImage && (o.DoubleBelow == 0 || max(w, h) < o.DoubleBelow)
}

// WorkingSize is the size of the image SIFT works on for a w×h input
// (before any doubling): the MaxSide downscale of it, and whether o
// downscales it at all.
func (o Options) WorkingSize(w, h int) (int, int, bool) {
	m := o.MaxSide
	if m <= 0 || max(w, h) <= m {
		return w, h, false
	}
	if w >= h {
		return m, max(1, int(math.Round(float64(h)*float64(m)/float64(w)))), true
	}
	return max(1, int(math.Round(float64(w)*float64(m)/float64(h)))), m, true
}

// extract is Extract, or ExtractReduced when fullW > 0, of img, or, if img
// is nil, of the grey image gray, which the MaxSide size must downscale
// (read as FromImage reads it); it returns early, with partial results
// that ExtractContext discards, once e.stopped().
func (e *Extractor) extract(img *Image, gray *image.Gray, fullW, fullH int) ([]Keypoint, []byte) {
	var iw, ih int
	switch {
	case img != nil:
		iw, ih = img.Width, img.Height
	case gray != nil:
		iw, ih = gray.Rect.Dx(), gray.Rect.Dy()
	}
	if iw <= 0 || ih <= 0 {
		return nil, nil
	}
	if img != nil && len(img.Pix) < iw*ih {
		panic(fmt.Sprintf("sift: image is %dx%d but has %d pixels", iw, ih, len(img.Pix)))
	}
	if fullW <= 0 {
		fullW, fullH = iw, ih
	}

	// Work on a downscaled copy if asked; remember how to map back.
	src := img
	fx, fy := 1.0, 1.0
	w, h, scaled := e.opt.WorkingSize(fullW, fullH)
	reduced := fullW != iw || fullH != ih
	if reduced && (!scaled || iw < w || ih < h) {
		panic(fmt.Sprintf("sift: a %dx%d reduction of a %dx%d image, below the MaxSide size %dx%d", iw, ih, fullW, fullH, w, h))
	}
	if img == nil && !scaled {
		panic("sift: a grey image that MaxSide does not downscale")
	}
	if scaled {
		e.work.Width, e.work.Height = w, h
		e.work.Pix = grow(e.work.Pix, w*h)
		if img != nil {
			e.rs.resize(img.Pix[:iw*ih], iw, ih, e.work.Pix, w, h)
		} else {
			e.rs.resizeGray(gray.Pix[gray.PixOffset(gray.Rect.Min.X, gray.Rect.Min.Y):], gray.Stride, iw, ih, e.work.Pix, w, h)
		}
		src = &e.work
		fx = float64(fullW) / float64(w)
		fy = float64(fullH) / float64(h)
	}
	if min(src.Width, src.Height) < MinImageSide {
		return nil, nil
	}
	e.double = e.opt.doubles(src.Width, src.Height)

	e.kps = e.kps[:0]
	e.buildAndDetect(src)
	if len(e.kps) == 0 || e.stopped() {
		return nil, nil
	}
	e.selectKeypoints()

	kps := make([]Keypoint, len(e.kps))
	desc := make([]byte, DescriptorSize*len(e.kps))
	first := int32(0)
	baseToWork, shift := 1.0, 0.0 // base pixel c is working pixel c·baseToWork − shift
	if e.double {
		first = -1
		baseToWork, shift = 0.5, 0.25
	}
	for i := range e.kps {
		if i%checkKeypoints == 0 && e.stopped() {
			return nil, nil
		}
		k := &e.kps[i]
		oc := e.octs[k.octave]
		plane := oc.w * oc.h
		g := e.gauss[oc.off+int(k.layer)*plane : oc.off+(int(k.layer)+1)*plane]
		e.desc.compute(g, oc.w, oc.h, k, e.opt.RootSIFT, desc[i*DescriptorSize:(i+1)*DescriptorSize])

		// Octave pixel c is base pixel c·2^o exactly, because octaves are
		// made by taking every other sample starting at 0; base pixel c is
		// working pixel c/2 − ¼ if doubled (see upsample2). The MaxSide
		// resize is centre-aligned too: working pixel c covers input
		// [c·f, (c+1)·f), whose centre is input pixel (c+0.5)·f − 0.5.
		s := math.Ldexp(baseToWork, int(k.octave))
		x := float64(k.x)*s - shift
		y := float64(k.y)*s - shift
		if fx != 1 || fy != 1 {
			x = (x+0.5)*fx - 0.5
			y = (y+0.5)*fy - 0.5
		}
		a := float32(float64(k.angle) * (math.Pi / 180))
		if a >= 2*math.Pi || a < 0 {
			a = 0
		}
		kps[i] = Keypoint{
			X:        float32(x),
			Y:        float32(y),
			Scale:    float32(float64(k.sigma) * s * math.Sqrt(fx*fy)),
			Angle:    a,
			Response: k.response,
			Octave:   k.octave + first,
		}
	}
	return kps, desc
}

// buildAndDetect builds the scale space of src octave by octave and appends
// the oriented keypoints of each octave to e.kps.
func (e *Extractor) buildAndDetect(src *Image) {
	S := e.opt.ScalesPerOctave
	// L_0 … L_{S+1}: the last scale, L_{S+2}, is computed only where it is
	// read (topDoG).
	nScales := S + 2
	e.top.ok = false

	bw, bh := src.Width, src.Height
	if e.double {
		bw, bh = 2*bw, 2*bh
	}
	// OpenCV: cvRound(log2(min side) − 2) octaves (plus one more for the
	// doubled image, which is always smaller than the 2·imgBorder+1 pixels
	// needed for any extremum and so never yields keypoints).
	nOct := int(math.RoundToEven(math.Log2(float64(min(bw, bh))) - 2))
	if nOct < 1 {
		return
	}

	// Lay out every octave's scales in one buffer.
	e.octs = e.octs[:0]
	total := 0
	w, h := bw, bh
	for o := 0; o < nOct; o++ {
		e.octs = append(e.octs, octave{w: w, h: h, off: total})
		total += nScales * w * h
		w, h = w/2, h/2
	}
	e.gauss = grow(e.gauss, total)

	// Base image.
	g := e.scales(0)
	plane := bw * bh
	pix := src.Pix[:src.Width*src.Height]
	// Non-finite pixels would turn whole neighbourhoods of the pyramid into
	// NaN and NaN bin indices into panics; zero them once in the base image
	// instead of guarding every later step. The blurs and the upsampling
	// are weighted means, so a source without non-finite or huge pixels
	// gives none, and looking at it, a quarter of the base image when
	// doubled and in cache, saves a pass over the base image.
	huge := false
	for _, v := range src.Pix[:src.Width*src.Height] {
		if !(abs32(v) <= maxSafePixel) {
			huge = true
			break
		}
	}
	if e.double {
		// The doubled image (upsample2) is made a row at a time as the
		// blur reads it.
		e.up.start(pix, src.Width, src.Height)
		e.blurFrom(nil, &e.up, g[:plane], bw, bh, e.kernUp)
	} else {
		e.blur(pix, g[:plane], bw, bh, e.kern[0])
	}
	if huge {
		for i, v := range g[:plane] {
			if v-v != 0 {
				g[i] = 0
			}
		}
	}

	for o, oc := range e.octs {
		plane := oc.w * oc.h
		g := e.scales(o)
		if o > 0 {
			// Scale S of the previous octave has blur 2σ, i.e. σ in pixels
			// of half the size: subsampling it starts the next octave
			// without any further blur.
			p := e.octs[o-1]
			prev := e.scales(o - 1)[S*p.w*p.h : (S+1)*p.w*p.h]
			downsample2(prev, p.w, p.h, g[:plane], oc.w, oc.h)
		}
		for i := 1; i < nScales; i++ {
			if e.stopped() {
				return
			}
			e.blur(g[(i-1)*plane:i*plane], g[i*plane:(i+1)*plane], oc.w, oc.h, e.kern[i])
		}
		e.detectOctave(o, g, oc.w, oc.h)
	}
}

// maxSafePixel bounds the pixels of a source whose base image needs no
// check for non-finite values: a weighted mean of values this small cannot
// overflow float32 (3.4e38), even summed with rounding.
const maxSafePixel = 1e30

// scales returns the S+2 Gaussian scales L_0 … L_{S+1} of octave o, plane
// after plane.
func (e *Extractor) scales(o int) []float32 {
	oc := e.octs[o]
	return e.gauss[oc.off : oc.off+(e.opt.ScalesPerOctave+2)*oc.w*oc.h]
}

// selectKeypoints drops exact duplicates (two extrema that refine to the same
// sample give the same keypoint, as OpenCV's removeDuplicatedSorted), applies
// MaxKeypoints, and leaves e.kps in the canonical output order.
func (e *Extractor) selectKeypoints() {
	slices.SortFunc(e.kps, canonical)
	e.kps = slices.CompactFunc(e.kps, func(a, b kpoint) bool {
		return a.octave == b.octave && a.x == b.x && a.y == b.y && a.sigma == b.sigma && a.angle == b.angle
	})
	if n := e.opt.MaxKeypoints; n > 0 && len(e.kps) > n {
		// Strongest first; ties broken by the canonical order so the cut is
		// deterministic (OpenCV would keep every tie at the boundary).
		slices.SortStableFunc(e.kps, func(a, b kpoint) int { return cmp.Compare(b.response, a.response) })
		e.kps = e.kps[:n]
		slices.SortFunc(e.kps, canonical)
	}
}

// canonical orders keypoints by octave, y, x, σ, angle, response: the
// output order, since within an octave these map monotonically to the
// reported fields.
func canonical(a, b kpoint) int {
	return cmp.Or(
		cmp.Compare(a.octave, b.octave),
		cmp.Compare(a.y, b.y),
		cmp.Compare(a.x, b.x),
		cmp.Compare(a.sigma, b.sigma),
		cmp.Compare(a.angle, b.angle),
		cmp.Compare(a.response, b.response),
		cmp.Compare(a.layer, b.layer),
	)
}

// growBytes is grow for bytes.
func growBytes(s []byte, n int) []byte {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]byte, n, n+n/8)
}

// growInt32 is grow for int32s.
func growInt32(s []int32, n int) []int32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]int32, n, n+n/8)
}

// grow returns s resliced to n elements, reallocating only if its capacity is
// too small. Contents are not preserved.
func grow(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n, n+n/8)
}
