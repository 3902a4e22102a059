// Package ingest turns what a data engineer points the pipeline at — a labels
// CSV or a directory of images — into image records, and decodes image bytes
// defensively so that one bad file costs one dead letter, not the job.
package ingest

import (
	"encoding/csv"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/bowline/bowline/formats"
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
		uri := row.path
		if uri != "" && !isAbs(uri) {
			uri = join(base, uri)
		}
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
}

// ScanLabels reads a labels CSV as ParseLabels does, row by row, keeping
// only counts: its memory is bounded by the number of labels, not rows,
// so that a job can check a CSV of millions of rows before it starts. It
// does not refuse duplicate ids (that would keep every id), so Usable may
// count rows ParseLabels refuses. Its errors are ParseLabels'.
func ScanLabels(r io.Reader, cols Columns) (LabelsScan, error) {
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

// CheckHeader reads the header row of a labels CSV from r and reports a
// missing required column (the path and label columns of cols; the id and
// tags columns are optional), naming the columns the file has. It reads
// nothing past the header, so a job can check its input before it starts.
func CheckHeader(r io.Reader, cols Columns) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	_, err := readHeader(cr, cols)
	return err
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

func readHeader(cr *csv.Reader, cols Columns) (columnsAt, error) {
	header, err := cr.Read()
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

// imageExts are the file name endings FromListing takes for images.
var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true}

// FromListing makes image records from the files found under root (a local
// directory or a gs:// prefix): each file with an image extension becomes an
// image labelled with the name of the directory that holds it, unless that
// is root itself (unlabelled). An image's id is its path relative to root
// (IDFromPath), unique by construction: a/img1.jpg and b/img1.jpg are two
// images. Records come sorted by id.
func FromListing(root string, files []string) []formats.Image {
	clean := func(p string) string {
		if strings.Contains(p, "://") {
			return strings.TrimSuffix(p, "/")
		}
		return path.Clean(filepath.ToSlash(p))
	}
	root = clean(root)
	var images []formats.Image
	for _, f := range files {
		if !imageExts[strings.ToLower(path.Ext(f))] {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(clean(f), root), "/")
		label := ""
		if dir := path.Dir(rel); dir != "." {
			label = path.Base(dir)
		}
		images = append(images, formats.Image{ImageID: IDFromPath(rel), URI: f, Label: label})
	}
	sort.Slice(images, func(i, j int) bool { return images[i].ImageID < images[j].ImageID })
	return images
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

func isAbs(p string) bool { return strings.Contains(p, "://") || path.IsAbs(filepath.ToSlash(p)) }

func join(base, rel string) string {
	if strings.Contains(base, "://") {
		return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(rel, "/")
	}
	return filepath.Join(base, filepath.FromSlash(rel))
}
