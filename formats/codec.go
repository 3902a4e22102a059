package formats

import (
	"context"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"
)

const (
	// encodeBatch is how many rows are handed to the parquet writer between
	// checks of the context and of the row group size.
	encodeBatch = 256
	// decodeBatch is how many rows Decode reads at a time, between checks
	// of the context.
	decodeBatch = 64
	// decodeValues bounds the values of the rows the general path reads at
	// a time (batchRows): each is a 24-byte parquet.Value plus a copy of
	// its bytes, and a features row holds one value per keypoint in each
	// of its five lists, about 11,000 for a photo of 2,200 keypoints, so
	// that 64 of them held ~50 MB at once (and twice that with the rows
	// they are reconstructed into) where one holds under 1 MB.
	decodeValues = 1 << 14
)

// RowGroupBytes is the (uncompressed, estimated) size at which a row group
// is flushed, bounding the writer's memory. A variable so that tests can
// make files with several row groups.
var RowGroupBytes int64 = 128 << 20

// writerOptions are the options of every parquet writer: zstd compression;
// parquet-go's defaults otherwise (data page v2, page statistics on,
// created_by "github.com/parquet-go/parquet-go version ...", which depends
// only on the parquet-go version the binary was built with).
func writerOptions(schema *parquet.Schema) []parquet.WriterOption {
	return []parquet.WriterOption{schema, parquet.Compression(&parquet.Zstd)}
}

// SchemaOf returns the Parquet schema of the row type t, a struct type.
func SchemaOf(t reflect.Type) (schema *parquet.Schema, err error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("row type %v is not a struct", t)
	}
	err = Protect(func() error {
		schema = parquet.SchemaOf(reflect.Zero(t).Interface())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("row type %v: %w", t, err)
	}
	return schema, nil
}

// Protect runs f, turning a panic into an error: parquet-go panics on some
// schema problems instead of returning errors.
func Protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// Encode writes rows to w as one zstd-compressed Parquet file, in the given
// order. Writing the same rows in the same order writes the same bytes. It
// stops with ctx's error if ctx is cancelled.
func Encode[T any](ctx context.Context, w io.Writer, rows []T) error {
	return encode(ctx, w, reflect.TypeFor[T](), len(rows), func(out io.Writer, schema *parquet.Schema) (rowWriter, func(i, j int) error) {
		pw := parquet.NewGenericWriter[T](out, writerOptions(schema)...)
		return pw, func(i, j int) error {
			_, err := pw.Write(rows[i:j])
			return err
		}
	})
}

// EncodeOf is Encode for callers that know the row type only at run time:
// rows must be a slice of a struct type (the row type). It writes the same
// bytes as Encode would.
func EncodeOf(ctx context.Context, w io.Writer, rows any) error {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("rows is a %T, not a slice", rows)
	}
	e, err := NewEncoder(ctx, w, v.Type().Elem())
	if err != nil {
		return err
	}
	for i := range v.Len() {
		if err := e.Write(v.Index(i).Interface()); err != nil {
			return err
		}
	}
	return e.Close()
}

// An Encoder writes rows one at a time to a Parquet file, for rows that
// arrive as a stream: it holds a batch of rows and the row group being
// written (RowGroupBytes), never the file. Rows written one by one make the
// same bytes as Encode of the same rows in the same order.
type Encoder struct {
	ctx     context.Context
	t       reflect.Type
	pw      *parquet.GenericWriter[any]
	batch   []any
	flushed int64
}

// NewEncoder returns an Encoder of rows of the struct type t to w.
func NewEncoder(ctx context.Context, w io.Writer, t reflect.Type) (*Encoder, error) {
	schema, err := SchemaOf(t)
	if err != nil {
		return nil, err
	}
	e := &Encoder{ctx: ctx, t: t, batch: make([]any, 0, encodeBatch)}
	err = Protect(func() error {
		// With an explicit schema, GenericWriter[any] writes the values
		// column by column like GenericWriter[T] does (same bytes),
		// without Writer.Write's deconstruction of every row.
		e.pw = parquet.NewGenericWriter[any](w, writerOptions(schema)...)
		return nil
	})
	return e, err
}

// Write adds row, a value of the Encoder's row type.
func (e *Encoder) Write(row any) error {
	if reflect.TypeOf(row) != e.t {
		return fmt.Errorf("row of type %T, want %v", row, e.t)
	}
	e.batch = append(e.batch, row)
	if len(e.batch) < encodeBatch {
		return nil
	}
	return e.writeBatch()
}

// writeBatch hands the batch to the parquet writer and flushes the row
// group once it reaches RowGroupBytes, as encode does.
func (e *Encoder) writeBatch() error {
	if err := e.ctx.Err(); err != nil {
		return err
	}
	return Protect(func() error {
		if _, err := e.pw.Write(e.batch); err != nil {
			return err
		}
		clear(e.batch)
		e.batch = e.batch[:0]
		if size := e.pw.Size(); size-e.flushed >= RowGroupBytes {
			if err := e.pw.Flush(); err != nil {
				return err
			}
			e.flushed = e.pw.Size()
		}
		return nil
	})
}

// Close writes the rows still held and the file's footer. It does not
// close the underlying writer.
func (e *Encoder) Close() error {
	if len(e.batch) > 0 {
		if err := e.writeBatch(); err != nil {
			return err
		}
	}
	return Protect(e.pw.Close)
}

// rowWriter is what encode needs of a parquet writer.
type rowWriter interface {
	Size() int64
	Flush() error
	Close() error
}

// encode writes n rows of type t to w. open returns the parquet writer and a
// function that writes rows [i, j) to it.
func encode(ctx context.Context, w io.Writer, t reflect.Type, n int, open func(out io.Writer, schema *parquet.Schema) (rowWriter, func(i, j int) error)) error {
	schema, err := SchemaOf(t)
	if err != nil {
		return err
	}
	return Protect(func() error {
		pw, write := open(w, schema)
		var flushed int64
		for i := 0; i < n; i += encodeBatch {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := write(i, min(i+encodeBatch, n)); err != nil {
				return err
			}
			if size := pw.Size(); size-flushed >= RowGroupBytes {
				if err := pw.Flush(); err != nil {
					return err
				}
				flushed = pw.Size()
			}
		}
		return pw.Close()
	})
}

// Decode calls fn for every row of the Parquet file r of the given size, in
// file order. Columns are matched to T's fields by name; a column T has but
// the file lacks reads as the zero value, and empty lists read back as
// empty, non-nil slices. Rows are decoded a few at a time from the pages
// parquet-go reads, so memory does not grow with the file. *row is
// overwritten after fn returns, but the slices it holds are not reused: fn
// may keep a copy of *row. An error from fn stops the read and is returned
// as it is. BoW and Geometry files in the layout Encode writes are read
// column by column, without reflection (decodeColumnar); the rows are the
// same.
func Decode[T any](ctx context.Context, r io.ReaderAt, size int64, fn func(row *T) error) error {
	f, err := openFile(r, size)
	if err != nil {
		return err
	}
	if ok, err := decodeColumnar(ctx, f, fn); ok {
		return err
	}
	return decodeRows(ctx, f, fn)
}

// decodeRows is Decode's general path, for any row type and any file
// layout: rows reconstructed by reflection from parquet.Rows.
func decodeRows[T any](ctx context.Context, f *parquet.File, fn func(row *T) error) error {
	var row T
	return decode(ctx, f, reflect.TypeFor[T](), func(reconstruct func(any) error) error {
		var zero T
		row = zero // so that Reconstruct allocates fresh slices
		if err := reconstruct(&row); err != nil {
			return err
		}
		if err := fn(&row); err != nil {
			return callbackError{err}
		}
		return nil
	})
}

// DecodeOf is Decode for callers that know the row type only at run time:
// fn receives each row as a freshly allocated value of the struct type t.
func DecodeOf(ctx context.Context, r io.ReaderAt, size int64, t reflect.Type, fn func(row any) error) error {
	f, err := openFile(r, size)
	if err != nil {
		return err
	}
	if ok, err := decodeColumnarOf(ctx, f, t, fn); ok {
		return err
	}
	return decode(ctx, f, t, func(reconstruct func(any) error) error {
		row := reflect.New(t)
		if err := reconstruct(row.Interface()); err != nil {
			return err
		}
		if err := fn(row.Elem().Interface()); err != nil {
			return callbackError{err}
		}
		return nil
	})
}

// callbackError marks an error returned by the caller's function, which
// decode passes through without wrapping.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// newReader reads the rows of f with the schema of the struct type t,
// which the file's must fit; the schema reconstructs the rows read.
func newReader(f *parquet.File, t reflect.Type) (*parquet.GenericReader[any], *parquet.Schema, error) {
	schema, err := SchemaOf(t)
	if err != nil {
		return nil, nil, err
	}
	var pr *parquet.GenericReader[any]
	if err := Protect(func() error {
		pr = parquet.NewGenericReader[any](f, schema)
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("file schema does not fit %v: %w", t, err)
	}
	return pr, schema, nil
}

// openFile opens the Parquet file r of the given size for decoding.
func openFile(r io.ReaderAt, size int64) (*parquet.File, error) {
	return parquet.OpenFile(r, size, parquet.SkipBloomFilters(true))
}

// decode calls each once per row of f, in file order, with a function
// that reconstructs the row into a pointer to a value of type t.
func decode(ctx context.Context, f *parquet.File, t reflect.Type, each func(reconstruct func(any) error) error) error {
	pr, schema, err := newReader(f, t)
	if err != nil {
		return err
	}
	defer pr.Close()
	rows := make([]parquet.Row, batchRows(f))
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, readErr := pr.ReadRows(rows)
		for _, row := range rows[:n] {
			err := each(func(dst any) error { return schema.Reconstruct(dst, row) })
			if cb, ok := err.(callbackError); ok {
				return cb.err
			}
			if err != nil {
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

// batchRows returns how many rows of f the general path reads at a time:
// decodeBatch, or as many as hold about decodeValues values on average
// (the file's values over its rows, from its footer), at least one.
func batchRows(f *parquet.File) int {
	rows := f.NumRows()
	if rows == 0 {
		return 1
	}
	var values int64
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			values += c.MetaData.NumValues
		}
	}
	return int(max(1, min(decodeBatch, decodeValues*rows/max(values, 1))))
}

// NumRows returns the number of rows of the Parquet file r of the given
// size, and of its word ids (a BoW or Geometry file: the values of its
// word_ids list column, an empty list counting one; 0 without such a
// column), from its footer: no row is decoded. The word ids are the
// postings an older run's bag-of-words parts did not record
// (formats.Part.Postings).
func NumRows(r io.ReaderAt, size int64) (rows, postings int64, err error) {
	f, err := parquet.OpenFile(r, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return 0, 0, err
	}
	if leaf, ok := f.Schema().Lookup("word_ids", "list", "element"); ok {
		for _, rg := range f.Metadata().RowGroups {
			postings += rg.Columns[leaf.ColumnIndex].MetaData.NumValues
		}
	}
	return f.NumRows(), postings, nil
}
