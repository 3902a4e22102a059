// Package testkit holds what the stages' tests share: the real photos
// some read, the files a benchmark names, and a check that a call panics.
//
// The photos, ETH-80 (3,280 labelled photos: labels.csv and
// images/<class>/), are kept beside the checkout rather than in it. CI has
// them; a user of the repository usually does not, and a test that needs
// them then skips, saying where it looked, instead of failing.
//
// It is imported only by tests.
package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ETH80 returns the ETH-80 directory beside the checkout — data/eth80 in
// the folder "shared" next to the module's root — or skips t, naming the
// path, if it holds no labels.csv.
func ETH80(t testing.TB) string {
	t.Helper()
	dir, err := eth80Dir()
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "labels.csv"))
	}
	if err != nil {
		t.Skipf("ETH-80 is not beside the checkout (%v): this test reads its photos", err)
	}
	return dir
}

// eth80Dir returns where ETH-80 belongs: shared/data/eth80 beside the
// directory of go.mod, found upwards from the working directory (a test
// runs in its package's directory).
func eth80Dir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "data", "eth80"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// MustPanic calls f and fails t unless f panics with a value whose text
// (fmt.Sprint) contains want; "" accepts any panic, a runtime error's too.
// name says which call in the failure.
func MustPanic(t testing.TB, name, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("%s: panic %v, want one mentioning %q", name, r, want)
		}
	}()
	f()
}

// BenchFiles returns the paths of the files the glob in the environment
// variable env names, sorted, and their contents, read into memory: the
// first $BOWLINE_BENCH_N of them if that is set. It skips b if the glob
// names no files.
func BenchFiles(b testing.TB, env string) ([]string, [][]byte) {
	b.Helper()
	paths, _ := filepath.Glob(os.Getenv(env))
	if n, err := strconv.Atoi(os.Getenv("BOWLINE_BENCH_N")); err == nil && n < len(paths) {
		paths = paths[:n]
	}
	if len(paths) == 0 {
		b.Skip(env + " names no files")
	}
	files := make([][]byte, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		files[i] = data
	}
	return paths, files
}
