package formats

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"
)

const (
	// writeBatch is how many rows are handed to the parquet writer between
	// checks of the context and of the row group size.
	writeBatch = 256
	// readBatch is how many rows ReadEach reads between checks of the
	// context.
	readBatch = 64
)

// rowGroupBytes is the (uncompressed, estimated) size at which a row group is
// flushed, bounding the writer's memory. A variable so tests can make files
// with several row groups.
var rowGroupBytes int64 = 128 << 20

// writerOptions are the options of every parquet writer in this package:
// zstd compression; parquet-go's defaults otherwise (data page v2, page
// statistics on, created_by "github.com/parquet-go/parquet-go version ...",
// which depends only on the parquet-go version the binary was built with).
func writerOptions(schema *parquet.Schema) []parquet.WriterOption {
	return []parquet.WriterOption{schema, parquet.Compression(&parquet.Zstd)}
}

// schemaOf returns the parquet schema of the struct type t.
func schemaOf(t reflect.Type) (schema *parquet.Schema, err error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("row type %v is not a struct", t)
	}
	err = protect(func() error {
		schema = parquet.SchemaOf(reflect.Zero(t).Interface())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("row type %v: %w", t, err)
	}
	return schema, nil
}

// WriteFile writes rows to a zstd-compressed Parquet file at path (local or
// gs://), in the given order. The file is written under a temporary name in
// the same directory and renamed to path only once complete; on error path is
// untouched and no temporary file is left behind.
func WriteFile[T any](ctx context.Context, path string, rows []T) error {
	err := writeRows(ctx, path, reflect.TypeFor[T](), len(rows), func(out io.Writer, schema *parquet.Schema) (rowWriter, func(i, j int) error) {
		w := parquet.NewGenericWriter[T](out, writerOptions(schema)...)
		return w, func(i, j int) error {
			_, err := w.Write(rows[i:j])
			return err
		}
	})
	if err != nil {
		return fmt.Errorf("formats: write %s: %w", path, err)
	}
	return nil
}

// WriteFileOf is WriteFile for callers that know the row type only at run
// time: rows must be a slice of a struct type (the row type). It writes the
// same bytes as WriteFile would.
func WriteFileOf(ctx context.Context, path string, rows any) error {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return fmt.Errorf("formats: write %s: rows is a %T, not a slice", path, rows)
	}
	err := writeRows(ctx, path, v.Type().Elem(), v.Len(), func(out io.Writer, schema *parquet.Schema) (rowWriter, func(i, j int) error) {
		// With an explicit schema, GenericWriter[any] writes the values
		// column by column like GenericWriter[T] does (same bytes), about
		// 1.5x faster than Writer.Write, which deconstructs every row.
		w := parquet.NewGenericWriter[any](out, writerOptions(schema)...)
		batch := make([]any, 0, writeBatch)
		return w, func(i, j int) error {
			batch = batch[:0]
			for k := i; k < j; k++ {
				batch = append(batch, v.Index(k).Interface())
			}
			_, err := w.Write(batch)
			clear(batch)
			return err
		}
	})
	if err != nil {
		return fmt.Errorf("formats: write %s: %w", path, err)
	}
	return nil
}

// rowWriter is what writeRows needs of a parquet writer.
type rowWriter interface {
	Size() int64
	Flush() error
	Close() error
}

// writeRows writes n rows of type t to path atomically. open returns the
// parquet writer for a file and a function that writes rows [i, j) to it.
func writeRows(ctx context.Context, path string, t reflect.Type, n int, open func(out io.Writer, schema *parquet.Schema) (rowWriter, func(i, j int) error)) error {
	schema, err := schemaOf(t)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, path, func(out io.Writer) error {
		w, write := open(out, schema)
		var flushed int64
		for i := 0; i < n; i += writeBatch {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := write(i, min(i+writeBatch, n)); err != nil {
				return err
			}
			if size := w.Size(); size-flushed >= rowGroupBytes {
				if err := w.Flush(); err != nil {
					return err
				}
				flushed = w.Size()
			}
		}
		return w.Close()
	})
}

// ReadFile returns every row of the Parquet file at path (local or gs://).
// Columns are matched to T's fields by name; a column T has but the file
// lacks reads as the zero value. Empty and nil lists are the same on disk
// and read back as nil.
func ReadFile[T any](ctx context.Context, path string) ([]T, error) {
	var rows []T
	err := ReadEach(ctx, path, func(row *T) error {
		rows = append(rows, *row)
		return nil
	})
	return rows, err
}

// ReadEach calls fn for every row of the Parquet file at path, in file
// order. Rows are decoded one at a time from the pages parquet-go reads, so
// memory does not grow with the file. *row is overwritten after fn returns,
// but the slices it holds are not reused: fn may keep a copy of *row. An
// error from fn stops the read and is returned as is.
func ReadEach[T any](ctx context.Context, path string, fn func(row *T) error) error {
	schema, err := schemaOf(reflect.TypeFor[T]())
	if err != nil {
		return fmt.Errorf("formats: read %s: %w", path, err)
	}
	var row T
	return readRows(ctx, path, schema, func(r *parquet.Reader) error {
		for i := 0; ; i++ {
			if i%readBatch == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			var zero T
			row = zero // so that Reconstruct allocates fresh slices
			err := r.Read(&row)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(&row); err != nil {
				return callbackError{err}
			}
		}
	})
}

// ReadEachOf is ReadEach for callers that know the row type only at run
// time: fn receives each row as a value of the struct type t, freshly
// allocated.
func ReadEachOf(ctx context.Context, path string, t reflect.Type, fn func(row any) error) error {
	schema, err := schemaOf(t)
	if err != nil {
		return fmt.Errorf("formats: read %s: %w", path, err)
	}
	return readRows(ctx, path, schema, func(r *parquet.Reader) error {
		for i := 0; ; i++ {
			if i%readBatch == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			row := reflect.New(t)
			err := r.Read(row.Interface())
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := fn(row.Elem().Interface()); err != nil {
				return callbackError{err}
			}
		}
	})
}

// callbackError marks an error returned by the caller's function, which
// readRows passes through without wrapping.
type callbackError struct{ err error }

func (e callbackError) Error() string { return e.err.Error() }

// readRows opens the Parquet file at path and calls body with a reader whose
// rows have the given schema.
func readRows(ctx context.Context, path string, schema *parquet.Schema, body func(r *parquet.Reader) error) error {
	err := withReaderAt(ctx, path, func(ra io.ReaderAt, size int64) error {
		f, err := parquet.OpenFile(ra, size, parquet.SkipBloomFilters(true))
		if err != nil {
			return err
		}
		var r *parquet.Reader
		if err := protect(func() error {
			r = parquet.NewReader(f, schema)
			return nil
		}); err != nil {
			return fmt.Errorf("file schema does not fit %v: %w", schema.GoType(), err)
		}
		defer r.Close()
		return body(r)
	})
	var cb callbackError
	if errors.As(err, &cb) {
		return cb.err
	}
	if err != nil {
		return fmt.Errorf("formats: read %s: %w", path, err)
	}
	return nil
}

// ReadAll returns the rows of every file matching pattern (see Glob), file
// after file in sorted file order. A pattern matching nothing yields no rows
// and no error.
func ReadAll[T any](ctx context.Context, pattern string) ([]T, error) {
	files, err := Glob(ctx, pattern)
	if err != nil {
		return nil, err
	}
	var rows []T
	for _, f := range files {
		err := ReadEach(ctx, f, func(row *T) error {
			rows = append(rows, *row)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// CountRows returns the number of rows in the Parquet files matching
// pattern, from their footers: no row is decoded.
func CountRows(ctx context.Context, pattern string) (int64, error) {
	paths, err := Glob(ctx, pattern)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, p := range paths {
		err := withReaderAt(ctx, p, func(ra io.ReaderAt, size int64) error {
			f, err := parquet.OpenFile(ra, size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
			if err != nil {
				return err
			}
			n += f.NumRows()
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("formats: count rows of %s: %w", p, err)
		}
	}
	return n, nil
}
