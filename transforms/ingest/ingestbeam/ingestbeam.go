// Package ingestbeam is the Beam wrapper of package ingest: it turns the
// pipeline's input — a labels CSV or a directory, local or gs:// — into a
// PCollection of formats.Image, spread over workers.
package ingestbeam

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/synthetic"
)

func init() {
	// Types are registered for reflection rather than with the generic
	// register.DoFnNxM helpers: those cost seconds of compile time per call,
	// and the per-element work here dwarfs reflective dispatch.
	beam.RegisterType(reflect.TypeOf((*listFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Image)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.DeadLetter)(nil)).Elem())
}

// Images lists the images named by input: a file ending in .csv is a labels
// CSV read with cols (paths relative to the CSV's directory); anything else
// is a directory whose image files are taken, labelled by their parent
// directory's name. The listing happens when the pipeline runs, not when it
// is built. Rows that cannot be used come out as dead letters; files named
// under more than one id are logged, and counted in sharedPaths (a
// single-element PCollection<int>). An input without a single usable image
// fails the pipeline: every later stage would run on nothing.
func Images(s beam.Scope, input string, cols ingest.Columns) (images, dead, sharedPaths beam.PCollection) {
	s = s.Scope("ingest.Images")
	images, dead, sharedPaths = beam.ParDo3(s, &listFn{Input: input, Cols: cols}, beam.Impulse(s))
	// The listing comes from one worker; spread it before the expensive
	// per-image stages.
	return beam.Reshuffle(s, images), dead, sharedPaths
}

type listFn struct {
	Input string
	Cols  ingest.Columns
}

func (f *listFn) ProcessElement(ctx context.Context, _ []byte, emit func(formats.Image), emitDead func(formats.DeadLetter), emitShared func(int)) error {
	images, dead, err := List(ctx, f.Input, f.Cols)
	if err != nil {
		return err
	}
	if len(images) == 0 {
		return noImages(f.Input, dead)
	}
	for _, d := range dead {
		log.Warnf(ctx, "ingest: %s (%s): %s", d.ImageID, d.URI, d.Reason)
		emitDead(d)
	}
	shared := ingest.SharedPaths(images)
	for _, sp := range shared {
		log.Warnf(ctx, "ingest: %s is named by %d image ids (%s): it is described once per id", sp.URI, len(sp.IDs), strings.Join(sp.IDs, ", "))
	}
	beam.NewCounter("ingest", "duplicate_paths").Inc(ctx, int64(len(shared)))
	emitShared(len(shared))
	for _, img := range images {
		emit(img)
	}
	beam.NewCounter("ingest", "images_listed").Inc(ctx, int64(len(images)))
	log.Infof(ctx, "ingest: %d images from %s, %d refused", len(images), f.Input, len(dead))
	return nil
}

// noImages is the error of an input that yields no image, with what was
// refused, if anything.
func noImages(input string, dead []formats.DeadLetter) error {
	if len(dead) == 0 {
		return fmt.Errorf("ingest: no images in %s", input)
	}
	return fmt.Errorf("ingest: no images in %s: all %d rows were refused, the first because %s", input, len(dead), dead[0].Reason)
}

// List reads the labels CSV or lists the directory named by input, or
// lists the images of a synthetic corpus ("synthetic:N…", package
// synthetic).
func List(ctx context.Context, input string, cols ingest.Columns) ([]formats.Image, []formats.DeadLetter, error) {
	if synthetic.IsInput(input) {
		spec, err := synthetic.Parse(input)
		if err != nil {
			return nil, nil, err
		}
		return spec.Images(), nil, nil
	}
	if strings.HasSuffix(strings.ToLower(input), ".csv") {
		data, err := fileio.ReadBytes(ctx, input)
		if err != nil {
			return nil, nil, fmt.Errorf("ingest: %w", err)
		}
		base := input[:strings.LastIndex(input, "/")+1]
		if !strings.Contains(input, "://") {
			base = filepath.Dir(input)
		}
		return ingest.ParseLabels(strings.NewReader(string(data)), base, cols)
	}
	var files []string
	if strings.Contains(input, "://") {
		var err error
		files, err = fileio.Glob(ctx, strings.TrimSuffix(input, "/")+"/**")
		if err != nil {
			return nil, nil, fmt.Errorf("ingest: list %s: %w", input, err)
		}
	} else {
		err := filepath.WalkDir(input, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("ingest: list %s: %w", input, err)
		}
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("ingest: no files under %s", input)
	}
	return ingest.FromListing(input, files), nil, nil
}
