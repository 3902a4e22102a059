package fileio

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	// Register the file systems for local paths and gs:// URLs.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
)

// TempPrefix starts the base name of every temporary file this package and
// formats/parquetio write. Glob skips such files.
const TempPrefix = ".tmp-"

// isRemote reports whether path is a URL (scheme://...) rather than a local
// path.
func isRemote(path string) bool {
	return strings.Contains(path, "://")
}

// Join joins a directory and a file name. Local directories are joined with
// filepath.Join; URLs such as gs://bucket/dir are joined with a single "/"
// and are otherwise left alone (no cleaning, so "gs://" keeps both slashes).
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	if !isRemote(dir) {
		return filepath.Join(dir, name)
	}
	return strings.TrimRight(dir, "/") + "/" + strings.TrimLeft(name, "/")
}

// split returns the directory and base name of a file path or URL.
func split(path string) (dir, base string) {
	if !isRemote(path) {
		return filepath.Dir(path), filepath.Base(path)
	}
	root := strings.Index(path, "://") + 3
	i := strings.LastIndex(path, "/")
	if i < root {
		return path, ""
	}
	return path[:i], path[i+1:]
}

// Glob returns the files matching pattern, sorted. Pattern is a local glob
// (filepath.Match syntax) or a URL glob (for gs://, "*" does not match "/"
// and "**" does). Temporary files (base name starting with TempPrefix) are
// left out. No match is not an error: the result is empty.
func Glob(ctx context.Context, pattern string) ([]string, error) {
	fsys, err := filesystem.New(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("fileio: glob %s: %w", pattern, err)
	}
	defer fsys.Close()
	all, err := fsys.List(ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("fileio: glob %s: %w", pattern, err)
	}
	var files []string
	for _, f := range all {
		if _, base := split(f); !strings.HasPrefix(base, TempPrefix) {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}
