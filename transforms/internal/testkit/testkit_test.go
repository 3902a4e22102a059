package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records whether the check failed.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }

// MustPanic fails a test whose call does not panic, or panics without
// the text wanted, and passes one that does, whatever the panic's type.
func TestMustPanic(t *testing.T) {
	var nilMap map[string]int
	for _, tc := range []struct {
		name, want string
		f          func()
		fail       bool
	}{
		{"no panic", "", func() {}, true},
		{"other text", "ragged", func() { panic("nn: short x") }, true},
		{"the text", "short", func() { panic("nn: short x") }, false},
		{"an error", "closed", func() { panic(errors.New("file closed")) }, false},
		{"a runtime error, any panic", "", func() { nilMap["x"] = 1 }, false},
	} {
		r := &recorder{TB: t}
		MustPanic(r, tc.name, tc.want, tc.f)
		if r.failed != tc.fail {
			t.Errorf("%s: failed %v, want %v", tc.name, r.failed, tc.fail)
		}
	}
}

// BenchFiles reads the files its glob names, sorted, the first
// $BOWLINE_BENCH_N of them if set.
func TestBenchFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.jpg", "a.jpg", "c.png"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TESTKIT_GLOB", filepath.Join(dir, "*.jpg"))
	for _, c := range []struct {
		n    string
		want []string
	}{{"", []string{"a.jpg", "b.jpg"}}, {"1", []string{"a.jpg"}}} {
		t.Setenv("BOWLINE_BENCH_N", c.n)
		paths, files := BenchFiles(t, "TESTKIT_GLOB")
		if len(paths) != len(c.want) || len(files) != len(c.want) {
			t.Fatalf("N %q: %v; want %v", c.n, paths, c.want)
		}
		for i, w := range c.want {
			if filepath.Base(paths[i]) != w || string(files[i]) != w {
				t.Errorf("N %q: file %d is %s holding %q; want %s", c.n, i, paths[i], files[i], w)
			}
		}
	}
}
