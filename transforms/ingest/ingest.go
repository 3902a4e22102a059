// Package ingest turns what a data engineer points the pipeline at — a labels
// CSV or a directory of images — into image records, and decodes image bytes
// defensively so that one bad file costs one dead letter, not the job.
package ingest

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/setting"
)

// TagSeparator separates tags inside the labels CSV's tags column.
const TagSeparator = "|"

// Columns names the labels CSV columns to read. The CSV must have a header
// row; other columns are ignored, so ETH-80's
// image_id,path,object,category reads with Label "object" or "category".
type Columns struct {
	ID, Path, Label, Tags string
}

// DefaultColumns are the columns of the documented CSV layout
// image_id,path,label[,tags].
func DefaultColumns() Columns {
	return Columns{ID: "image_id", Path: "path", Label: "label", Tags: "tags"}
}

// Validate reports a required column without a name (a *setting.Error):
// the id, the path and the label; a CSV without tags needs no Tags.
func (c Columns) Validate() error {
	for _, f := range []struct{ field, name string }{{"ID", c.ID}, {"Path", c.Path}, {"Label", c.Label}} {
		if strings.TrimSpace(f.name) == "" {
			return setting.Errorf("ingest", "Columns."+f.field, f.name, "a column's name, not empty")
		}
	}
	return nil
}

// ParseLabels reads a labels CSV. Relative paths are resolved against base,
// the directory that holds the CSV (local or gs://); a row without an id
// gets IDFromPath of its path as written. A row that cannot be used (not
// as many fields as the header, no path, an id already taken) becomes a
// dead letter rather than an error: a duplicate's dead letter names the
// kept row in its reason and carries no image id, so that it never matches
// the kept image; so does a row of the wrong width, whose fields cannot be
// told apart. Only a malformed CSV or a missing required column is an
// error.
func ParseLabels(r io.Reader, base string, cols Columns) ([]formats.Image, []formats.DeadLetter, error) {
	rows, err := newRowReader(r, cols)
	if err != nil {
		return nil, nil, err
	}
	var images []formats.Image
	var dead []formats.DeadLetter
	type kept struct {
		line int
		path string
	}
	seen := make(map[string]kept)
	for {
		row, err := rows.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		uri := resolve(base, row.path)
		switch {
		case row.wide:
			// Its id and path may be fragments of other fields: the
			// reason's line number is what finds the row.
			dead = append(dead, formats.DeadLetter{Stage: "ingest", Reason: row.refused})
			continue
		case row.refused != "":
			dead = append(dead, formats.DeadLetter{ImageID: row.id, URI: uri, Stage: "ingest", Reason: row.refused})
			continue
		}
		if k, dup := seen[row.id]; dup {
			// The refused row has no id of its own: giving it the kept
			// row's would hide the kept image from an anti-join of the
			// images with the dead letters.
			dead = append(dead, formats.DeadLetter{URI: uri, Stage: "ingest",
				Reason: fmt.Sprintf("labels line %d: duplicate image id %q; kept line %d (%s)", row.line, row.id, k.line, k.path)})
			continue
		}
		seen[row.id] = kept{row.line, row.path}
		img := formats.Image{ImageID: row.id, URI: uri, Label: row.label}
		if row.tags != "" {
			for _, tag := range strings.Split(row.tags, TagSeparator) {
				if tag = strings.TrimSpace(tag); tag != "" {
					img.Tags = append(img.Tags, tag)
				}
			}
		}
		images = append(images, img)
	}
	return images, dead, nil
}

// LabelsScan is what ScanLabels found in a labels CSV.
type LabelsScan struct {
	// Rows counts the rows below the header.
	Rows int64
	// Usable counts the rows ParseLabels would make images of, before
	// duplicate ids are refused; Labels counts them by label, the
	// unlabelled ones under "".
	Usable int64
	Labels map[string]int64
	// Refused counts the other rows, and FirstRefused is the first one's
	// reason; Wide counts those among them whose field count differs
	// from the header's, and FirstWide is the first one's reason.
	Refused, Wide           int64
	FirstRefused, FirstWide string
	// Inside counts the usable rows whose file the inside function given
	// to ScanLabels holds, and FirstInside is the first one's line and
	// file.
	Inside      int64
	FirstInside string
}

// ScanLabels reads a labels CSV as ParseLabels does, row by row, keeping
// only counts: its memory is bounded by the number of labels, not rows,
// so that a job can check a CSV of millions of rows before it starts. It
// does not refuse duplicate ids (that would keep every id), so Usable may
// count rows ParseLabels refuses. Its errors are ParseLabels'.
//
// If inside is not nil, it is asked of each usable row's file, resolved
// against base as ParseLabels resolves it, and the rows it holds are
// counted (Inside): a job checks that no file its CSV names is in the
// directory it writes.
func ScanLabels(r io.Reader, cols Columns, base string, inside func(uri string) bool) (LabelsScan, error) {
	rows, err := newRowReader(r, cols)
	if err != nil {
		return LabelsScan{}, err
	}
	s := LabelsScan{Labels: map[string]int64{}}
	for {
		row, err := rows.next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, err
		}
		s.Rows++
		switch {
		case row.wide:
			s.Wide++
			if s.FirstWide == "" {
				s.FirstWide = row.refused
			}
			fallthrough
		case row.refused != "":
			s.Refused++
			if s.FirstRefused == "" {
				s.FirstRefused = row.refused
			}
			continue
		}
		s.Usable++
		if inside != nil {
			if uri := resolve(base, row.path); inside(uri) {
				s.Inside++
				if s.FirstInside == "" {
					s.FirstInside = fmt.Sprintf("labels line %d: %s", row.line, uri)
				}
			}
		}
		if _, ok := s.Labels[row.label]; !ok {
			// The field shares its memory with the whole row.
			row.label = strings.Clone(row.label)
		}
		s.Labels[row.label]++
	}
}

// rowReader reads the rows of a labels CSV below its header.
type rowReader struct {
	cr    *csv.Reader
	at    columnsAt
	width int
}

// row is one row of a labels CSV, its fields trimmed; refused, if not
// "", is why it cannot be an image.
type row struct {
	line                  int
	id, path, label, tags string
	refused               string
	wide                  bool
}

func newRowReader(r io.Reader, cols Columns) (*rowReader, error) {
	cr := csv.NewReader(r)
	// Rows of another width are dead letters, not a failed CSV.
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	at, err := readHeader(cr, cols)
	if err != nil {
		return nil, err
	}
	return &rowReader{cr: cr, at: at, width: at.width}, nil
}

// next returns the next row, io.EOF after the last one, or the error of
// a malformed CSV.
func (rr *rowReader) next() (row, error) {
	rec, err := rr.cr.Read()
	if err == io.EOF {
		return row{}, err
	}
	if err != nil {
		// A *csv.ParseError names the line.
		return row{}, fmt.Errorf("ingest: labels CSV: %w", err)
	}
	// The line the row starts on: a quoted field may span lines.
	line, _ := rr.cr.FieldPos(0)
	field := func(i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	out := row{line: line, id: field(rr.at.id), path: field(rr.at.path), label: field(rr.at.label), tags: field(rr.at.tags)}
	if out.id == "" && out.path != "" {
		out.id = IDFromPath(out.path)
	}
	switch {
	case len(rec) != rr.width:
		// An unquoted comma in an id or a path shifts every field after
		// it: the row's path and label would be fragments.
		out.wide = true
		out.refused = fmt.Sprintf("labels line %d: %d fields, header has %d (quote a field that holds a comma)", line, len(rec), rr.width)
	case out.path == "":
		out.refused = fmt.Sprintf("labels line %d: empty path", line)
	}
	return out, nil
}

// MissingColumnError is the error of a labels CSV without a required
// column.
type MissingColumnError struct {
	Column string
	// Header is the CSV's header row.
	Header []string
}

func (e *MissingColumnError) Error() string {
	return fmt.Sprintf("ingest: labels CSV has no column %q (columns: %s)", e.Column, strings.Join(e.Header, ","))
}

// columnsAt holds the positions of the columns of Columns in a header; -1
// for an optional column the header lacks. width is the header's number
// of fields.
type columnsAt struct{ path, id, label, tags, width int }

// ErrEmptyLabels is the error of a labels CSV without even a header row: a
// file of no bytes, or of blank lines only.
var ErrEmptyLabels = errors.New("ingest: the labels CSV is empty: no header row")

func readHeader(cr *csv.Reader, cols Columns) (columnsAt, error) {
	header, err := cr.Read()
	if err == io.EOF {
		return columnsAt{}, ErrEmptyLabels
	}
	if err != nil {
		return columnsAt{}, fmt.Errorf("ingest: labels header: %w", err)
	}
	header = slices.Clone(header)
	at := make(map[string]int, len(header))
	for i, h := range header {
		at[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	col := func(name string, required bool) (int, error) {
		if name == "" {
			return -1, nil
		}
		i, ok := at[name]
		if !ok && required {
			return -1, &MissingColumnError{Column: name, Header: header}
		}
		if !ok {
			return -1, nil
		}
		return i, nil
	}
	out := columnsAt{width: len(header)}
	if out.path, err = col(cols.Path, true); err != nil {
		return out, err
	}
	if out.id, err = col(cols.ID, false); err != nil {
		return out, err
	}
	if out.label, err = col(cols.Label, true); err != nil {
		return out, err
	}
	out.tags, _ = col(cols.Tags, false)
	return out, nil
}

// imageExts are the file name endings of the formats Decode decodes.
var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true}

// FolderRule is how the job reads a folder of images, as --help states
// it (ListFile).
const FolderRule = "A folder's images are labelled by the name of the sub-folder that holds them " +
	"(photos/cat/1.jpg is labelled cat); an image directly in the folder has no label and is refused as a dead letter. " +
	"A file is an image by its content, not its name: an image of another format (HEIC, TIFF…) is refused as a dead letter, " +
	"and files that are not images are skipped; both are counted by kind"

// NeedsHead reports whether ListFile needs the start of file to tell what
// it is: files named as an image Decode reads are taken as images without
// being read (decoding, which reads them anyway, refuses one that is not),
// so that listing a folder of photos reads nothing of them; any other
// file is told by its content (Sniff).
func NeedsHead(file string) bool { return !imageExts[strings.ToLower(path.Ext(file))] }

// A ListedFile is what the job makes of a file found under an input
// folder: an image, a dead letter, or neither (skipped).
type ListedFile struct {
	Image *formats.Image
	Dead  *formats.DeadLetter
	// Kind names what the file is, for counts by kind: for a file
	// refused or skipped, why ("HEIC (unsupported image format)", "not
	// an image (text)"); for an image, "".
	Kind string
}

// ListFile says what the job makes of file, found under the input folder
// root (a local directory or a gs:// prefix), by FolderRule: an image's id
// is its path relative to root (IDFromPath), unique by construction, so
// that a/img1.jpg and b/img1.jpg are two images; its label is the name of
// the directory that holds it.
//
// An image directly in root is refused, not left unlabelled: a folder of
// labelled sub-folders is laid out as torchvision's ImageFolder and Keras
// read one, whose stray top-level files are not part of the data set, and
// an unlabelled image would be indexed and returned by searches without
// ever being evaluated. A data set that means to index unlabelled images
// says so with a labels CSV and an empty label.
//
// head and headErr are the start of the file (SniffBytes bytes) and
// the error of reading it, consulted only if NeedsHead(file).
func ListFile(root, file string, head []byte, headErr error) ListedFile {
	clean := func(p string) string {
		if strings.Contains(p, "://") {
			return strings.TrimSuffix(p, "/")
		}
		return path.Clean(filepath.ToSlash(p))
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(clean(file), clean(root)), "/")
	id := IDFromPath(rel)
	dead := func(kind, reason string) ListedFile {
		return ListedFile{Dead: &formats.DeadLetter{ImageID: id, URI: file, Stage: "ingest", Reason: reason}, Kind: kind}
	}
	if NeedsHead(file) {
		if headErr != nil {
			return dead("unreadable file", fmt.Sprintf("cannot read the file: %v", headErr))
		}
		switch kind, what := Sniff(head); kind {
		case KindEmpty:
			return ListedFile{Kind: what}
		case KindNotImage:
			return ListedFile{Kind: "not an image (" + what + ")"}
		case KindUnsupportedImage:
			return dead(what+" (unsupported image format)", unknownFormat(head).Error())
		}
	}
	dir := path.Dir(rel)
	if dir == "." {
		return dead("image directly in the input folder (no label)",
			"directly in the input folder, not in a sub-folder: a folder's images are labelled by the name of the sub-folder that holds them")
	}
	return ListedFile{Image: &formats.Image{ImageID: id, URI: file, Label: path.Base(dir)}}
}

// FolderScan counts what ListFile made of the files of a folder: memory
// bounded by the number of labels and kinds, not files, so that a job can
// check a folder of millions of images before it starts.
type FolderScan struct {
	Files, Images int64
	// Labels counts the images by label.
	Labels map[string]int64
	// Refused and Skipped count the files refused as dead letters, and
	// those skipped, by ListedFile.Kind.
	Refused, Skipped map[string]int64
	// FirstRefused are the reasons of the first few refused files, each
	// with its file.
	FirstRefused []string
}

// firstRefused is how many reasons FolderScan keeps.
const firstRefused = 3

// Add counts f.
func (s *FolderScan) Add(f ListedFile) {
	if s.Labels == nil {
		s.Labels, s.Refused, s.Skipped = map[string]int64{}, map[string]int64{}, map[string]int64{}
	}
	s.Files++
	switch {
	case f.Image != nil:
		s.Images++
		s.Labels[f.Image.Label]++
	case f.Dead != nil:
		s.Refused[f.Kind]++
		if len(s.FirstRefused) < firstRefused {
			s.FirstRefused = append(s.FirstRefused, fmt.Sprintf("%s: %s", f.Dead.URI, f.Dead.Reason))
		}
	default:
		s.Skipped[f.Kind]++
	}
}

// Summary says what of the folder was not taken as images, by kind, or ""
// if every file was: "refused 2 files as dead letters: 2 HEIC (unsupported
// image format); skipped 1 file: 1 not an image (text)".
func (s FolderScan) Summary() string {
	var parts []string
	if files, kinds := byKind(s.Refused); files != "" {
		parts = append(parts, "refused "+files+" as dead letters: "+kinds)
	}
	if files, kinds := byKind(s.Skipped); files != "" {
		parts = append(parts, "skipped "+files+": "+kinds)
	}
	return strings.Join(parts, "; ")
}

// byKind says "3 files" and "2 <kind>, 1 <kind>", most common kind first,
// or "" for no files.
func byKind(counts map[string]int64) (files, kinds string) {
	var total int64
	names := make([]string, 0, len(counts))
	for k, n := range counts {
		names = append(names, k)
		total += n
	}
	if total == 0 {
		return "", ""
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := counts[names[i]], counts[names[j]]; a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	var each []string
	for _, k := range names {
		each = append(each, fmt.Sprintf("%d %s", counts[k], k))
	}
	return count(total, "file", "files"), strings.Join(each, ", ")
}

// IDFromPath is the image id used when none is given: the image's path
// relative to the input (the directory listed, or the labels CSV's
// directory), slash-separated, extension kept — dropping it would make
// a.jpg and a.png one id — or the path as given when it is absolute or a
// URL. Ids are unique because paths are.
func IDFromPath(p string) string {
	if strings.Contains(p, "://") {
		return p
	}
	return path.Clean(filepath.ToSlash(p))
}

// SharedPath is a file that more than one image id names.
type SharedPath struct {
	URI string
	IDs []string
}

// SharedPaths returns the files that images name under more than one id,
// in URI order: each is described once per id, which a labels CSV may
// mean (two labellings of one photo) but is more often a mistake.
func SharedPaths(images []formats.Image) []SharedPath {
	byURI := map[string][]string{}
	for _, img := range images {
		byURI[img.URI] = append(byURI[img.URI], img.ImageID)
	}
	var out []SharedPath
	for uri, ids := range byURI {
		if len(ids) > 1 {
			sort.Strings(ids)
			out = append(out, SharedPath{URI: uri, IDs: ids})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// resolve is the file a labels row's path names: p itself if absolute or
// a URL (or empty), else p relative to base.
func resolve(base, p string) string {
	if p == "" || isAbs(p) {
		return p
	}
	return join(base, p)
}

func isAbs(p string) bool { return strings.Contains(p, "://") || path.IsAbs(filepath.ToSlash(p)) }

func join(base, rel string) string {
	if strings.Contains(base, "://") {
		return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(rel, "/")
	}
	return filepath.Join(base, filepath.FromSlash(rel))
}
