// Package describebeam is the Beam wrapper of package describe: it reads
// the image list part by part, describes each part with a pool of goroutines, writes
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

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*describeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Features)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
}

// Name is the name of the features output: its parts are
// formats.ShardName(Name, p, parts) under the output directory.
const Name = "features"

// Extract describes the images of every part of the image list
// (PCollection<formats.Part>, as ingestbeam.Images writes them) and writes
// the features of the images of part p of P, sorted by image id, to
// dir/features-p-of-P.parquet. It returns the parts written
// (PCollection<formats.Part>, one per part with an image described); an
// image that cannot be read, decoded or described becomes a dead letter
// (PCollection<formats.DeadLetter>) with the reason, and the others go on.
func Extract(s beam.Scope, imageParts beam.PCollection, opt describe.Options, dir string) (parts, dead beam.PCollection) {
	s = s.Scope("describe.Extract")
	return beam.ParDo2(s, &describeFn{Opt: opt, Dir: dir}, imageParts)
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

func (f *describeFn) ProcessElement(ctx context.Context, in formats.Part, emit func(formats.Part), emitDead func(formats.DeadLetter)) error {
	start := time.Now()
	batch, err := fileio.ReadFile[formats.Image](ctx, in.Path)
	if err != nil {
		return fmt.Errorf("describe: part %d: %w", in.Part, err)
	}
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
	path := fileio.Join(f.Dir, formats.ShardName(Name, in.Part, in.Parts))
	if err := fileio.WriteFile(ctx, path, feats); err != nil {
		return fmt.Errorf("describe: part %d: %w", in.Part, err)
	}
	f.parts.Inc(ctx, 1)
	emit(formats.Part{Name: Name, Part: in.Part, Parts: in.Parts, Path: path, Rows: int64(len(feats)), Keypoints: keypoints, Inputs: int64(len(batch))}.Timed(start))
	return nil
}
