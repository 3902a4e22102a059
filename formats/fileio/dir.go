package fileio

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/run"
)

// Entries returns the base names of everything directly in dir (local or
// gs://), temporary files included, sorted. For a local directory a
// sub-directory is an entry too, with isDir set; a gs:// "directory" is a
// prefix, and only the objects directly under it are entries. A missing
// directory has no entries.
func Entries(ctx context.Context, dir string) (names []string, isDir map[string]bool, err error) {
	isDir = map[string]bool{}
	if !isRemote(dir) {
		es, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			return nil, isDir, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("fileio: list %s: %w", dir, err)
		}
		for _, e := range es {
			names = append(names, e.Name())
			isDir[e.Name()] = e.IsDir()
		}
		return names, isDir, nil
	}
	fsys, err := filesystem.New(ctx, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("fileio: list %s: %w", dir, err)
	}
	defer fsys.Close()
	all, err := fsys.List(ctx, Join(dir, "*"))
	if err != nil {
		return nil, nil, fmt.Errorf("fileio: list %s: %w", dir, err)
	}
	for _, f := range all {
		if _, base := split(f); base != "" {
			names = append(names, base)
		}
	}
	sort.Strings(names)
	return names, isDir, nil
}

// Size returns the size in bytes of the file at path. A missing file's
// error wraps fs.ErrNotExist, local or gs:// (notExist).
func Size(ctx context.Context, path string) (int64, error) {
	fsys, err := filesystem.New(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("fileio: size of %s: %w", path, err)
	}
	defer fsys.Close()
	n, err := fsys.Size(ctx, path)
	if err != nil {
		return 0, fmt.Errorf("fileio: size of %s: %w", path, blob.NotExist(err))
	}
	return n, nil
}

// IsTemp reports whether a base name is that of a temporary file.
func IsTemp(name string) bool { return strings.HasPrefix(name, TempPrefix) }

// RunDir returns the run directory dir (local or gs://) read through
// Beam's file systems (ReadBytes).
func RunDir(dir string) run.Dir {
	return run.Dir{Path: dir, Read: func(ctx context.Context, name string) ([]byte, error) {
		return ReadBytes(ctx, Join(dir, name))
	}}
}

// CheckOutput checks that a local output is a directory, or can be
// created, and can be written to; it creates the directory if need be. A
// gs:// directory is left to the job.
func CheckOutput(output string) error {
	if isRemote(output) {
		return nil
	}
	if st, err := os.Stat(output); err == nil && !st.IsDir() {
		return fmt.Errorf("output %s is a file, not a directory", output)
	}
	if err := os.MkdirAll(output, 0o755); err != nil {
		return fmt.Errorf("cannot create the output directory %s: %w", output, PathCause(err))
	}
	probe, err := os.CreateTemp(output, TempPrefix+"probe-")
	if err != nil {
		return fmt.Errorf("cannot write to the output directory %s: %w", output, PathCause(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}
