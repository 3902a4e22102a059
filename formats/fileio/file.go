// Package fileio reads and writes the pipeline's files — the Parquet
// tables of package formats and plain bytes such as report.json — by path,
// local or gs://, through Beam's file systems. It is the only part of the
// formats tree that depends on Beam; the row types and the Parquet codec
// (package formats) do not.
//
// Guarantees:
//   - Atomic files: WriteFile, WriteFileOf and WriteBytes write to
//     dir/.tmp-<random>-<base> and rename to the final name only after the
//     Parquet writer and the file are closed (for GCS: the object
//     committed). On any error, a cancelled context included, the temporary
//     file is removed (a GCS upload is aborted) and the final path keeps its
//     previous content, if any. Glob, and so ReadAll and parquetio.Read,
//     skip files whose name starts with TempPrefix.
//   - Streaming reads: ReadEach and ReadEachOf decode a few rows at a time;
//     a gs:// file is first copied to a local temporary file (removed
//     afterwards), never held in memory. ReadFile and ReadAll return all
//     rows and are meant for small tables.
//   - Errors name the operation and the path: "fileio: write <path>: ...".
package fileio

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/bowline/bowline/formats/blob"

	"github.com/bowline/bowline/formats"
)

// WriteBytes writes data to path atomically: under a temporary name in the
// same directory first, renamed to path once complete. On error path is
// untouched and the temporary file removed.
func WriteBytes(ctx context.Context, path string, data []byte) error {
	err := writeAtomic(ctx, path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("fileio: write %s: %w", path, err)
	}
	return nil
}

// openRead opens the file at path in fsys for reading; its error is
// notExist's.
func openRead(ctx context.Context, fsys filesystem.Interface, path string) (io.ReadCloser, error) {
	r, err := fsys.OpenRead(ctx, path)
	return r, blob.NotExist(err)
}

// ReadBytes returns the whole content of the file at path.
func ReadBytes(ctx context.Context, path string) ([]byte, error) {
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("fileio: read %s: %w", path, err)
	}
	defer fsys.Close()
	r, err := openRead(ctx, fsys, path)
	if err != nil {
		return nil, fmt.Errorf("fileio: read %s: %w", path, err)
	}
	defer r.Close()
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("fileio: read %s: %w", path, err)
	}
	return data, nil
}

// readAll reads r to its end, as io.ReadAll does, into a buffer of the
// size r announces if it does (a local file's Stat, a GCS object's
// Remain): one allocation of the file's size instead of a buffer grown
// from 512 bytes, copied at each step (about 3 ms of CPU for a 5 MB
// camera photo). A file longer than announced is still read whole.
func readAll(r io.Reader) ([]byte, error) {
	size := int64(-1)
	switch f := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
	case interface{ Remain() int64 }:
		size = f.Remain()
	}
	if size < 0 {
		return io.ReadAll(r)
	}
	// One byte more than announced, so that the read that finds the end
	// does not grow the buffer.
	data := make([]byte, 0, size+1)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// Open opens the file at path (local or gs://) for reading as a stream;
// the caller closes it.
func Open(ctx context.Context, path string) (io.ReadCloser, error) {
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("fileio: open %s: %w", path, err)
	}
	r, err := openRead(ctx, fsys, path)
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("fileio: open %s: %w", path, err)
	}
	return closeBoth{r, fsys}, nil
}

// closeBoth closes a reader and then the file system it came from.
type closeBoth struct {
	io.ReadCloser
	fsys filesystem.Interface
}

func (c closeBoth) Close() error {
	return errors.Join(c.ReadCloser.Close(), c.fsys.Close())
}

// Remove deletes the file at path. A file that does not exist is not an
// error: the caller wants it gone, and it is.
func Remove(ctx context.Context, path string) error {
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return fmt.Errorf("fileio: remove %s: %w", path, err)
	}
	defer fsys.Close()
	matches, err := fsys.List(ctx, path)
	if err != nil {
		return fmt.Errorf("fileio: remove %s: %w", path, err)
	}
	if len(matches) == 0 {
		return nil
	}
	rm, ok := fsys.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("fileio: remove %s: the file system cannot remove files", path)
	}
	if err := rm.Remove(ctx, path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fileio: remove %s: %w", path, err)
	}
	return nil
}

// RemoveAll deletes dir (local or gs://) and everything beneath it. A
// missing dir is not an error.
func RemoveAll(ctx context.Context, dir string) error {
	if !isRemote(dir) {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("fileio: remove %s: %w", dir, err)
		}
		return nil
	}
	fsys, err := filesystem.New(ctx, dir)
	if err != nil {
		return fmt.Errorf("fileio: remove %s: %w", dir, err)
	}
	defer fsys.Close()
	all, err := fsys.List(ctx, Join(dir, "**"))
	if err != nil {
		return fmt.Errorf("fileio: remove %s: %w", dir, err)
	}
	if len(all) == 0 {
		return nil
	}
	rm, ok := fsys.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("fileio: remove %s: the file system cannot remove files", dir)
	}
	// The listing found them: remove each through the same file system
	// rather than Remove, which would open and list again for every file.
	for _, f := range all {
		if err := rm.Remove(ctx, f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("fileio: remove %s: %w", f, err)
		}
	}
	return nil
}

// Copy copies the file at from to to, whole or not at all: a gs:// object
// to gs:// is copied by the service (no byte through this process); a
// local file to a local path is hard-linked under a temporary name and
// renamed, where the file system allows; any other copy is streamed into a
// temporary name and renamed (WriteBytes).
//
// A link is a copy because no file is written in place: every write goes
// to a temporary name renamed over the old one (writeAtomic), which leaves
// a file another name links as it was, and removing one name leaves the
// other. It writes no byte: a retrained run's copies of its base run's
// corpus, features most of it, take no room.
func Copy(ctx context.Context, from, to string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !isRemote(from) && !isRemote(to) {
		tmp := tempName(to)
		if os.Link(from, tmp) == nil {
			if err := os.Rename(tmp, to); err != nil {
				os.Remove(tmp)
				return fmt.Errorf("fileio: copy %s to %s: %w", from, to, err)
			}
			return nil
		}
	}
	if strings.HasPrefix(from, "gs://") && strings.HasPrefix(to, "gs://") {
		fsys, err := filesystem.New(ctx, to)
		if err != nil {
			return fmt.Errorf("fileio: copy %s: %w", from, err)
		}
		defer fsys.Close()
		if cp, ok := fsys.(filesystem.Copier); ok {
			if err := cp.Copy(ctx, from, to); err != nil {
				return fmt.Errorf("fileio: copy %s to %s: %w", from, to, err)
			}
			return nil
		}
	}
	err := writeAtomic(ctx, to, func(w io.Writer) error {
		r, err := Open(ctx, from)
		if err != nil {
			return err
		}
		defer r.Close()
		_, err = io.Copy(w, r)
		return err
	})
	if err != nil {
		return fmt.Errorf("fileio: copy %s to %s: %w", from, to, err)
	}
	return nil
}

// RandomHex returns 16 random hex digits, for names that must not collide
// with those of another run or worker.
func RandomHex() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tempName returns a fresh temporary name for path, in the same directory:
// dir/.tmp-<16 random hex digits>-<base>.
func tempName(path string) string {
	dir, base := split(path)
	return Join(dir, TempPrefix+RandomHex()+"-"+base)
}

// writeAtomic writes the file at path with body, through a temporary file
// that is renamed to path only after body returned and the file was closed
// (for GCS: committed). On any error, including a panic in body or a
// cancelled ctx, the temporary file is removed and path is left untouched.
func writeAtomic(ctx context.Context, path string, body func(w io.Writer) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fsys.Close()

	tmp := tempName(path)
	// Cancelling the context the writer was opened with aborts a GCS upload
	// so that a failed write never commits an object.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := fsys.OpenWrite(wctx, tmp)
	if err != nil {
		return err
	}
	open := true
	defer func() {
		if err == nil {
			return
		}
		cancel()
		if open {
			w.Close()
		}
		removeQuietly(ctx, fsys, tmp)
	}()

	if err := formats.Protect(func() error { return body(w) }); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if f, ok := w.(interface{ Sync() error }); ok {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	open = false
	if err := w.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return filesystem.Rename(ctx, fsys, tmp, path)
}

// removeQuietly removes path, ignoring errors (it may not exist). It uses a
// fresh context because ctx may be the reason for the clean-up.
func removeQuietly(ctx context.Context, fsys filesystem.Interface, path string) {
	if rm, ok := fsys.(filesystem.Remover); ok {
		rm.Remove(context.WithoutCancel(ctx), path)
	}
}

// withReaderAt calls fn with random access to the file at path. Local files
// are opened directly; other files are copied to a local temporary file that
// is removed when fn returns, so a big file is never held in memory.
func withReaderAt(ctx context.Context, path string, fn func(r io.ReaderAt, size int64) error) error {
	if !isRemote(path) {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		return fn(f, st.Size())
	}

	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fsys.Close()
	r, err := openRead(ctx, fsys, path)
	if err != nil {
		return err
	}
	defer r.Close()
	spill, err := os.CreateTemp("", "bowline-formats-*.parquet")
	if err != nil {
		return err
	}
	defer os.Remove(spill.Name())
	defer spill.Close()
	size, err := io.Copy(spill, r)
	if err != nil {
		return errors.Join(errors.New("copying to a local temporary file"), err)
	}
	return fn(spill, size)
}
