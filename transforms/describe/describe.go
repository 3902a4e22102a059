// Package siftbeam is the Beam wrapper of package sift: it reads and decodes
// each image, extracts SIFT keypoints and descriptors, and turns every
// failure into a dead letter.
package siftbeam

import (
	"context"
	"fmt"
	"hash/fnv"
	"reflect"
	"runtime"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/sift"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*batchKeyFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*extractFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Features)(nil)).Elem())
}

// Options configures extraction.
type Options struct {
	SIFT sift.Options
	// MaxPixels refuses images whose header declares more pixels, before
	// decoding them (0: no limit).
	MaxPixels int64
	// Batches is the number of groups images are spread over. Each group is
	// extracted by a pool of goroutines, one per CPU, so a runner that hands
	// a worker one large bundle (Prism does) still uses every core.
	Batches int
}

// DefaultOptions returns OpenCV-like SIFT settings, a 100-megapixel limit
// and 64 batches.
func DefaultOptions() Options {
	return Options{SIFT: sift.DefaultOptions(), MaxPixels: 100_000_000, Batches: 64}
}

// Extract reads every image, decodes it and extracts its SIFT features.
// An image that cannot be read, decoded or described becomes a dead letter
// with the reason; the others go on.
func Extract(s beam.Scope, images beam.PCollection, opt Options) (features, dead beam.PCollection) {
	s = s.Scope("sift.Extract")
	if opt.Batches <= 0 {
		opt.Batches = 1
	}
	keyed := beam.ParDo(s, &batchKeyFn{Batches: opt.Batches}, images)
	grouped := beam.GroupByKey(s, keyed)
	return beam.ParDo2(s, &extractFn{Opt: opt}, grouped)
}

type batchKeyFn struct{ Batches int }

func (f *batchKeyFn) ProcessElement(img formats.Image) (int, formats.Image) {
	h := fnv.New32a()
	h.Write([]byte(img.ImageID))
	return int(h.Sum32() % uint32(f.Batches)), img
}

type extractFn struct {
	Opt Options

	images, keypoints, failed beam.Counter
	millis                    beam.Distribution
}

func (f *extractFn) Setup() error {
	if err := f.Opt.SIFT.Validate(); err != nil {
		return fmt.Errorf("sift options: %w", err)
	}
	f.images = beam.NewCounter("sift", "images")
	f.keypoints = beam.NewCounter("sift", "keypoints")
	f.failed = beam.NewCounter("sift", "dead_letters")
	f.millis = beam.NewDistribution("sift", "extract_ms")
	return nil
}

type result struct {
	feat   formats.Features
	dead   *formats.DeadLetter
	millis int64
}

func (f *extractFn) ProcessElement(ctx context.Context, _ int, iter func(*formats.Image) bool, emit func(formats.Features), emitDead func(formats.DeadLetter)) error {
	// The group's records are small (ids and URIs); draining them first keeps
	// the runner's iterator, like the emitters and metrics, on this goroutine.
	var batch []formats.Image
	var img formats.Image
	for iter(&img) {
		batch = append(batch, img)
		img = formats.Image{}
	}
	jobs := make(chan formats.Image)
	results := make(chan result)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex, err := sift.NewExtractor(f.Opt.SIFT)
			if err != nil {
				panic(err) // Validate in Setup has already accepted these options.
			}
			var gray *sift.Image
			for img := range jobs {
				results <- f.one(ctx, ex, &gray, img)
			}
		}()
	}
	go func() {
		for _, img := range batch {
			jobs <- img
		}
		close(jobs)
		wg.Wait()
		close(results)
	}()
	// Emitters are not safe for concurrent use: only this goroutine emits.
	for r := range results {
		if r.dead != nil {
			log.Warnf(ctx, "sift: dead letter %s (%s): %s: %s", r.dead.ImageID, r.dead.URI, r.dead.Stage, r.dead.Reason)
			f.failed.Inc(ctx, 1)
			emitDead(*r.dead)
			continue
		}
		f.millis.Update(ctx, r.millis)
		f.images.Inc(ctx, 1)
		f.keypoints.Inc(ctx, int64(len(r.feat.X)))
		emit(r.feat)
	}
	return nil
}

// one extracts the features of a single image; gray is the worker's
// reusable grayscale buffer.
//
// A panic while decoding or extracting is a bug, but it is one image's bug:
// it becomes that image's dead letter, with the panic as the reason, and the
// job goes on.
func (f *extractFn) one(ctx context.Context, ex *sift.Extractor, gray **sift.Image, img formats.Image) (res result) {
	fail := func(stage string, err error) result {
		return result{dead: &formats.DeadLetter{ImageID: img.ImageID, URI: img.URI, Stage: stage, Reason: err.Error()}}
	}
	defer func() {
		if p := recover(); p != nil {
			res = fail("sift", fmt.Errorf("panic: %v", p))
		}
	}()
	start := time.Now()
	data, err := formats.ReadBytes(ctx, img.URI)
	if err != nil {
		return fail("read", err)
	}
	decoded, _, err := ingest.Decode(data, f.Opt.MaxPixels)
	if err != nil {
		return fail("decode", err)
	}
	*gray = sift.FromImage(decoded, *gray)
	kps, desc := ex.Extract(*gray)
	out := formats.Features{
		ImageID:     img.ImageID,
		Label:       img.Label,
		Width:       int32((*gray).Width),
		Height:      int32((*gray).Height),
		X:           make([]float32, len(kps)),
		Y:           make([]float32, len(kps)),
		Scale:       make([]float32, len(kps)),
		Angle:       make([]float32, len(kps)),
		Descriptors: make([][]byte, len(kps)),
	}
	for i, kp := range kps {
		out.X[i], out.Y[i], out.Scale[i], out.Angle[i] = kp.X, kp.Y, kp.Scale, kp.Angle
		out.Descriptors[i] = desc[i*formats.DescriptorSize : (i+1)*formats.DescriptorSize : (i+1)*formats.DescriptorSize]
	}
	return result{feat: out, millis: time.Since(start).Milliseconds()}
}
