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
// the directory that holds the CSV (local or gs://). A row that cannot be used
// (no path, duplicate id) becomes a dead letter rather than an error; only a
// malformed CSV or a missing required column is an error.
func ParseLabels(r io.Reader, base string, cols Columns) ([]formats.Image, []formats.DeadLetter, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("ingest: labels header: %w", err)
	}
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
			return -1, fmt.Errorf("ingest: labels CSV has no column %q (columns: %s)", name, strings.Join(header, ","))
		}
		if !ok {
			return -1, nil
		}
		return i, nil
	}
	iPath, err := col(cols.Path, true)
	if err != nil {
		return nil, nil, err
	}
	iID, err := col(cols.ID, false)
	if err != nil {
		return nil, nil, err
	}
	iLabel, err := col(cols.Label, true)
	if err != nil {
		return nil, nil, err
	}
	iTags, _ := col(cols.Tags, false)

	field := func(rec []string, i int) string {
		if i < 0 || i >= len(rec) {
			return ""
		}
		return strings.TrimSpace(rec[i])
	}
	var images []formats.Image
	var dead []formats.DeadLetter
	seen := make(map[string]bool)
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("ingest: labels line %d: %w", line, err)
		}
		p := field(rec, iPath)
		id := field(rec, iID)
		if id == "" && p != "" {
			id = IDFromPath(p)
		}
		uri := p
		if p != "" && !isAbs(p) {
			uri = join(base, p)
		}
		if p == "" {
			dead = append(dead, formats.DeadLetter{ImageID: id, Stage: "ingest", Reason: fmt.Sprintf("labels line %d: empty path", line)})
			continue
		}
		if seen[id] {
			dead = append(dead, formats.DeadLetter{ImageID: id, URI: uri, Stage: "ingest", Reason: fmt.Sprintf("labels line %d: duplicate image id %q", line, id)})
			continue
		}
		seen[id] = true
		img := formats.Image{ImageID: id, URI: uri, Label: field(rec, iLabel)}
		if t := field(rec, iTags); t != "" {
			for _, tag := range strings.Split(t, TagSeparator) {
				if tag = strings.TrimSpace(tag); tag != "" {
					img.Tags = append(img.Tags, tag)
				}
			}
		}
		images = append(images, img)
	}
	return images, dead, nil
}

// imageExts are the file name endings FromListing takes for images.
var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true}

// FromListing makes image records from the files found under root (a local
// directory or a gs:// prefix): each file with an image extension becomes an
// image labelled with the name of the directory that holds it, unless that
// is root itself (unlabelled). Records come sorted by id, and a second file
// with an id already taken becomes a dead letter.
func FromListing(root string, files []string) ([]formats.Image, []formats.DeadLetter) {
	sort.Strings(files)
	root = strings.TrimSuffix(root, "/")
	var images []formats.Image
	var dead []formats.DeadLetter
	seen := make(map[string]bool)
	for _, f := range files {
		if !imageExts[strings.ToLower(path.Ext(f))] {
			continue
		}
		id := IDFromPath(f)
		if seen[id] {
			dead = append(dead, formats.DeadLetter{ImageID: id, URI: f, Stage: "ingest", Reason: fmt.Sprintf("duplicate image id %q", id)})
			continue
		}
		seen[id] = true
		label := ""
		if dir := strings.TrimSuffix(strings.TrimSuffix(f, path.Base(f)), "/"); dir != root {
			label = path.Base(dir)
		}
		images = append(images, formats.Image{ImageID: id, URI: f, Label: label})
	}
	sort.Slice(images, func(i, j int) bool { return images[i].ImageID < images[j].ImageID })
	return images, dead
}

// IDFromPath is the image id used when none is given: the file name without
// its extension.
func IDFromPath(p string) string {
	b := path.Base(filepath.ToSlash(p))
	return strings.TrimSuffix(b, path.Ext(b))
}

func isAbs(p string) bool { return strings.Contains(p, "://") || path.IsAbs(filepath.ToSlash(p)) }

func join(base, rel string) string {
	if strings.Contains(base, "://") {
		return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(rel, "/")
	}
	return filepath.Join(base, filepath.FromSlash(rel))
}
