package fileio

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/bowline/bowline/formats"
)

// WriteFile writes rows to a zstd-compressed Parquet file at path (local or
// gs://), in the given order (formats.Encode). The file is written under a
// temporary name in the same directory and renamed to path only once
// complete; on error path is untouched and no temporary file is left behind.
func WriteFile[T any](ctx context.Context, path string, rows []T) error {
	err := writeAtomic(ctx, path, func(w io.Writer) error { return formats.Encode(ctx, w, rows) })
	if err != nil {
		return fmt.Errorf("fileio: write %s: %w", path, err)
	}
	return nil
}

// WriteFileOf is WriteFile for callers that know the row type only at run
// time: rows must be a slice of a struct type (the row type). It writes the
// same bytes as WriteFile would.
func WriteFileOf(ctx context.Context, path string, rows any) error {
	err := writeAtomic(ctx, path, func(w io.Writer) error { return formats.EncodeOf(ctx, w, rows) })
	if err != nil {
		return fmt.Errorf("fileio: write %s: %w", path, err)
	}
	return nil
}

// WriteRowsOf writes the rows that each hands to write, in that order, to a
// Parquet file of rows of the struct type t at path, as WriteFileOf writes
// a slice of them (the same bytes), through a formats.Encoder: memory holds
// a row group, not the file.
func WriteRowsOf(ctx context.Context, path string, t reflect.Type, each func(write func(row any) error) error) error {
	err := writeAtomic(ctx, path, func(w io.Writer) error {
		e, err := formats.NewEncoder(ctx, w, t)
		if err != nil {
			return err
		}
		if err := each(e.Write); err != nil {
			return err
		}
		return e.Close()
	})
	if err != nil {
		return fmt.Errorf("fileio: write %s: %w", path, err)
	}
	return nil
}

// ReadFile returns every row of the Parquet file at path (local or gs://),
// decoded as formats.Decode does.
func ReadFile[T any](ctx context.Context, path string) ([]T, error) {
	var rows []T
	err := ReadEach(ctx, path, func(row *T) error {
		rows = append(rows, *row)
		return nil
	})
	return rows, err
}

// ReadEach calls fn for every row of the Parquet file at path, in file
// order, decoding a few rows at a time (formats.Decode): memory does not
// grow with the file, and a gs:// file is first copied to a local temporary
// file, never held in memory. An error from fn stops the read and is
// returned as it is.
func ReadEach[T any](ctx context.Context, path string, fn func(row *T) error) error {
	return readFile(ctx, path, func(r io.ReaderAt, size int64, fnErr *error) error {
		return formats.Decode(ctx, r, size, func(row *T) error {
			*fnErr = fn(row)
			return *fnErr
		})
	})
}

// ReadEachOf is ReadEach for callers that know the row type only at run
// time: fn receives each row as a freshly allocated value of the struct
// type t.
func ReadEachOf(ctx context.Context, path string, t reflect.Type, fn func(row any) error) error {
	return readFile(ctx, path, func(r io.ReaderAt, size int64, fnErr *error) error {
		return formats.DecodeOf(ctx, r, size, t, func(row any) error {
			*fnErr = fn(row)
			return *fnErr
		})
	})
}

// readFile runs body on the file at path and names the path in its errors,
// except in the error of the caller's function, which body records in
// fnErr and which is returned as it is.
func readFile(ctx context.Context, path string, body func(r io.ReaderAt, size int64, fnErr *error) error) error {
	var fnErr error
	err := withReaderAt(ctx, path, func(r io.ReaderAt, size int64) error { return body(r, size, &fnErr) })
	if err != nil && fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("fileio: read %s: %w", path, err)
	}
	return nil
}

// ReadAll returns the rows of every file matching pattern (see Glob), file
// after file in sorted file order. A pattern matching nothing yields no rows
// and no error. It is meant for small tables.
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

// ReadCentroids returns the centroids of the codebook written to paths
// (formats.Word rows, local or gs://), row-major, word i at row i, read a
// row at a time into a formats.CentroidTable: memory holds the centroids,
// never the rows as well. It is an error, naming the file of the row at
// fault, unless the files hold words 0…k−1, each once, of dim finite
// values.
func ReadCentroids(ctx context.Context, paths []string, k, dim int) ([]float32, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("codebook: no file")
	}
	if k <= 0 || dim <= 0 {
		return nil, fmt.Errorf("codebook %s: %d words of %d values", strings.Join(paths, ", "), k, dim)
	}
	t := formats.NewCentroidTable(k, dim)
	for _, p := range paths {
		err := ReadEach(ctx, p, func(w *formats.Word) error {
			if err := t.Add(w); err != nil {
				return fmt.Errorf("codebook %s: %w", p, err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	cent, err := t.Centroids()
	if err != nil {
		return nil, fmt.Errorf("codebook %s: %w", strings.Join(paths, ", "), err)
	}
	return cent, nil
}

// WriteCentroids writes the centroids of a codebook of k words of dim
// values to path as formats.Word rows in word order, the bytes WriteFile
// writes of them, whole or not at all. blocks hands add the centroids in
// word order, row-major, a block of whole words at a time, so that a
// writer holds a block and a row group of the file, never the codebook
// (512 MB at 10⁶ words), unless it has it already; a block's buffer may be
// reused once add returns. It returns
// formats.CentroidsContent of the words, and an error unless blocks added
// exactly k words of dim finite values.
func WriteCentroids(ctx context.Context, path string, k, dim int, blocks func(add func(cent []float32) error) error) (string, error) {
	if k <= 0 || dim <= 0 {
		return "", fmt.Errorf("codebook %s: %d words of %d values", path, k, dim)
	}
	h := formats.NewCentroidsHash()
	n := 0
	err := WriteRowsOf(ctx, path, reflect.TypeFor[formats.Word](), func(write func(any) error) error {
		err := blocks(func(cent []float32) error {
			if len(cent)%dim != 0 || n+len(cent)/dim > k {
				return fmt.Errorf("codebook: a block of %d values after %d of %d words of %d", len(cent), n, k, dim)
			}
			for i := 0; i < len(cent); i += dim {
				// A copy: the encoder holds rows until it hands a batch
				// to the writer, and blocks may reuse their buffer.
				row := formats.Word{WordID: uint32(n), Centroid: slices.Clone(cent[i : i+dim])}
				if err := row.Check(dim); err != nil {
					return fmt.Errorf("codebook: %w", err)
				}
				if err := write(row); err != nil {
					return err
				}
				n++
			}
			h.Add(cent)
			return nil
		})
		if err == nil && n != k {
			err = fmt.Errorf("codebook: %d of %d words written", n, k)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return h.Content(), nil
}

// CountRows returns the number of rows in the Parquet files matching
// pattern, from their footers: no row is decoded.
func CountRows(ctx context.Context, pattern string) (int64, error) {
	rows, _, err := CountRowsPostings(ctx, pattern)
	return rows, err
}

// CountRowsPostings returns the rows and the word ids of the bags of words
// (or geometry) of the Parquet files matching pattern, from their footers
// (formats.NumRows).
func CountRowsPostings(ctx context.Context, pattern string) (rows, postings int64, err error) {
	paths, err := Glob(ctx, pattern)
	if err != nil {
		return 0, 0, err
	}
	for _, p := range paths {
		err := withReaderAt(ctx, p, func(r io.ReaderAt, size int64) error {
			n, w, err := formats.NumRows(r, size)
			rows, postings = rows+n, postings+w
			return err
		})
		if err != nil {
			return 0, 0, fmt.Errorf("fileio: count rows of %s: %w", p, err)
		}
	}
	return rows, postings, nil
}
