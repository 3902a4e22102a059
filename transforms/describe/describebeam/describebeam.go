// Package describebeam is the Beam wrapper of package describe: it spreads
// images over parts, describes each part with a pool of goroutines, writes
// the part's features to a Parquet file of its own from inside the DoFn and
// turns every failure into a dead letter. Only the small formats.Part
// records travel on: on Prism every collection between stages lives in
// memory, and the descriptors of a million images do not fit there.
package describebeam

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*partKeyFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*describeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Features)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
}

// Name is the name of the features output: its parts are
// formats.ShardName(Name, p, parts) under the output directory.
const Name = "features"

// Extract describes every image of images (PCollection<formats.Image>)
// and writes the features of the images of part p, sorted by image id, to
// dir/features-p-of-P.parquet, P = ⌈images/opt.PartImages⌉ and an image's
// part formats.ShardOf(id, P). It returns the parts written
// (PCollection<formats.Part>, one per non-empty part); an image that cannot
// be read, decoded or described becomes a dead letter
// (PCollection<formats.DeadLetter>) with the reason, and the others go on.
func Extract(s beam.Scope, images beam.PCollection, opt describe.Options, dir string) (parts, dead beam.PCollection) {
	s = s.Scope("describe.Extract")
	n := stats.CountElms(s, images)
	keyed := beam.ParDo(s, &partKeyFn{PartImages: opt.PartImages}, images, beam.SideInput{Input: n})
	return beam.ParDo2(s, &describeFn{Opt: opt, Dir: dir}, beam.GroupByKey(s, keyed), beam.SideInput{Input: n})
}

type partKeyFn struct{ PartImages int }

func (f *partKeyFn) ProcessElement(img formats.Image, n int) (int, formats.Image) {
	return formats.ShardOf(img.ImageID, formats.Parts(int64(n), f.PartImages)), img
}

type describeFn struct {
	Opt describe.Options
	Dir string

	images, keypoints, failed, parts beam.Counter
	millis                           beam.Distribution
}

func (f *describeFn) Setup() error {
	if err := f.Opt.Validate(); err != nil {
		return err
	}
	f.images = beam.NewCounter("describe", "images")
	f.keypoints = beam.NewCounter("describe", "keypoints")
	f.failed = beam.NewCounter("describe", "dead_letters")
	f.parts = beam.NewCounter("describe", "parts_written")
	f.millis = beam.NewDistribution("describe", "image_ms")
	return nil
}

func (f *describeFn) ProcessElement(ctx context.Context, part int, iter func(*formats.Image) bool, n int, emit func(formats.Part), emitDead func(formats.DeadLetter)) error {
	// The group's records are small (ids and URIs); draining them first keeps
	// the runner's iterator, like the emitters and metrics, on this goroutine.
	start := time.Now()
	var batch []formats.Image
	var img formats.Image
	for iter(&img) {
		batch = append(batch, img)
		img = formats.Image{}
	}
	sort.Slice(batch, func(i, j int) bool { return batch[i].ImageID < batch[j].ImageID })
	results := make(chan describe.Result)
	var firstErr error
	var once sync.Once
	go func() {
		describe.DescribeAll(ctx, f.Opt, fileio.ReadBytes, batch, runtime.GOMAXPROCS(0), func(r describe.Result) { results <- r }, func(err error) { once.Do(func() { firstErr = err }) })
		close(results)
	}()
	// Emitters are not safe for concurrent use: only this goroutine emits.
	var feats []formats.Features
	var keypoints int64
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
		keypoints += int64(len(r.Features.X))
		feats = append(feats, r.Features)
	}
	if firstErr != nil {
		return firstErr
	}
	if len(feats) == 0 {
		return nil
	}
	sort.Slice(feats, func(i, j int) bool { return feats[i].ImageID < feats[j].ImageID })
	parts := formats.Parts(int64(n), f.Opt.PartImages)
	path := fileio.Join(f.Dir, formats.ShardName(Name, part, parts))
	if err := fileio.WriteFile(ctx, path, feats); err != nil {
		return fmt.Errorf("describe: part %d: %w", part, err)
	}
	f.parts.Inc(ctx, 1)
	emit(formats.Part{Name: Name, Part: part, Parts: parts, Path: path, Rows: int64(len(feats)), Keypoints: keypoints, Inputs: int64(len(batch))}.Timed(start))
	return nil
}
