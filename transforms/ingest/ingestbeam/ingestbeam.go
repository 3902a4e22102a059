// Package ingestbeam is the Beam wrapper of package ingest: it lists the
// pipeline's input — a labels CSV or a directory, local or gs://, or a
// synthetic corpus — and writes the image list in parts, from inside the
// DoFn, so that only the parts' small formats.Part records travel on: on
// Prism every collection between stages lives in memory, and a million
// image records held there, reshuffled and grouped, cost gigabytes.
package ingestbeam

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

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
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
}

// Name is the name of the image list output: its parts are
// formats.ShardName(Name, p, parts) under the output directory.
const Name = "images"

// Images lists the images named by input: a file ending in .csv is a labels
// CSV read with cols (paths relative to the CSV's directory); anything else
// is a directory whose image files are taken, labelled by their parent
// directory's name. The listing happens when the pipeline runs, not when it
// is built. The list is written in parts of about partImages images to dir
// (WriteParts), and the parts are returned (PCollection<formats.Part>,
// spread over workers for the expensive per-image stages). Rows that cannot
// be used come out as dead letters; files named under more than one id are
// logged, and counted in sharedPaths (a single-element PCollection<int>).
// An input without a single usable image fails the pipeline: every later
// stage would run on nothing.
func Images(s beam.Scope, input string, cols ingest.Columns, partImages int, dir string) (parts, dead, sharedPaths beam.PCollection) {
	return ImagesFrom(s, input, cols, partImages, 0, dir)
}

// ImagesFrom is Images in an incremental run whose previous run wrote
// prevParts parts (0: none, which is Images): the list is written in
// formats.PartsFrom(prevParts, images, partImages) parts, a multiple of
// prevParts, so that this run's part p holds only images that were in the
// previous run's part p mod prevParts, if they were in it at all.
func ImagesFrom(s beam.Scope, input string, cols ingest.Columns, partImages, prevParts int, dir string) (parts, dead, sharedPaths beam.PCollection) {
	s = s.Scope("ingest.Images")
	parts, dead, sharedPaths = beam.ParDo3(s, &listFn{Input: input, Cols: cols, PartImages: partImages, PrevParts: prevParts, Dir: dir}, beam.Impulse(s))
	return beam.Reshuffle(s, parts), dead, sharedPaths
}

type listFn struct {
	Input      string
	Cols       ingest.Columns
	PartImages int
	PrevParts  int
	Dir        string
}

func (f *listFn) ProcessElement(ctx context.Context, _ []byte, emit func(formats.Part), emitDead func(formats.DeadLetter), emitShared func(int)) error {
	start := time.Now()
	images, dead, skipped, err := list(ctx, f.Input, f.Cols)
	if err != nil {
		return err
	}
	if skipped != "" {
		log.Warnf(ctx, "ingest: %s: %s", f.Input, skipped)
	}
	what := "file"
	if isLabelsCSV(f.Input) {
		what = "row"
	}
	if len(images) == 0 {
		return noImages(f.Input, what, dead)
	}
	for _, d := range dead {
		log.Warn(ctx, refusedLine(what, d))
		emitDead(d)
	}
	shared := ingest.SharedPaths(images)
	for _, sp := range shared {
		log.Warnf(ctx, "ingest: %s is named by %d image ids (%s): it is described once per id", sp.URI, len(sp.IDs), strings.Join(sp.IDs, ", "))
	}
	beam.NewCounter("ingest", "duplicate_paths").Inc(ctx, int64(len(shared)))
	emitShared(len(shared))
	n := len(images)
	np := formats.Parts(int64(n), f.PartImages)
	if f.PrevParts > 0 {
		np = formats.PartsFrom(f.PrevParts, int64(n), f.PartImages)
	}
	parts, err := WritePartsIn(ctx, images, np, f.Dir)
	if err != nil {
		return err
	}
	for _, p := range parts {
		p.StartMillis = start.UnixMilli()
		emit(p)
	}
	beam.NewCounter("ingest", "images_listed").Inc(ctx, int64(n))
	log.Infof(ctx, "ingest: %d images from %s in %d parts, %d refused", n, f.Input, len(parts), len(dead))
	return nil
}

// WriteParts spreads images over P = ⌈len(images)/partImages⌉ parts, an
// image to part formats.ShardOf(id, P) — a hash, so that each part, and
// each training group made of parts, is a random subset of the corpus
// whatever the order of the input — and writes each non-empty part's
// images, sorted by id, to dir/images-p-of-P.parquet. It returns the parts
// written, in order. images is reordered, and its elements are released
// as their part is written.
func WriteParts(ctx context.Context, images []formats.Image, partImages int, dir string) ([]formats.Part, error) {
	return WritePartsIn(ctx, images, formats.Parts(int64(len(images)), partImages), dir)
}

// WritePartsIn is WriteParts into n parts.
func WritePartsIn(ctx context.Context, images []formats.Image, n int, dir string) ([]formats.Part, error) {
	part := func(img formats.Image) int { return formats.ShardOf(img.ImageID, n) }
	sort.Slice(images, func(i, j int) bool {
		if pi, pj := part(images[i]), part(images[j]); pi != pj {
			return pi < pj
		}
		return images[i].ImageID < images[j].ImageID
	})
	var out []formats.Part
	for lo := 0; lo < len(images); {
		p := part(images[lo])
		hi := lo
		for hi < len(images) && part(images[hi]) == p {
			hi++
		}
		start := time.Now()
		path := fileio.Join(dir, formats.ShardName(Name, p, n))
		if err := fileio.WriteFile(ctx, path, images[lo:hi]); err != nil {
			return nil, fmt.Errorf("ingest: part %d: %w", p, err)
		}
		out = append(out, formats.Part{Name: Name, Part: p, Parts: n, Path: path, Rows: int64(hi - lo), Inputs: int64(hi - lo)}.Timed(start))
		clear(images[lo:hi])
		lo = hi
	}
	return out, nil
}

// refusedLine is the log line of a row or file ("what") of the input
// refused at ingest: its reason, then the image id and file it names, if
// it names them (a duplicate row's dead letter has no id, a row of the
// wrong width neither).
func refusedLine(what string, d formats.DeadLetter) string {
	var of []string
	if d.ImageID != "" {
		of = append(of, fmt.Sprintf("image id %q", d.ImageID))
	}
	if d.URI != "" {
		of = append(of, "file "+d.URI)
	}
	line := "ingest: " + what + " refused, a dead letter: " + d.Reason
	if len(of) > 0 {
		line += " [" + strings.Join(of, ", ") + "]"
	}
	return line
}

// noImages is the error of an input that yields no image, with what was
// refused, if anything: rows or files ("what").
func noImages(input, what string, dead []formats.DeadLetter) error {
	if len(dead) == 0 {
		return fmt.Errorf("ingest: no images in %s", input)
	}
	first := dead[0].Reason
	if dead[0].URI != "" && what == "file" {
		first = dead[0].URI + ": " + first
	}
	return fmt.Errorf("ingest: no images in %s: all %d %ss were refused, the first because %s", input, len(dead), what, first)
}

// isLabelsCSV reports whether the input is a labels CSV (its name ends in
// .csv, in any case) rather than a folder of images.
func isLabelsCSV(input string) bool { return strings.HasSuffix(strings.ToLower(input), ".csv") }

// LabelsBase is the directory a labels CSV's relative paths are
// relative to: the CSV's own.
func LabelsBase(csv string) string {
	if strings.Contains(csv, "://") {
		return csv[:strings.LastIndex(csv, "/")+1]
	}
	return filepath.Dir(csv)
}

// List reads the labels CSV or lists the directory named by input, or
// lists the images of a synthetic corpus ("synthetic:N…", package
// synthetic).
func List(ctx context.Context, input string, cols ingest.Columns) ([]formats.Image, []formats.DeadLetter, error) {
	images, dead, _, err := list(ctx, input, cols)
	return images, dead, err
}

// list is List, with what a folder's listing did not take as images, by
// kind (ingest.FolderScan.Summary), if anything.
func list(ctx context.Context, input string, cols ingest.Columns) (images []formats.Image, dead []formats.DeadLetter, skipped string, err error) {
	if synthetic.IsInput(input) {
		spec, err := synthetic.Parse(input)
		if err != nil {
			return nil, nil, "", err
		}
		return spec.Images(), nil, "", nil
	}
	if isLabelsCSV(input) {
		// Streamed, as the job's start-up check (CheckInput)
		// reads it, rather than held whole beside the images.
		r, err := fileio.Open(ctx, input)
		if err != nil {
			return nil, nil, "", fmt.Errorf("ingest: %w", err)
		}
		defer r.Close()
		images, dead, err := ingest.ParseLabels(r, LabelsBase(input), cols)
		return images, dead, "", err
	}
	var scan ingest.FolderScan
	err = WalkFolder(ctx, input, func(f ingest.ListedFile) error {
		scan.Add(f)
		switch {
		case f.Image != nil:
			images = append(images, *f.Image)
		case f.Dead != nil:
			dead = append(dead, *f.Dead)
		}
		return nil
	})
	if err != nil {
		return nil, nil, "", err
	}
	sort.Slice(images, func(i, j int) bool { return images[i].ImageID < images[j].ImageID })
	return images, dead, scan.Summary(), nil
}

// walkBatch is how many files WalkFolder lists before it reads the heads
// of those that need it, together: a batch's reads overlap, and the batch
// is all it holds beyond what the listing does.
const walkBatch = 512

// WalkFolder lists the files under the folder input (local or gs://) and
// calls fn with what the job makes of each (ingest.ListFile), in listing
// order (by path). The files whose name does not say what they are
// (ingest.NeedsHead) have their first ingest.SniffBytes bytes read, a
// batch at a time (fileio.ReadHeads); the others are not read. A folder
// without files is an error, and so is an error of fn.
func WalkFolder(ctx context.Context, input string, fn func(ingest.ListedFile) error) error {
	var batch []string
	files := 0
	flush := func() error {
		var need []string
		for _, f := range batch {
			if ingest.NeedsHead(f) {
				need = append(need, f)
			}
		}
		heads, errs := fileio.ReadHeads(ctx, need, ingest.SniffBytes)
		k := 0
		for _, f := range batch {
			var head []byte
			var err error
			if ingest.NeedsHead(f) {
				head, err = heads[k], errs[k]
				k++
			}
			if err := fn(ingest.ListFile(input, f, head, err)); err != nil {
				return err
			}
		}
		files += len(batch)
		batch = batch[:0]
		return nil
	}
	add := func(f string) error {
		batch = append(batch, f)
		if len(batch) < walkBatch {
			return nil
		}
		return flush()
	}
	if strings.Contains(input, "://") {
		// Beam's file systems list a prefix whole.
		all, err := fileio.Glob(ctx, strings.TrimSuffix(input, "/")+"/**")
		if err != nil {
			return fmt.Errorf("ingest: list %s: %w", input, err)
		}
		for _, f := range all {
			if strings.HasSuffix(f, "/") {
				// A folder's placeholder object, which some tools make.
				continue
			}
			if err := add(f); err != nil {
				return err
			}
		}
	} else {
		err := filepath.WalkDir(input, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			return add(p)
		})
		if err != nil {
			return fmt.Errorf("ingest: list %s: %w", input, err)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if files == 0 {
		return fmt.Errorf("ingest: no files under %s", input)
	}
	return nil
}
