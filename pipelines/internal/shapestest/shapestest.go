// Package shapestest gives the jobs' tests the project's own labelled test
// set, the shapes (testdata/shapes, made by cmd/mktestdata), as rows they
// can edit and write back as another night's input: images left out,
// added or pointed at other files.
//
// It is imported only by the tests of the packages under pipelines/.
package shapestest

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"
)

// Labels is the path of the shapes labels CSV from a job's package
// directory (pipelines/<job>), where its tests run.
var Labels = filepath.Join("..", "..", "testdata", "shapes", "labels.csv")

// Rows returns the rows of the shapes labels CSV (header first), with
// absolute image paths, so that a copy written elsewhere still names the
// images.
func Rows(t testing.TB) [][]string {
	t.Helper()
	f, err := os.Open(Labels)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Abs(filepath.Dir(Labels))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		r[1] = filepath.Join(base, r[1])
	}
	return rows
}

// WriteCSV writes rows as the labels CSV dir/name and returns its path.
func WriteCSV(t testing.TB, dir, name string, rows [][]string) string {
	t.Helper()
	var b bytes.Buffer
	if err := csv.NewWriter(&b).WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
