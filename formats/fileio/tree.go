package fileio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
)

// A Tree is a directory, local or gs://, and everything beneath it: what a
// job's output directory must not share with the job's input, since
// finishing a run removes files from it.
type Tree struct {
	// forms are the directory's spellings, each ending in a separator:
	// for a local one its absolute path and, if a symbolic link leads
	// to it, its real path; for a URL the URL.
	forms []string
	// real caches the real paths of the directories Holds resolved,
	// for the millions of paths of a labels CSV, which share few
	// directories.
	real map[string]string
	// cwd makes relative paths absolute ("" if unknown).
	cwd string
}

// treeCache bounds Tree.real, in directories.
const treeCache = 4096

// TreeOf returns the tree under dir. A local dir is made absolute and its
// symbolic links resolved as far as it exists, so that "out", "./out/" and
// a link to out are one tree.
func TreeOf(dir string) *Tree {
	t := &Tree{real: map[string]string{}}
	t.cwd, _ = os.Getwd()
	t.forms = t.spellings(dir)
	return t
}

// Holds reports whether path is the tree's directory or lies beneath it,
// comparing whole path elements ("gs://b/run" does not hold
// "gs://b/run2/x"). A local path is compared as TreeOf compares dir: made
// absolute, and with its symbolic links resolved as far as it exists.
func (t *Tree) Holds(path string) bool {
	for _, p := range t.spellings(path) {
		for _, d := range t.forms {
			if strings.HasPrefix(p, d) {
				return true
			}
		}
	}
	return false
}

// spellings returns the forms of path (Tree.forms) that Holds compares.
func (t *Tree) spellings(path string) []string {
	if isRemote(path) {
		return []string{strings.TrimRight(path, "/") + "/"}
	}
	sep := string(filepath.Separator)
	abs := filepath.Join(t.cwd, path)
	if filepath.IsAbs(path) {
		abs = filepath.Clean(path)
	}
	forms := []string{strings.TrimSuffix(abs, sep) + sep}
	real := t.realPath(abs)
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			real = r
		}
	}
	if real != abs {
		forms = append(forms, strings.TrimSuffix(real, sep)+sep)
	}
	return forms
}

// realPath returns abs, an absolute path, with the symbolic links of its
// directory resolved as far as it exists.
func (t *Tree) realPath(abs string) string {
	dir, base := filepath.Dir(abs), filepath.Base(abs)
	if dir == abs {
		return abs
	}
	real, ok := t.real[dir]
	if !ok {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			real = r
		} else {
			real = t.realPath(dir)
		}
		if len(t.real) >= treeCache {
			clear(t.real)
		}
		t.real[dir] = real
	}
	return filepath.Join(real, base)
}

// ReadHeads reads the first n bytes of each file of paths (local or
// gs://; all of one file system), or the whole file if it is shorter,
// several files at a time: what a listing needs to tell what a file is
// by its content (ingest.Sniff) costs one small read per file, not the
// file. heads[i] and errs[i] are paths[i]'s.
func ReadHeads(ctx context.Context, paths []string, n int) (heads [][]byte, errs []error) {
	heads, errs = make([][]byte, len(paths)), make([]error, len(paths))
	if len(paths) == 0 {
		return heads, errs
	}
	fsys, err := filesystem.New(ctx, paths[0])
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("fileio: read %s: %w", paths[i], err)
		}
		return heads, errs
	}
	defer fsys.Close()
	// Reads of a bucket are round trips: a few in flight hide their
	// latency; a local file system gains little and loses nothing.
	const inFlight = 16
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(inFlight, len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				heads[i], errs[i] = readHead(ctx, fsys, paths[i], n)
			}
		}()
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return heads, errs
}

func readHead(ctx context.Context, fsys filesystem.Interface, path string, n int) ([]byte, error) {
	r, err := openRead(ctx, fsys, path)
	if err != nil {
		return nil, fmt.Errorf("fileio: read %s: %w", path, PathCause(err))
	}
	defer r.Close()
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, fmt.Errorf("fileio: read %s: %w", path, PathCause(err))
	}
	return buf[:k], nil
}

// PathCause drops the path an *os.PathError repeats, which the message
// around it already names: "open x: no such file or directory" becomes
// "no such file or directory".
func PathCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
