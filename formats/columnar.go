package formats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
)

// Decode's columnar path. The general path reads each row as a
// parquet.Row, one parquet.Value per list element, and rebuilds it by
// reflection, element by element: for bags of words (~1,700 postings a
// photo) that costs more than ranking queries against them, and the
// evaluation re-reads the collection once per query shard. For the row types
// read in bulk (BoW, Geometry), the columnar path instead walks each column
// chunk's pages, whose values parquet-go has already decoded into typed
// arrays, and cuts them into rows by their repetition levels, copying a
// row's values with one copy per list.
//
// It takes a file only when its schema is exactly the row type's (same
// columns in the same order, same types and repetitions) and no column
// chunk is dictionary-encoded (what the repo's writer writes); any other
// file (an older layout, other column order, optional columns) goes the
// general way. A page it does not expect after all (a dictionary, values
// that do not match the levels) is an error, never a guess.
//
// Memory: the pages being read, one per column (parquet-go's page size,
// 256 KiB by default), and each row's own slices: a row's lists are
// allocated for that row alone, so a caller keeping a few rows keeps
// nothing else.

// columnarSchemas are the Parquet schemas of the row types with a columnar
// path, made once.
var columnarSchemas = sync.OnceValues(func() (bow, geometry *parquet.Schema) {
	return parquet.SchemaOf(BoW{}), parquet.SchemaOf(Geometry{})
})

// decodeColumnar decodes f with the columnar path if T has one and f's
// layout fits it; ok is false, and nothing was read, otherwise. An error of
// fn is returned as it is.
func decodeColumnar[T any](ctx context.Context, f *parquet.File, fn func(row *T) error) (ok bool, err error) {
	bow, geometry := columnarSchemas()
	switch fn := any(fn).(type) {
	case func(*BoW) error:
		if !fitsColumnar(f, bow) {
			return false, nil
		}
		return true, decodeRowGroups(ctx, f, newBoWCutter, fn)
	case func(*Geometry) error:
		if !fitsColumnar(f, geometry) {
			return false, nil
		}
		return true, decodeRowGroups(ctx, f, newGeometryCutter, fn)
	}
	return false, nil
}

// decodeColumnarOf is decodeColumnar for DecodeOf: fn receives each row as
// a value of its own.
func decodeColumnarOf(ctx context.Context, f *parquet.File, t reflect.Type, fn func(row any) error) (ok bool, err error) {
	switch t {
	case reflect.TypeFor[BoW]():
		return decodeColumnar(ctx, f, boxed[BoW](fn))
	case reflect.TypeFor[Geometry]():
		return decodeColumnar(ctx, f, boxed[Geometry](fn))
	}
	return false, nil
}

// boxed hands fn a copy of each row as an interface value.
func boxed[T any](fn func(row any) error) func(row *T) error {
	return func(row *T) error { return fn(*row) }
}

// fitsColumnar reports whether f has exactly the given schema, with no
// dictionary-encoded column chunk: the files the columnar path reads.
func fitsColumnar(f *parquet.File, schema *parquet.Schema) bool {
	if !parquet.EqualNodes(f.Schema(), schema) {
		return false
	}
	for _, rg := range f.Metadata().RowGroups {
		if len(rg.Columns) != len(schema.Columns()) {
			return false
		}
		for _, c := range rg.Columns {
			if c.MetaData.DictionaryPageOffset != 0 {
				return false
			}
			for _, e := range c.MetaData.Encoding {
				//lint:ignore SA1019 older writers still mark dictionary pages PLAIN_DICTIONARY; such a file must take the general path.
				if e == format.PlainDictionary || e == format.RLEDictionary {
					return false
				}
			}
		}
	}
	return true
}

// A rowCutter reads the rows of one row group from its column cursors.
type rowCutter[T any] interface {
	// next overwrites *row with the row group's next row.
	next(row *T) error
	// close checks that every column is exhausted (an error if not) and
	// releases the columns' pages.
	close() error
}

// decodeRowGroups calls fn for every row of f, in file order, cutting the
// rows of each row group with a rowCutter made by open.
func decodeRowGroups[T any](ctx context.Context, f *parquet.File, open func([]parquet.ColumnChunk) rowCutter[T], fn func(row *T) error) error {
	var row T
	for g, rg := range f.RowGroups() {
		rows := open(rg.ColumnChunks())
		n := rg.NumRows()
		for i := int64(0); i < n; i++ {
			if i%decodeBatch == 0 {
				if err := ctx.Err(); err != nil {
					rows.close()
					return err
				}
			}
			if err := rows.next(&row); err != nil {
				rows.close()
				return fmt.Errorf("row group %d, row %d: %w", g, i, err)
			}
			if err := fn(&row); err != nil {
				rows.close()
				return err
			}
		}
		if err := rows.close(); err != nil {
			return fmt.Errorf("row group %d of %d rows: %w", g, n, err)
		}
	}
	return nil
}

// bowCutter cuts BoW rows.
type bowCutter struct {
	imageID, label *stringCursor
	wordIDs        *listCursor[uint32, uint32]
	weights        *listCursor[float32, float32]
}

func newBoWCutter(chunks []parquet.ColumnChunk) rowCutter[BoW] {
	return &bowCutter{
		imageID: newStringCursor(chunks[0], "image_id"),
		label:   newStringCursor(chunks[1], "label"),
		wordIDs: newListCursor(chunks[2], "word_ids", uint32s, same[uint32]),
		weights: newListCursor(chunks[3], "weights", float32s, same[float32]),
	}
}

func (r *bowCutter) next(row *BoW) (err error) {
	*row = BoW{}
	if row.ImageID, err = r.imageID.next(); err != nil {
		return err
	}
	if row.Label, err = r.label.next(); err != nil {
		return err
	}
	if row.WordIDs, err = r.wordIDs.next(); err != nil {
		return err
	}
	row.Weights, err = r.weights.next()
	return err
}

func (r *bowCutter) close() error {
	return errors.Join(r.imageID.close(), r.label.close(), r.wordIDs.close(), r.weights.close())
}

// geometryCutter cuts Geometry rows. Its uint16 lists are INT32 columns
// (INT(16,false)), narrowed as they are copied.
type geometryCutter struct {
	imageID               *stringCursor
	width, height         *scalarCursor[int32]
	wordIDs               *listCursor[uint32, uint32]
	x, y, logScale, angle *listCursor[int32, uint16]
}

func newGeometryCutter(chunks []parquet.ColumnChunk) rowCutter[Geometry] {
	return &geometryCutter{
		imageID:  newStringCursor(chunks[0], "image_id"),
		width:    newScalarCursor(chunks[1], "width", int32s),
		height:   newScalarCursor(chunks[2], "height", int32s),
		wordIDs:  newListCursor(chunks[3], "word_ids", uint32s, same[uint32]),
		x:        newListCursor(chunks[4], "x", int32s, narrow),
		y:        newListCursor(chunks[5], "y", int32s, narrow),
		logScale: newListCursor(chunks[6], "log_scale", int32s, narrow),
		angle:    newListCursor(chunks[7], "angle", int32s, narrow),
	}
}

func (r *geometryCutter) next(row *Geometry) (err error) {
	*row = Geometry{}
	if row.ImageID, err = r.imageID.next(); err != nil {
		return err
	}
	if row.Width, err = r.width.next(); err != nil {
		return err
	}
	if row.Height, err = r.height.next(); err != nil {
		return err
	}
	if row.WordIDs, err = r.wordIDs.next(); err != nil {
		return err
	}
	if row.X, err = r.x.next(); err != nil {
		return err
	}
	if row.Y, err = r.y.next(); err != nil {
		return err
	}
	if row.LogScale, err = r.logScale.next(); err != nil {
		return err
	}
	row.Angle, err = r.angle.next()
	return err
}

func (r *geometryCutter) close() error {
	return errors.Join(r.imageID.close(), r.width.close(), r.height.close(), r.wordIDs.close(),
		r.x.close(), r.y.close(), r.logScale.close(), r.angle.close())
}

// same copies src into dst.
func same[E any](dst, src []E) int { return copy(dst, src) }

// narrow copies INT32 values into uint16s, as the general path converts
// them.
func narrow(dst []uint16, src []int32) int {
	for i, v := range src[:len(dst)] {
		dst[i] = uint16(v)
	}
	return len(dst)
}

// Typed views of a page's decoded values; ok is false for values of
// another physical type.
func uint32s(v encoding.Values) ([]uint32, bool) {
	if v.Kind() != encoding.Int32 {
		return nil, false
	}
	return v.Uint32(), true
}

func int32s(v encoding.Values) ([]int32, bool) {
	if v.Kind() != encoding.Int32 {
		return nil, false
	}
	return v.Int32(), true
}

func float32s(v encoding.Values) ([]float32, bool) {
	if v.Kind() != encoding.Float {
		return nil, false
	}
	return v.Float(), true
}

// column walks the pages of one column chunk, holding (and releasing) one
// at a time.
type column struct {
	name  string
	chunk parquet.ColumnChunk
	pages parquet.Pages // nil until the first page is read
	page  parquet.Page
	eof   bool
}

// advance releases the current page and reads the next one; it returns
// false at the end of the chunk.
func (p *column) advance() (bool, error) {
	p.release()
	if p.eof {
		return false, nil
	}
	if p.pages == nil {
		p.pages = p.chunk.Pages()
	}
	page, err := p.pages.ReadPage()
	if err == io.EOF {
		p.eof = true
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("column %s: %w", p.name, err)
	}
	p.page = page
	if page.Dictionary() != nil {
		return false, fmt.Errorf("column %s: unexpected dictionary-encoded page", p.name)
	}
	return true, nil
}

func (p *column) release() {
	if p.page != nil {
		parquet.Release(p.page)
		p.page = nil
	}
}

// close releases the pages; it is an error if a value was left unread.
func (p *column) close(left bool) error {
	var err error
	if left {
		err = fmt.Errorf("column %s has more values than the row group has rows", p.name)
	}
	p.release()
	if p.pages != nil {
		p.pages.Close()
	}
	return err
}

// tooFew is the error of a column that ends before the row group's rows.
func (p *column) tooFew() error {
	return fmt.Errorf("column %s has fewer values than the row group has rows", p.name)
}

// stringCursor reads a required BYTE_ARRAY column, one value a row.
type stringCursor struct {
	column
	data    []byte
	offsets []uint32
	at      int
}

func newStringCursor(chunk parquet.ColumnChunk, name string) *stringCursor {
	return &stringCursor{column: column{name: name, chunk: chunk}}
}

func (c *stringCursor) next() (string, error) {
	for c.at+1 >= len(c.offsets) {
		ok, err := c.advance()
		if err != nil {
			return "", err
		}
		if !ok {
			return "", c.tooFew()
		}
		v := c.page.Data()
		if v.Kind() != encoding.ByteArray {
			return "", fmt.Errorf("column %s: %v values, want BYTE_ARRAY", c.name, v.Kind())
		}
		c.data, c.offsets = v.ByteArray()
		c.at = 0
		if len(c.offsets) > 0 && int64(len(c.offsets)-1) != c.page.NumValues() {
			return "", fmt.Errorf("column %s: page of %d values has %d", c.name, c.page.NumValues(), len(c.offsets)-1)
		}
	}
	i, j := c.offsets[c.at], c.offsets[c.at+1]
	if i > j || int(j) > len(c.data) {
		return "", fmt.Errorf("column %s: value %d has offsets [%d, %d) in %d bytes", c.name, c.at, i, j, len(c.data))
	}
	c.at++
	return string(c.data[i:j]), nil
}

func (c *stringCursor) close() error {
	left := c.at+1 < len(c.offsets)
	for !left && !c.eof {
		ok, err := c.advance()
		if err != nil {
			c.column.close(false)
			return err
		}
		if ok {
			left = c.page.NumValues() > 0
		}
	}
	return c.column.close(left)
}

// scalarCursor reads a required fixed-size column, one value a row.
type scalarCursor[P any] struct {
	column
	view func(encoding.Values) ([]P, bool)
	vals []P
	at   int
}

func newScalarCursor[P any](chunk parquet.ColumnChunk, name string, view func(encoding.Values) ([]P, bool)) *scalarCursor[P] {
	return &scalarCursor[P]{column: column{name: name, chunk: chunk}, view: view}
}

func (c *scalarCursor[P]) next() (P, error) {
	var zero P
	for c.at >= len(c.vals) {
		ok, err := c.advance()
		if err != nil {
			return zero, err
		}
		if !ok {
			return zero, c.tooFew()
		}
		data := c.page.Data()
		vals, ok := c.view(data)
		if !ok {
			return zero, fmt.Errorf("column %s: unexpected %v values", c.name, data.Kind())
		}
		if int64(len(vals)) != c.page.NumValues() {
			return zero, fmt.Errorf("column %s: page of %d values has %d", c.name, c.page.NumValues(), len(vals))
		}
		c.vals, c.at = vals, 0
	}
	c.at++
	return c.vals[c.at-1], nil
}

func (c *scalarCursor[P]) close() error {
	left := c.at < len(c.vals)
	c.vals = nil
	for !left && !c.eof {
		ok, err := c.advance()
		if err != nil {
			c.column.close(false)
			return err
		}
		if ok {
			left = c.page.NumValues() > 0
		}
	}
	return c.column.close(left)
}

// listCursor reads a required list of required elements (the LIST layout
// of Encoding in the package doc): repetition level 0 starts a row, 1
// continues its list; definition level 0 is an empty list, 1 an element.
// Elements are of physical type P and read as E, converted by conv, which
// fills dst from src and returns len(dst).
type listCursor[P, E any] struct {
	column
	view     func(encoding.Values) ([]P, bool)
	conv     func(dst []E, src []P) int
	rep, def []byte
	vals     []P
	at, vat  int // the next level and the next value of the page
	carry    []E // a row that runs past the end of a page, reused
}

func newListCursor[P, E any](chunk parquet.ColumnChunk, name string, view func(encoding.Values) ([]P, bool), conv func(dst []E, src []P) int) *listCursor[P, E] {
	return &listCursor[P, E]{column: column{name: name, chunk: chunk}, view: view, conv: conv}
}

// load reads the next page with levels; it returns false at the end of
// the chunk.
func (c *listCursor[P, E]) load() (bool, error) {
	c.rep, c.def, c.vals, c.at, c.vat = nil, nil, nil, 0, 0
	for {
		ok, err := c.advance()
		if !ok || err != nil {
			return false, err
		}
		rep, def := c.page.RepetitionLevels(), c.page.DefinitionLevels()
		data := c.page.Data()
		vals, ok := c.view(data)
		switch {
		case !ok:
			return false, fmt.Errorf("column %s: unexpected %v values", c.name, data.Kind())
		case len(rep) != len(def) || int64(len(def)) != c.page.NumValues():
			return false, fmt.Errorf("column %s: page of %d values has %d repetition and %d definition levels",
				c.name, c.page.NumValues(), len(rep), len(def))
		case len(vals) != len(def)-bytes.Count(def, []byte{0}):
			return false, fmt.Errorf("column %s: page of %d defined elements has %d values",
				c.name, len(def)-bytes.Count(def, []byte{0}), len(vals))
		}
		if len(rep) == 0 {
			continue
		}
		c.rep, c.def, c.vals = rep, def, vals
		return true, nil
	}
}

// span returns the end of the levels continuing the list at c.at (the
// next repetition level 0 after it), or len(c.rep) if the list runs to the
// end of the page, after checking that they are all elements.
func (c *listCursor[P, E]) span() (int, error) {
	end := len(c.rep)
	if k := bytes.IndexByte(c.rep[c.at+1:], 0); k >= 0 {
		end = c.at + 1 + k
	}
	if bytes.Count(c.def[c.at:end], []byte{1}) != end-c.at {
		return 0, fmt.Errorf("column %s: a list of %d levels has an empty one", c.name, end-c.at)
	}
	return end, nil
}

// next returns the next row's list in a slice of its own.
func (c *listCursor[P, E]) next() ([]E, error) {
	if c.at >= len(c.rep) {
		ok, err := c.load()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, c.tooFew()
		}
	}
	if c.rep[c.at] != 0 {
		return nil, fmt.Errorf("column %s: row starts with repetition level %d", c.name, c.rep[c.at])
	}
	if c.def[c.at] == 0 { // an empty list
		if c.at+1 < len(c.rep) && c.rep[c.at+1] != 0 {
			return nil, fmt.Errorf("column %s: an empty list has elements", c.name)
		}
		// A continuation on the next page would be malformed too: the next
		// row's first level catches it.
		c.at++
		return []E{}, nil
	}
	end, err := c.span()
	if err != nil {
		return nil, err
	}
	n := end - c.at
	if end < len(c.rep) {
		out := make([]E, n)
		c.conv(out, c.vals[c.vat:c.vat+n])
		c.at, c.vat = end, c.vat+n
		return out, nil
	}
	// The list reaches the end of the page: it may go on in the next
	// pages (data page v1 allows it), which then start with repetition
	// level 1.
	c.carry = c.appendConv(c.carry[:0], c.vals[c.vat:c.vat+n])
	for {
		ok, err := c.load()
		if err != nil {
			return nil, err
		}
		if !ok || c.rep[0] == 0 {
			break
		}
		end, err := c.span()
		if err != nil {
			return nil, err
		}
		c.carry = c.appendConv(c.carry, c.vals[:end])
		c.at, c.vat = end, end
		if end < len(c.rep) {
			break
		}
	}
	out := make([]E, len(c.carry))
	copy(out, c.carry)
	return out, nil
}

// appendConv appends src, converted, to dst.
func (c *listCursor[P, E]) appendConv(dst []E, src []P) []E {
	n := len(dst)
	dst = append(dst, make([]E, len(src))...)
	c.conv(dst[n:], src)
	return dst
}

func (c *listCursor[P, E]) close() error {
	left := c.at < len(c.rep)
	for !left && !c.eof {
		ok, err := c.load()
		if err != nil {
			c.column.close(false)
			return err
		}
		left = ok
	}
	c.carry = nil
	return c.column.close(left)
}
