// Package describe turns images into features: it reads and decodes each
// image once (package ingest), extracts its SIFT keypoints (package sift)
// and, if asked, its global features (package global), and turns every
// failure into a dead letter. Package describebeam runs it as a Beam
// transform.
package describe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/sift"
	"github.com/bowline/bowline/transforms/synthetic"
)

// Options configures extraction.
type Options struct {
	SIFT sift.Options
	// NoSIFT skips SIFT; Global adds the global features. At least one
	// kind must be extracted.
	NoSIFT, Global bool
	// Synthetic, when its N is set, is the synthetic corpus the images
	// belong to: their features are generated (package synthetic) instead
	// of read, decoded and described.
	Synthetic synthetic.Spec
	// MaxPixels refuses images whose header declares more pixels, before
	// decoding them (0: no limit).
	MaxPixels int64
	// DCTScale decodes a JPEG whose longer side is at least twice
	// SIFT.MaxSide DCT-domain scaled, by the largest 1/2, 1/4 or 1/8 that
	// keeps it at least MaxSide (ingest.Decoder.DecodeLuma), before
	// SIFT's area downscale to MaxSide: a 12-megapixel photo's decode
	// skips most of the IDCT and SIFT's downscale reads a quarter of the
	// pixels. Its pixels are not the full decode's downscale, so it
	// changes those photos' features, and a run records it. It needs SIFT
	// alone: global features read colour at full size (WithGlobal turns
	// it off).
	DCTScale bool `json:",omitempty"`
	// DCTVersion is the reduced transforms DCTScale decodes through: 0
	// libjpeg's reduced IDCT (ingest.Decoder.ReducedIDCT), as runs that
	// recorded no version were described; DCTVersion (1) the mean of the
	// pixels a reduced pixel stands for where SIFT reads the reduced image
	// as it is, else the filter whose area downscale comes closest to the
	// full decode's (ingest.DecodeLuma), whose keypoints on camera photos
	// are within 1% of the full decode's rather than 2.4% above. A photo
	// DCT-scaled under two versions gets other features (SameFeatures).
	DCTVersion int `json:",omitempty"`
	// PartImages is the number of images of one part: the Beam transform
	// describes ⌈images/PartImages⌉ parts, each by a pool of goroutines,
	// one per CPU, and streams each part's features to a file of its own
	// in row groups (formats.RowGroupBytes), so the number of parts, the
	// work a cluster can spread, follows the corpus.
	PartImages int
	// PartLoads is the most parts a worker process describes at once (0:
	// no limit). A runner may run every part of the stage side by side in
	// one process — Prism does — and each holds a row group of features
	// and, in an incremental run, the previous run's features of its part
	// (about 0.4 GB at 1,000 photos of 2,000 keypoints); each part already
	// keeps every CPU busy, so two at once lose nothing. It changes no
	// output, so it is left out of the settings a run records.
	PartLoads int `json:"-"`
}

// DefaultOptions returns OpenCV-like SIFT settings on images of at most
// 1,024 pixels a side, doubled below 512, JPEGs of at least twice that
// decoded DCT-domain scaled, no global features, a 100-megapixel limit,
// 1,000 images a part and two parts at once in a worker process.
func DefaultOptions() Options {
	o := Options{SIFT: sift.DefaultOptions(), MaxPixels: 100_000_000, PartImages: 1000, PartLoads: 2}
	// SIFT's scratch grows with the pixel count (about 70 MB at 640×480 with
	// the input doubled) and web images come at any size: bound it. A
	// 12-megapixel photo described at 1,024 a side rather than 1,600 costs
	// about half the description and under half the keypoints (so under
	// half the quantisation and peak memory), with no measurable loss of
	// held-out mAP; at 1,600 with the input doubled (about 20,000 keypoints
	// a photo) most words of a 1,000-word vocabulary occur in every photo
	// and carry no IDF weight.
	o.SIFT.MaxSide = 1024
	// Doubling (Lowe's octave −1) pays on small images: +0.05 held-out mAP
	// for every method on ETH-80's 256×256 photos, their 29 keypoints a
	// photo made 70. From 640×480 up it measured no gain, at 2–3× the
	// description CPU and 2.6–4× the keypoints, which quantisation, the
	// postings, the index and the service's memory pay again. 512 lies
	// between the two, and at half the MaxSide above a doubled image is
	// never larger than the largest undoubled one, so MaxSide still bounds
	// a photo's scratch and keypoints.
	o.SIFT.DoubleBelow = 512
	// DCT-scaled decoding changes only photos of at least twice MaxSide:
	// on 986 photos of 12 megapixels it took 12–23% off the description
	// CPU, and held-out mAP moved by no more than the paired bootstrap's
	// noise, for TF-IDF or SOLIS-ADA, over two splits (docs/results.md,
	// photo sizes).
	o.DCTScale, o.DCTVersion = true, DCTVersion
	return o
}

// DCTVersion is the version of the reduced transforms that
// DefaultOptions' DCTScale decodes through (Options.DCTVersion).
const DCTVersion = 1

// WithGlobal returns o extracting the global features too. They read
// colour at full size, so it decodes at full size: DCTScale is off.
func (o Options) WithGlobal() Options {
	o.Global, o.DCTScale = true, false
	return o
}

// Validate reports options Extract cannot run with.
func (o Options) Validate() error {
	if o.NoSIFT && !o.Global {
		return fmt.Errorf("describe: neither SIFT nor global features asked for")
	}
	if o.DCTScale && (o.Global || o.NoSIFT) {
		return fmt.Errorf("describe: DCT-scaled decoding is for SIFT alone (global features read colour at full size): turn it off with global features")
	}
	if o.Synthetic.N > 0 && (o.Global || o.NoSIFT) {
		return fmt.Errorf("describe: the synthetic corpus has SIFT-like descriptors only, no pixels for global features")
	}
	if o.PartImages < 1 {
		return setting.Errorf("describe", "PartImages", o.PartImages, "1 or more")
	}
	if o.PartLoads < 0 {
		return setting.Errorf("describe", "PartLoads", o.PartLoads, "0 (no limit) or more")
	}
	if o.MaxPixels < 0 {
		return setting.Errorf("describe", "MaxPixels", o.MaxPixels, "0 (no limit) or more")
	}
	return o.SIFT.Validate()
}

// SameFeatures reports whether an image of w×h pixels (upright, as its
// features record) gets the same features under o as under prev, options
// that differ at most in how a photo is sized: SIFT's (sift.Options.
// SameFeatures) and DCTScale with its DCTVersion. Where exactly one of
// them DCT-scales, or both through other versions, the image must be one
// that scaling leaves at full size (its longer side below twice
// SIFT.MaxSide, ingest.LumaShift), whose luma is the full decode's.
func (o Options) SameFeatures(prev Options, w, h int) bool {
	if o.DCTScale != prev.DCTScale && (w <= 0 || h <= 0 || o.decodeShift(w, h) != prev.decodeShift(w, h)) {
		return false
	}
	if o.DCTVersion != prev.DCTVersion && (w <= 0 || h <= 0 || o.decodeShift(w, h) > 0 || prev.decodeShift(w, h) > 0) {
		return false
	}
	return o.Global == prev.Global && o.NoSIFT == prev.NoSIFT && o.SIFT.SameFeatures(prev.SIFT, w, h)
}

// decodeShift is the DCT-domain reduction (ingest.Luma.Shift) o decodes
// a w×h JPEG at.
func (o Options) decodeShift(w, h int) int {
	if !o.DCTScale || o.Global {
		return 0
	}
	return ingest.LumaShift(w, h, o.SIFT.MaxSide)
}

// ReadFunc returns the bytes of the file at uri (local or gs://).
type ReadFunc func(ctx context.Context, uri string) ([]byte, error)

// Describer describes images one at a time with reusable buffers; it is
// not safe for concurrent use: give each goroutine its own.
type Describer struct {
	opt  Options
	read ReadFunc
	syn  *synthetic.Generator
	sift *sift.Extractor
	glob *global.Extractor
}

// NewDescriber returns a Describer for opt that reads images with read.
func NewDescriber(opt Options, read ReadFunc) (*Describer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	d := &Describer{opt: opt, read: read}
	if opt.Synthetic.N > 0 {
		g, err := synthetic.NewGenerator(opt.Synthetic)
		if err != nil {
			return nil, err
		}
		d.syn = g
		return d, nil
	}
	if !opt.NoSIFT {
		ex, err := sift.NewExtractor(opt.SIFT)
		if err != nil {
			return nil, err
		}
		d.sift = ex
	}
	if opt.Global {
		d.glob = global.NewExtractor()
	}
	return d, nil
}

// Describe reads, decodes and describes one image. On failure it returns a
// dead letter naming the stage and the reason instead. The features'
// Content is the identity of the bytes read (formats.ContentOf), or the
// synthetic image's (synthetic.Spec.Content).
//
// A panic while decoding or extracting is a bug, but it is one image's bug:
// it becomes that image's dead letter, with the panic as the reason, and
// the Describer is rebuilt, since its buffers may be half written.
func (d *Describer) Describe(ctx context.Context, img formats.Image) (feat formats.Features, dead *formats.DeadLetter) {
	feat, _, dead = d.DescribeUnless(ctx, img, nil)
	return feat, dead
}

// Known reports whether the features of the image with this id, made from
// content of this identity, are at hand already, so that the image need
// not be described again.
type Known func(id, content string) bool

// DescribeUnless is Describe, but first finds the identity of the image's
// content (reading its bytes, which are then described from memory: no
// file is read twice) and, if known reports true for it, returns features
// holding only the id and Content instead of describing the image: carried
// reports that. A nil known describes every image.
func (d *Describer) DescribeUnless(ctx context.Context, img formats.Image, known Known) (feat formats.Features, carried bool, dead *formats.DeadLetter) {
	fail := func(stage string, err error) (formats.Features, bool, *formats.DeadLetter) {
		return formats.Features{}, false, &formats.DeadLetter{ImageID: img.ImageID, URI: img.URI, Stage: stage, Reason: err.Error()}
	}
	defer func() {
		if p := recover(); p != nil {
			if fresh, err := NewDescriber(d.opt, d.read); err == nil {
				*d = *fresh
			}
			feat, carried, dead = fail("describe", fmt.Errorf("panic: %v", p))
		}
	}()
	if d.syn != nil {
		content := d.opt.Synthetic.Content(img)
		if known != nil && known(img.ImageID, content) {
			return formats.Features{ImageID: img.ImageID, Content: content}, true, nil
		}
		f, err := d.syn.Features(img)
		if err != nil {
			return fail("synthetic", err)
		}
		return f, false, nil
	}
	data, err := d.read(ctx, img.URI)
	if err != nil {
		return fail("read", err)
	}
	content := formats.ContentOf(data)
	if known != nil && known(img.ImageID, content) {
		return formats.Features{ImageID: img.ImageID, Content: content}, true, nil
	}
	feat, dead = d.describe(img, data)
	feat.Content = content
	return feat, false, dead
}

// Decode decodes an image's bytes as a Describer with o does: in colour
// at full size for global features (ingest.Decoder.DecodeFull), else for
// SIFT alone, which reads grey, a JPEG's luma plane
// (ingest.Decoder.DecodeLuma), at full size or, with DCTScale, DCT-domain
// scaled toward SIFT.MaxSide, whose pixels are not the area downscale of
// the full decode's.
func (o Options) Decode(data []byte) (ingest.Luma, error) {
	dec := ingest.Decoder{MaxPixels: o.MaxPixels, ReducedIDCT: o.DCTVersion == 0}
	switch {
	case o.Global:
		return dec.DecodeFull(data)
	case o.DCTScale:
		return dec.DecodeLuma(data, o.SIFT.MaxSide)
	default:
		return dec.DecodeLuma(data, 0)
	}
}

// describe decodes and describes the bytes data of img.
func (d *Describer) describe(img formats.Image, data []byte) (feat formats.Features, dead *formats.DeadLetter) {
	fail := func(stage string, err error) (formats.Features, *formats.DeadLetter) {
		return formats.Features{}, &formats.DeadLetter{ImageID: img.ImageID, URI: img.URI, Stage: stage, Reason: err.Error()}
	}
	luma, err := d.opt.Decode(data)
	if err != nil {
		return fail("decode", err)
	}
	defer luma.Release()
	feat = formats.Features{ImageID: img.ImageID, Label: img.Label, Tags: img.Tags, Width: int32(luma.Width), Height: int32(luma.Height)}
	if d.sift != nil {
		kps, desc, err := d.sift.ExtractImage(context.Background(), luma.Image, luma.Width, luma.Height)
		if err != nil {
			return fail("sift", err)
		}
		feat.X = make([]float32, len(kps))
		feat.Y = make([]float32, len(kps))
		feat.Scale = make([]float32, len(kps))
		feat.Angle = make([]float32, len(kps))
		feat.Descriptors = make([][]byte, len(kps))
		for i, kp := range kps {
			feat.X[i], feat.Y[i], feat.Scale[i], feat.Angle[i] = kp.X, kp.Y, kp.Scale, kp.Angle
			feat.Descriptors[i] = desc[i*formats.DescriptorSize : (i+1)*formats.DescriptorSize : (i+1)*formats.DescriptorSize]
		}
	}
	if d.glob != nil {
		g, err := d.glob.Extract(luma.Image)
		if err != nil {
			return fail("global", err)
		}
		feat.Colour, feat.Edge, feat.Gabor, feat.LBP, feat.GIST = g[0], g[1], g[2], g[3], g[4]
	}
	return feat, nil
}

// Result is one image's outcome: its features, or a dead letter.
type Result struct {
	Features formats.Features
	// Carried reports that Features holds only the id and Content: the
	// image's features were known (DescribeUnless).
	Carried bool
	Dead    *formats.DeadLetter
	// Millis is the time reading, decoding and describing took.
	Millis int64
}

// DescribeAll describes images with a pool of workers goroutines, each with
// its own Describer, and hands every result to out in the order of images,
// from the calling goroutine, so that a caller can stream them to a file.
// At most window results (at least workers) are made ahead of the earliest
// unfinished image: a slow image holds the pool back instead of letting
// finished features pile up, so memory is bounded by window, not by the
// number of images. The images known reports come out carried, not
// described (DescribeUnless). An error from out, or a Describer that cannot
// be made, stops the work; DescribeAll returns it once every goroutine has
// stopped. It is the unit of work of the Beam transform, exported so that
// a benchmark can time the same work without a runner.
func DescribeAll(ctx context.Context, opt Options, read ReadFunc, images []formats.Image, known Known, workers, window int, out func(Result) error) error {
	workers = max(workers, 1)
	window = max(window, workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type done struct {
		i int
		r Result
	}
	ahead := make(chan struct{}, window) // a token per image started and not yet handed out
	jobs := make(chan int)
	results := make(chan done, window)
	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		err     error
	)
	fail := func(e error) {
		errOnce.Do(func() { err = e })
		cancel()
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, derr := NewDescriber(opt, read)
			if derr != nil {
				fail(derr)
				for range jobs {
				}
				return
			}
			for i := range jobs {
				start := time.Now()
				feat, carried, dead := d.DescribeUnless(ctx, images[i], known)
				results <- done{i, Result{Features: feat, Carried: carried, Dead: dead, Millis: time.Since(start).Milliseconds()}}
			}
		}()
	}
	go func() {
		defer close(jobs)
		for i := range images {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(results)
	}()
	pending := make(map[int]Result, window)
	next := 0
	for d := range results {
		pending[d.i] = d.r
		for {
			r, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-ahead
			if ctx.Err() == nil {
				if oerr := out(r); oerr != nil {
					fail(oerr)
				}
			}
		}
	}
	if err == nil && next < len(images) {
		// Cancelled from outside: the images not handed out are not described.
		err = context.Cause(ctx)
	}
	return err
}
