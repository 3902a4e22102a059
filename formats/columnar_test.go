package formats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// randomBoWs returns n bags of words with up to 2·mean postings (ascending
// word ids below vocab); every fifth bag and label is empty.
func randomBoWs(r *rand.Rand, n, mean, vocab int) []BoW {
	labels := []string{"", "cat", "dög", "a longer label, with a comma"}
	rows := make([]BoW, n)
	for i := range rows {
		b := BoW{ImageID: fmt.Sprintf("img-%05d", i), Label: labels[r.IntN(len(labels))]}
		if i%5 != 1 {
			k := min(r.IntN(2*mean+1), vocab)
			for _, w := range r.Perm(vocab)[:k] {
				b.WordIDs = append(b.WordIDs, uint32(w))
			}
			slices.Sort(b.WordIDs)
			for range k {
				b.Weights = append(b.Weights, r.Float32())
			}
		}
		if i%5 == 3 {
			b.Label = ""
		}
		rows[i] = b
	}
	return rows
}

// encodeWith writes rows with the repo's writer (Encode) and RowGroupBytes
// set to rowGroup, or, given parquet-go options, with parquet-go's writer
// configured as Encode's plus those options (small pages, data page v1).
func encodeWith[T any](t testing.TB, rows []T, rowGroup int64, opts ...parquet.WriterOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	if len(opts) == 0 {
		saved := RowGroupBytes
		RowGroupBytes = rowGroup
		defer func() { RowGroupBytes = saved }()
		if err := Encode(context.Background(), &buf, rows); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	schema, err := SchemaOf(reflect.TypeFor[T]())
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](&buf, append(writerOptions(schema), opts...)...)
	// Row by row, so that pages are cut as soon as they fill up.
	for i := range rows {
		if _, err := w.Write(rows[i : i+1]); err != nil {
			t.Fatal(err)
		}
		if i%300 == 299 {
			if err := w.Flush(); err != nil { // a new row group
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// layout counts a file's row groups and its most paged column chunk's pages.
func layout(t testing.TB, data []byte) (rowGroups, maxPages int) {
	t.Helper()
	f, err := openFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range f.RowGroups() {
		for _, c := range rg.ColumnChunks() {
			oi, err := c.OffsetIndex()
			if err != nil {
				t.Fatal(err)
			}
			maxPages = max(maxPages, oi.NumPages())
		}
	}
	return len(f.RowGroups()), maxPages
}

// readAll returns the rows of data as decodeRows (the general path) reads
// them, and as the columnar path reads them, failing if the columnar path
// does not take the file.
func readAll[T any](t *testing.T, data []byte) (general, columnar []T) {
	t.Helper()
	ctx := context.Background()
	f, err := openFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeRows(ctx, f, func(row *T) error { general = append(general, *row); return nil }); err != nil {
		t.Fatal(err)
	}
	ok, err := decodeColumnar(ctx, f, func(row *T) error { columnar = append(columnar, *row); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Fatal("the columnar path did not take a file of the repo's layout")
	}
	return general, columnar
}

// The columnar path reads exactly the rows the general path reads — empty
// lists as empty, non-nil slices, empty labels — from files of one row and
// of many rows over several row groups and pages, written by the repo's
// writer, with small pages and with data page v1; Decode and DecodeOf
// take it and give the same rows.
func TestDecodeColumnarBoW(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	many := randomBoWs(r, 1200, 600, 5000)
	cases := []struct {
		name string
		rows []BoW
		data []byte
		// the least row groups and pages per column chunk the file must
		// have for the case to test what it says
		rowGroups, pages int
	}{
		{name: "one row", rows: many[:1], data: encodeWith(t, many[:1], RowGroupBytes), rowGroups: 1, pages: 1},
		{name: "one empty row", rows: []BoW{{ImageID: "x"}}, data: encodeWith(t, []BoW{{ImageID: "x"}}, RowGroupBytes), rowGroups: 1, pages: 1},
		{name: "no row", rows: nil, data: encodeWith(t, []BoW{}, RowGroupBytes)},
		{name: "row groups and pages", rows: many, data: encodeWith(t, many, 1<<20), rowGroups: 3, pages: 2},
		{name: "small pages", rows: many[:500], data: encodeWith(t, many[:500], 0, parquet.PageBufferSize(4<<10)), rowGroups: 2, pages: 50},
		{name: "data page v1", rows: many[:500], data: encodeWith(t, many[:500], 0, parquet.PageBufferSize(8<<10), parquet.DataPageVersion(1)), rowGroups: 2, pages: 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if groups, pages := layout(t, c.data); groups < c.rowGroups || pages < c.pages {
				t.Fatalf("%d row groups, at most %d pages a column; the case needs %d and %d", groups, pages, c.rowGroups, c.pages)
			}
			general, columnar := readAll[BoW](t, c.data)
			if len(general) != len(c.rows) {
				t.Fatalf("the general path read %d rows of %d", len(general), len(c.rows))
			}
			if !reflect.DeepEqual(columnar, general) {
				for i := range min(len(columnar), len(general)) {
					if !reflect.DeepEqual(columnar[i], general[i]) {
						t.Fatalf("row %d: columnar %+v, general %+v", i, columnar[i], general[i])
					}
				}
				t.Fatalf("columnar read %d rows, general %d", len(columnar), len(general))
			}
			var decoded, decodedOf []BoW
			rd := bytes.NewReader(c.data)
			if err := Decode(context.Background(), rd, rd.Size(), func(b *BoW) error { decoded = append(decoded, *b); return nil }); err != nil {
				t.Fatal(err)
			}
			err := DecodeOf(context.Background(), rd, rd.Size(), reflect.TypeFor[BoW](), func(row any) error { decodedOf = append(decodedOf, row.(BoW)); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(decoded, general) || !reflect.DeepEqual(decodedOf, general) {
				t.Error("Decode or DecodeOf read other rows than the general path")
			}
		})
	}
}

// A row's slices are its own: rows kept by the caller are not overwritten
// by the rows read after them (the slices of one row do not share storage
// with another's or with parquet-go's page buffers).
func TestDecodeColumnarRowsOwnTheirSlices(t *testing.T) {
	rows := randomBoWs(rand.New(rand.NewPCG(3, 4)), 300, 200, 1000)
	data := encodeWith(t, rows, 0, parquet.PageBufferSize(4<<10))
	var kept []BoW
	rd := bytes.NewReader(data)
	if err := Decode(context.Background(), rd, rd.Size(), func(b *BoW) error { kept = append(kept, *b); return nil }); err != nil {
		t.Fatal(err)
	}
	// Read it again, scribbling over every row handed over.
	if err := Decode(context.Background(), rd, rd.Size(), func(b *BoW) error {
		for i := range b.WordIDs {
			b.WordIDs[i], b.Weights[i] = 1<<32-1, -1
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, b := range kept {
		want := rows[i]
		if len(want.WordIDs) == 0 {
			want.WordIDs, want.Weights = []uint32{}, []float32{}
		}
		if !reflect.DeepEqual(b, want) {
			t.Fatalf("kept row %d is %+v, want %+v", i, b, want)
		}
		if cap(b.WordIDs) != len(b.WordIDs) || cap(b.Weights) != len(b.Weights) {
			t.Fatalf("row %d: lists of capacity %d and %d for %d postings: they share storage", i, cap(b.WordIDs), cap(b.Weights), len(b.WordIDs))
		}
	}
}

// Geometry rows, whose uint16 lists are INT32 columns, read the same by
// both paths.
func TestDecodeColumnarGeometry(t *testing.T) {
	_, data := geometryFile(t, 2000)
	if groups, _ := layout(t, data); groups < 2 {
		t.Fatalf("%d row groups, want several", groups)
	}
	general, columnar := readAll[Geometry](t, data)
	if len(general) != 2000 || !reflect.DeepEqual(columnar, general) {
		t.Fatalf("columnar read %d rows, general %d, not the same", len(columnar), len(general))
	}
	var decodedOf []Geometry
	rd := bytes.NewReader(data)
	err := DecodeOf(context.Background(), rd, rd.Size(), reflect.TypeFor[Geometry](), func(row any) error { decodedOf = append(decodedOf, row.(Geometry)); return nil })
	if err != nil || !reflect.DeepEqual(decodedOf, general) {
		t.Errorf("DecodeOf read other rows than the general path (%v)", err)
	}
}

// Files of another layout than the row type's go the general way, which
// reads them as it always did: columns in another order, an optional
// column, a missing column (an older file), an extra column, a column of
// another type, dictionary-encoded columns.
func TestDecodeColumnarFallback(t *testing.T) {
	type reordered struct {
		Label   string    `parquet:"label"`
		ImageID string    `parquet:"image_id"`
		WordIDs []uint32  `parquet:"word_ids,list"`
		Weights []float32 `parquet:"weights,list"`
	}
	type optional struct {
		ImageID string    `parquet:"image_id"`
		Label   *string   `parquet:"label,optional"`
		WordIDs []uint32  `parquet:"word_ids,list"`
		Weights []float32 `parquet:"weights,list"`
	}
	type older struct {
		ImageID string    `parquet:"image_id"`
		WordIDs []uint32  `parquet:"word_ids,list"`
		Weights []float32 `parquet:"weights,list"`
	}
	type extra struct {
		ImageID string    `parquet:"image_id"`
		Label   string    `parquet:"label"`
		WordIDs []uint32  `parquet:"word_ids,list"`
		Weights []float32 `parquet:"weights,list"`
		Note    string    `parquet:"note"`
	}
	type wide struct {
		ImageID string    `parquet:"image_id"`
		Label   string    `parquet:"label"`
		WordIDs []int64   `parquet:"word_ids,list"`
		Weights []float32 `parquet:"weights,list"`
	}
	type dictionary struct {
		ImageID string    `parquet:"image_id,dict"`
		Label   string    `parquet:"label,dict"`
		WordIDs []uint32  `parquet:"word_ids,list" parquet-element:",dict"`
		Weights []float32 `parquet:"weights,list"`
	}
	bows := randomBoWs(rand.New(rand.NewPCG(5, 6)), 50, 20, 100)
	label := "l"
	var (
		rs []reordered
		op []optional
		ol []older
		ex []extra
		wi []wide
		di []dictionary
	)
	for _, b := range bows {
		rs = append(rs, reordered{b.Label, b.ImageID, b.WordIDs, b.Weights})
		op = append(op, optional{b.ImageID, &label, b.WordIDs, b.Weights})
		ol = append(ol, older{b.ImageID, b.WordIDs, b.Weights})
		ex = append(ex, extra{b.ImageID, b.Label, b.WordIDs, b.Weights, "n"})
		var w []int64
		for _, id := range b.WordIDs {
			w = append(w, int64(id))
		}
		wi = append(wi, wide{b.ImageID, b.Label, w, b.Weights})
		di = append(di, dictionary(b))
	}
	files := map[string][]byte{
		"reordered":  encodeWith(t, rs, RowGroupBytes),
		"optional":   encodeWith(t, op, RowGroupBytes),
		"older":      encodeWith(t, ol, RowGroupBytes),
		"extra":      encodeWith(t, ex, RowGroupBytes),
		"wide":       encodeWith(t, wi, RowGroupBytes),
		"dictionary": encodeWith(t, di, RowGroupBytes),
	}
	ctx := context.Background()
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			f, err := openFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			var general, decoded []BoW
			if err := decodeRows(ctx, f, func(b *BoW) error { general = append(general, *b); return nil }); err != nil {
				t.Fatal(err)
			}
			ok, err := decodeColumnar(ctx, f, func(*BoW) error { t.Fatal("the columnar path read a row"); return nil })
			if ok || err != nil {
				t.Fatalf("the columnar path took the file (%v)", err)
			}
			rd := bytes.NewReader(data)
			if err := Decode(ctx, rd, rd.Size(), func(b *BoW) error { decoded = append(decoded, *b); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(general) != len(bows) || !reflect.DeepEqual(decoded, general) {
				t.Errorf("Decode read %d rows, the general path %d: not the same", len(decoded), len(general))
			}
		})
	}
	// The dictionary file has BoW's very schema: only its encoding keeps it
	// from the columnar path.
	f, err := openFile(bytes.NewReader(files["dictionary"]), int64(len(files["dictionary"])))
	if err != nil {
		t.Fatal(err)
	}
	if bow, _ := columnarSchemas(); !parquet.EqualNodes(f.Schema(), bow) {
		t.Error("the dictionary-encoded file's schema is not BoW's: the case does not test the encoding check")
	}
}

// An error of the caller's function stops the read at once and comes back
// as it is, in the first row group and in a later one; a cancelled
// context stops it within a batch of rows.
func TestDecodeColumnarStops(t *testing.T) {
	rows := randomBoWs(rand.New(rand.NewPCG(7, 8)), 600, 50, 1000)
	data := encodeWith(t, rows, 0, parquet.PageBufferSize(4<<10))
	rd := bytes.NewReader(data)
	stop := errors.New("stop")
	for _, at := range []int{0, 450} {
		n := 0
		err := Decode(context.Background(), rd, rd.Size(), func(*BoW) error {
			if n == at {
				return stop
			}
			n++
			return nil
		})
		if err != stop || n != at {
			t.Errorf("stopping at row %d: %d rows, error %v; want the callback's error as it is", at, n, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	if err := Decode(ctx, rd, rd.Size(), func(*BoW) error { called = true; return nil }); !errors.Is(err, context.Canceled) || called {
		t.Errorf("cancelled: %v, rows read %v; want context.Canceled before any row", err, called)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	err := Decode(ctx, rd, rd.Size(), func(*BoW) error {
		n++
		if n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n > 10+decodeBatch {
		t.Errorf("cancelled at row 10: %v after %d rows; want context.Canceled within %d rows", err, n, decodeBatch)
	}
}

// fakePage is a page of a list column with the given levels and values.
type fakePage struct {
	parquet.Page
	rep, def []byte
	vals     []uint32
}

func (p *fakePage) RepetitionLevels() []byte       { return p.rep }
func (p *fakePage) DefinitionLevels() []byte       { return p.def }
func (p *fakePage) Data() encoding.Values          { return encoding.Uint32Values(p.vals) }
func (p *fakePage) Dictionary() parquet.Dictionary { return nil }
func (p *fakePage) NumValues() int64               { return int64(len(p.def)) }

// fakeChunk is a column chunk of fake pages.
type fakeChunk struct {
	parquet.ColumnChunk
	pages []parquet.Page
}

func (c *fakeChunk) Pages() parquet.Pages { return &fakePages{pages: c.pages} }

type fakePages struct{ pages []parquet.Page }

func (p *fakePages) ReadPage() (parquet.Page, error) {
	if len(p.pages) == 0 {
		return nil, io.EOF
	}
	page := p.pages[0]
	p.pages = p.pages[1:]
	return page, nil
}
func (p *fakePages) SeekToRow(int64) error { return errors.New("no seeking") }
func (p *fakePages) Close() error          { return nil }

// The list cursor cuts rows by their levels across pages: a list that goes
// on in the next page (as data page v1 allows), over several pages, empty
// lists at page ends and starts, and a page without levels; malformed
// levels are errors, never rows.
func TestListCursor(t *testing.T) {
	page := func(rep, def []byte, vals ...uint32) parquet.Page { return &fakePage{rep: rep, def: def, vals: vals} }
	chunk := &fakeChunk{pages: []parquet.Page{
		page([]byte{0, 1, 1, 0}, []byte{1, 1, 1, 1}, 1, 2, 3, 4), // [1 2 3] [4 …
		page([]byte{1, 1}, []byte{1, 1}, 5, 6),                   // … 5 6 …
		page(nil, nil),                                           // a page of no levels
		page([]byte{1, 0, 0}, []byte{1, 0, 1}, 7, 8),             // … 7] [] [8]
		page([]byte{0, 0, 1}, []byte{0, 1, 1}, 9, 10),            // [] [9 10]
	}}
	c := newListCursor(chunk, "l", uint32s, same[uint32])
	var got [][]uint32
	for range 6 {
		l, err := c.next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	want := [][]uint32{{1, 2, 3}, {4, 5, 6, 7}, {}, {8}, {}, {9, 10}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if _, err := c.next(); err == nil {
		t.Error("a row past the column's end read without error")
	}
	if err := c.close(); err != nil {
		t.Error(err)
	}

	for name, pages := range map[string][]parquet.Page{
		"continues an empty list": {page([]byte{0}, []byte{0}), page([]byte{1}, []byte{1}, 1)},
		"starts mid-list":         {page([]byte{1, 0}, []byte{1, 1}, 1, 2)},
		"empty list in a list":    {page([]byte{0, 1}, []byte{1, 0}, 1)},
		"values not levels":       {page([]byte{0, 1}, []byte{1, 1}, 1)},
		"levels not values":       {page([]byte{0}, []byte{1, 1}, 1, 2)},
	} {
		c := newListCursor(&fakeChunk{pages: pages}, "l", uint32s, same[uint32])
		var err error
		for i := 0; i < 2 && err == nil; i++ {
			_, err = c.next()
		}
		c.close()
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// Values left over when the row group's rows are read are an error.
	c = newListCursor(&fakeChunk{pages: []parquet.Page{page([]byte{0, 0}, []byte{1, 1}, 1, 2)}}, "l", uint32s, same[uint32])
	if _, err := c.next(); err != nil {
		t.Fatal(err)
	}
	if err := c.close(); err == nil {
		t.Error("a column with values past the rows closed without error")
	}
}

// benchBoWs is a part of bags of words of real-photo shape: 1,000 photos of
// ~1,700 postings (a 10K-word vocabulary), as one part of a 10K-photo run.
func benchBoWs(b *testing.B) ([]byte, int64) {
	rows := randomBoWs(rand.New(rand.NewPCG(9, 10)), 1000, 1700, 10000)
	var postings int64
	for _, r := range rows {
		postings += int64(len(r.WordIDs))
	}
	return encodeWith(b, rows, RowGroupBytes), postings
}

// BenchmarkDecodeBoW reads a part of real-photo shape with the general
// path (reflection, one parquet.Value a posting) and the columnar path,
// in the same run; postings/s is per core.
func BenchmarkDecodeBoW(b *testing.B) {
	data, postings := benchBoWs(b)
	benchDecodeBoW(b, [][]byte{data}, postings)
}

// BenchmarkDecodeBoWFiles is BenchmarkDecodeBoW on the bow-*.parquet
// files matching $BOWLINE_BOW_FILES (a glob, e.g. a run's output), read
// from memory; skipped when it is unset.
func BenchmarkDecodeBoWFiles(b *testing.B) {
	pattern := os.Getenv("BOWLINE_BOW_FILES")
	if pattern == "" {
		b.Skip("BOWLINE_BOW_FILES is not set")
	}
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		b.Skipf("no file matches %q (%v)", pattern, err)
	}
	var files [][]byte
	var postings int64
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		rd := bytes.NewReader(data)
		if err := Decode(context.Background(), rd, rd.Size(), func(r *BoW) error { postings += int64(len(r.WordIDs)); return nil }); err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	benchDecodeBoW(b, files, postings)
}

// BenchmarkDecodeGeometry reads a part of 2,000 images' geometry (~60
// keypoints each) with both paths; postings/s counts keypoints.
func BenchmarkDecodeGeometry(b *testing.B) {
	rows, data := geometryFile(b, 2000)
	var keypoints int64
	for _, g := range rows {
		keypoints += int64(len(g.WordIDs))
	}
	benchDecode(b, [][]byte{data}, keypoints, func(g *Geometry) int { return len(g.WordIDs) })
}

func benchDecodeBoW(b *testing.B, files [][]byte, postings int64) {
	benchDecode(b, files, postings, func(r *BoW) int { return len(r.WordIDs) })
}

// benchDecode reads files with the general path and with the columnar
// path, checking that each reads postings lists' elements (as counted by
// size) per pass, and reports them per second.
func benchDecode[T any](b *testing.B, files [][]byte, postings int64, size func(*T) int) {
	ctx := context.Background()
	for _, path := range []struct {
		name   string
		decode func(f *parquet.File, fn func(*T) error) error
	}{
		{"general", func(f *parquet.File, fn func(*T) error) error { return decodeRows(ctx, f, fn) }},
		{"columnar", func(f *parquet.File, fn func(*T) error) error {
			ok, err := decodeColumnar(ctx, f, fn)
			if !ok {
				return errors.New("the columnar path did not take the file")
			}
			return err
		}},
	} {
		b.Run(path.name, func(b *testing.B) {
			var read int64
			for range b.N {
				for _, data := range files {
					f, err := openFile(bytes.NewReader(data), int64(len(data)))
					if err != nil {
						b.Fatal(err)
					}
					if err := path.decode(f, func(r *T) error { read += int64(size(r)); return nil }); err != nil {
						b.Fatal(err)
					}
				}
			}
			if read != int64(b.N)*postings {
				b.Fatalf("read %d postings, want %d", read, int64(b.N)*postings)
			}
			b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "postings/s")
		})
	}
}
