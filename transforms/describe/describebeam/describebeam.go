// Package describebeam is the Beam wrapper of package describe: it spreads
// images over groups, describes each group with a pool of goroutines and
// turns every failure into a dead letter.
package describebeam

import (
	"context"
	"hash/fnv"
	"reflect"
	"runtime"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*batchKeyFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*describeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Features)(nil)).Elem())
}

// Extract reads every image of images (PCollection<formats.Image>) and
// returns its features (PCollection<formats.Features>); an image that
// cannot be read, decoded or described becomes a dead letter
// (PCollection<formats.DeadLetter>) with the reason, and the others go on.
func Extract(s beam.Scope, images beam.PCollection, opt describe.Options) (features, dead beam.PCollection) {
	s = s.Scope("describe.Extract")
	if opt.Batches <= 0 {
		opt.Batches = 1
	}
	keyed := beam.ParDo(s, &batchKeyFn{Batches: opt.Batches}, images)
	return beam.ParDo2(s, &describeFn{Opt: opt}, beam.GroupByKey(s, keyed))
}

type batchKeyFn struct{ Batches int }

func (f *batchKeyFn) ProcessElement(img formats.Image) (int, formats.Image) {
	h := fnv.New32a()
	h.Write([]byte(img.ImageID))
	return int(h.Sum32() % uint32(f.Batches)), img
}

type describeFn struct {
	Opt describe.Options

	images, keypoints, failed beam.Counter
	millis                    beam.Distribution
}

func (f *describeFn) Setup() error {
	if err := f.Opt.Validate(); err != nil {
		return err
	}
	f.images = beam.NewCounter("describe", "images")
	f.keypoints = beam.NewCounter("describe", "keypoints")
	f.failed = beam.NewCounter("describe", "dead_letters")
	f.millis = beam.NewDistribution("describe", "image_ms")
	return nil
}

func (f *describeFn) ProcessElement(ctx context.Context, _ int, iter func(*formats.Image) bool, emit func(formats.Features), emitDead func(formats.DeadLetter)) error {
	// The group's records are small (ids and URIs); draining them first keeps
	// the runner's iterator, like the emitters and metrics, on this goroutine.
	var batch []formats.Image
	var img formats.Image
	for iter(&img) {
		batch = append(batch, img)
		img = formats.Image{}
	}
	results := make(chan describe.Result)
	var firstErr error
	var once sync.Once
	go func() {
		describe.DescribeAll(ctx, f.Opt, fileio.ReadBytes, batch, runtime.GOMAXPROCS(0), func(r describe.Result) { results <- r }, func(err error) { once.Do(func() { firstErr = err }) })
		close(results)
	}()
	// Emitters are not safe for concurrent use: only this goroutine emits.
	for r := range results {
		if r.Dead != nil {
			log.Warnf(ctx, "describe: dead letter %s (%s): %s: %s", r.Dead.ImageID, r.Dead.URI, r.Dead.Stage, r.Dead.Reason)
			f.failed.Inc(ctx, 1)
			emitDead(*r.Dead)
			continue
		}
		f.millis.Update(ctx, r.Millis)
		f.images.Inc(ctx, 1)
		f.keypoints.Inc(ctx, int64(len(r.Features.X)))
		emit(r.Features)
	}
	return firstErr
}
