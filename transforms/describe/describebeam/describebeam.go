// Package describebeam is the Beam wrapper of package describe: it reads
// the image list part by part, describes each part with a pool of goroutines, writes
// the part's features to a Parquet file of its own from inside the DoFn and
// turns every failure into a dead letter. Only the small formats.Part
// records travel on: on Prism every collection between stages lives in
// memory, and the descriptors of a million images do not fit there.
package describebeam

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/internal/slots"
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
	return ExtractFrom(s, imageParts, opt, dir, Previous{})
}

// Previous is the finished run an incremental run starts from: its
// features parts are read back so that unchanged images are not described
// again. The zero Previous is none.
type Previous struct {
	// Dir is the run's directory, local or gs://.
	Dir string
	// Parts is its part count; this run's must be a multiple of it
	// (formats.PartsFrom), so that part p reads only its part p mod Parts.
	Parts int
	// Features lists, ascending, the parts of which the run wrote a
	// features file (a part whose images all failed has none).
	Features []int
	// Describe are the options the run described its images with. An
	// image is carried only if this run's options give it the same
	// features (describe.Options.SameFeatures, by the size it was
	// described at), so a run may start from one described with another
	// MaxSide, doubling, DCTScale or DCTVersion.
	Describe describe.Options
}

// features returns the path of the features file of the previous run
// that holds the images of this run's part p, or "" if there is none.
func (pr Previous) features(p int) string {
	if pr.Dir == "" || pr.Parts < 1 {
		return ""
	}
	q := p % pr.Parts
	if _, ok := slices.BinarySearch(pr.Features, q); !ok {
		return ""
	}
	return fileio.Join(pr.Dir, formats.ShardName(Name, q, pr.Parts))
}

// ExtractFrom is Extract in an incremental run: an image whose id and
// content identity (formats.Features.Content: a hash of its bytes, or the
// synthetic image's settings) are those of a features row of prev, and
// whose features this run's options make the same as prev's did
// (Previous.Describe), is not decoded or described: its row is carried over
// instead, with the label
// and tags of this run's image list. Each features part written lists its
// carried images in formats.Part.Carried; the describe/images counter
// counts the images described, describe/carried those carried. Every
// image's bytes are still read, to hash them: a new file under an old id
// is described again.
func ExtractFrom(s beam.Scope, imageParts beam.PCollection, opt describe.Options, dir string, prev Previous) (parts, dead beam.PCollection) {
	s = s.Scope("describe.Extract")
	return beam.ParDo2(s, &describeFn{Opt: opt, Dir: dir, Prev: prev, Loads: opt.PartLoads}, imageParts)
}

type describeFn struct {
	Opt  describe.Options
	Dir  string
	Prev Previous
	// Loads is Opt.PartLoads, a field of its own: Beam serialises a DoFn
	// as JSON, and the options leave PartLoads out of theirs.
	Loads int

	images, carried, keypoints, failed, parts beam.Counter
	millis                                    beam.Distribution
}

// errNoRows stops the write of a part none of whose images was described:
// a part without rows has no file, as before.
var errNoRows = errors.New("no rows")

func (f *describeFn) Setup() error {
	if err := f.Opt.Validate(); err != nil {
		return err
	}
	f.images = beam.NewCounter("describe", "images")
	f.carried = beam.NewCounter("describe", "carried")
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
	// A part waits for its slot holding its image list only: the previous
	// run's features of the part and the new ones come after.
	release, err := slots.Acquire(ctx, "describe.part", f.Loads)
	defer release()
	if err != nil {
		return fmt.Errorf("describe: part %d: %w", in.Part, err)
	}
	prev, err := f.previous(ctx, in.Part, batch)
	if err != nil {
		return fmt.Errorf("describe: part %d: %w", in.Part, err)
	}
	var known describe.Known
	if len(prev) > 0 {
		// Read-only from here on, so the describing goroutines share it.
		known = func(id, content string) bool {
			old, ok := prev[id]
			return ok && content != "" && old.Content == content
		}
	}
	// The file's rows are in id order, written as the images are described
	// (DescribeAll hands results over in the order of batch): a worker
	// holds a row group of features, not the part's.
	sort.Slice(batch, func(i, j int) bool { return batch[i].ImageID < batch[j].ImageID })
	imgs := make(map[string]*formats.Image, len(batch))
	for i := range batch {
		imgs[batch[i].ImageID] = &batch[i]
	}
	var carried []string
	var keypoints, rows int64
	path := fileio.Join(f.Dir, formats.ShardName(Name, in.Part, in.Parts))
	err = fileio.WriteRowsOf(ctx, path, reflect.TypeFor[formats.Features](), func(write func(row any) error) error {
		err := describe.DescribeAll(ctx, f.Opt, fileio.ReadBytes, batch, known, runtime.GOMAXPROCS(0), 4*runtime.GOMAXPROCS(0), func(r describe.Result) error {
			row := r.Features
			switch {
			case r.Carried:
				// The carried row takes this run's label and tags: a labels
				// CSV may relabel an image without changing its bytes.
				img := imgs[row.ImageID]
				row = prev[row.ImageID]
				row.Label, row.Tags = img.Label, img.Tags
				f.carried.Inc(ctx, 1)
				carried = append(carried, row.ImageID)
			case r.Dead != nil:
				log.Warnf(ctx, "describe: dead letter %s (%s): %s: %s", r.Dead.ImageID, r.Dead.URI, r.Dead.Stage, r.Dead.Reason)
				f.failed.Inc(ctx, 1)
				emitDead(*r.Dead)
				return nil
			default:
				f.millis.Update(ctx, r.Millis)
				f.images.Inc(ctx, 1)
				f.keypoints.Inc(ctx, int64(len(row.X)))
			}
			keypoints += int64(len(row.X))
			rows++
			return write(row)
		})
		if err == nil && rows == 0 {
			return errNoRows
		}
		return err
	})
	if errors.Is(err, errNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("describe: part %d: %w", in.Part, err)
	}
	f.parts.Inc(ctx, 1)
	sort.Strings(carried)
	emit(formats.Part{Name: Name, Part: in.Part, Parts: in.Parts, Path: path, Rows: rows, Keypoints: keypoints, Inputs: int64(len(batch)), Carried: carried}.Timed(start))
	return nil
}

// previous returns the features rows of the previous run of the images
// of batch, this run's part p, by id, that this run may carry: those
// its part p mod Parts holds whose features the options would not change.
// A worker holds them with the part's new features, at most one part's
// worth in all, as in a full run.
func (f *describeFn) previous(ctx context.Context, p int, batch []formats.Image) (map[string]formats.Features, error) {
	path := f.Prev.features(p)
	if path == "" {
		return nil, nil
	}
	want := make(map[string]bool, len(batch))
	for _, img := range batch {
		want[img.ImageID] = true
	}
	out := map[string]formats.Features{}
	err := fileio.ReadEach(ctx, path, func(row *formats.Features) error {
		if want[row.ImageID] && row.Content != "" && f.Opt.SameFeatures(f.Prev.Describe, int(row.Width), int(row.Height)) {
			out[row.ImageID] = *row
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the previous run's features: %w", err)
	}
	return out, nil
}
