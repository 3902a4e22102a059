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
	// PartImages is the number of images of one part: the Beam transform
	// describes ⌈images/PartImages⌉ parts, each by a pool of goroutines,
	// one per CPU, and writes each part's features to a file of its own.
	// A worker holds one part's features at a time (about 128 MB at 1,000
	// SIFT keypoints an image), so it bounds memory, and the number of
	// parts, the work a cluster can spread, follows the corpus.
	PartImages int
}

// DefaultOptions returns OpenCV-like SIFT settings on images of at most
// 1,600 pixels a side, no global features, a 100-megapixel limit and
// 1,000 images a part.
func DefaultOptions() Options {
	o := Options{SIFT: sift.DefaultOptions(), MaxPixels: 100_000_000, PartImages: 1000}
	// SIFT's scratch grows with the pixel count (about 70 MB at 640×480 with
	// the input doubled) and web images come at any size: bound it.
	o.SIFT.MaxSide = 1600
	return o
}

// Validate reports options Extract cannot run with.
func (o Options) Validate() error {
	if o.NoSIFT && !o.Global {
		return fmt.Errorf("describe: neither SIFT nor global features asked for")
	}
	if o.Synthetic.N > 0 && (o.Global || o.NoSIFT) {
		return fmt.Errorf("describe: the synthetic corpus has SIFT-like descriptors only, no pixels for global features")
	}
	if o.PartImages < 1 {
		return fmt.Errorf("describe: %d images a part, want at least 1", o.PartImages)
	}
	if o.MaxPixels < 0 {
		return fmt.Errorf("describe: negative pixel limit %d", o.MaxPixels)
	}
	return o.SIFT.Validate()
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
	gray *sift.Image
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

// describe decodes and describes the bytes data of img.
func (d *Describer) describe(img formats.Image, data []byte) (feat formats.Features, dead *formats.DeadLetter) {
	fail := func(stage string, err error) (formats.Features, *formats.DeadLetter) {
		return formats.Features{}, &formats.DeadLetter{ImageID: img.ImageID, URI: img.URI, Stage: stage, Reason: err.Error()}
	}
	decoded, _, err := ingest.Decode(data, d.opt.MaxPixels)
	if err != nil {
		return fail("decode", err)
	}
	b := decoded.Bounds()
	feat = formats.Features{ImageID: img.ImageID, Label: img.Label, Tags: img.Tags, Width: int32(b.Dx()), Height: int32(b.Dy())}
	if d.sift != nil {
		d.gray = sift.FromImage(decoded, d.gray)
		kps, desc := d.sift.Extract(d.gray)
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
		g, err := d.glob.Extract(decoded)
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
// its own Describer, and hands every result to out from those goroutines;
// it returns when all are done. It is the unit of work of the Beam
// transform, exported so that a benchmark can time the same work without a
// runner.
func DescribeAll(ctx context.Context, opt Options, read ReadFunc, images []formats.Image, workers int, out func(Result), fail func(error)) {
	DescribeAllUnless(ctx, opt, read, images, nil, workers, out, fail)
}

// DescribeAllUnless is DescribeAll with DescribeUnless: the images known
// reports come out carried, not described.
func DescribeAllUnless(ctx context.Context, opt Options, read ReadFunc, images []formats.Image, known Known, workers int, out func(Result), fail func(error)) {
	jobs := make(chan formats.Image)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := NewDescriber(opt, read)
			if err != nil {
				fail(err)
				for range jobs {
				}
				return
			}
			for img := range jobs {
				start := time.Now()
				feat, carried, dead := d.DescribeUnless(ctx, img, known)
				out(Result{Features: feat, Carried: carried, Dead: dead, Millis: time.Since(start).Milliseconds()})
			}
		}()
	}
	for _, img := range images {
		jobs <- img
	}
	close(jobs)
	wg.Wait()
}
