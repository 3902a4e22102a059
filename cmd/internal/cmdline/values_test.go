package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLocalPath(t *testing.T) {
	for p, want := range map[string]bool{
		"":                       false,
		"/tmp/out":               true,
		"out":                    true,
		"./data/x:y.csv":         true,
		"file:///tmp/out":        true,
		"gs://bucket/out":        false,
		"s3://bucket/out":        false,
		"synthetic:1000?seed=2":  false,
		"GS://bucket/labels.csv": false,
	} {
		if got := LocalPath(p); got != want {
			t.Errorf("LocalPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestDirectoryFlags: a flag that names a directory refuses a file, in
// one line naming the flag, and takes a directory, a path not made yet
// and a URI.
func TestDirectoryFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"output", "root", "run", "previous", "compare_to", "image_root"} {
		for v, bad := range map[string]bool{file: true, dir: false, filepath.Join(dir, "new"): false, "gs://b/" + name: false} {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			fs.String(name, "", "")
			err := ParseArgs(fs, []string{"--" + name, v}, &bytes.Buffer{}, "usage", nil)
			want := "--" + name + " " + v + ": is a file, not a directory" + HelpHint
			if bad && (err == nil || err.Error() != want || !errors.As(err, new(UsageError))) || !bad && err != nil {
				t.Errorf("--%s %s: %v (want refused: %v)", name, v, err, bad)
			}
		}
	}
}

// TestCount: a Count alone is its default; followed by a whole number,
// separate or after "=", that number; the arguments after it are read as
// flags. Anything else is one line naming the flag.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		args []string
		n, k int
		rest []string
	}{
		{nil, 0, 1, nil},
		{[]string{"--expand"}, 50, 1, nil},
		{[]string{"--expand", "3", "--k", "4"}, 3, 4, nil},
		{[]string{"-expand", "0"}, 0, 1, nil},
		{[]string{"--expand=7"}, 7, 1, nil},
		{[]string{"--expand=false"}, 0, 1, nil},
		{[]string{"--expand", "--k", "4"}, 50, 4, nil},
		{[]string{"--expand", "x"}, 50, 1, []string{"x"}},
		{[]string{"--name", "--expand", "3"}, 0, 1, []string{"3"}},
		{[]string{"--k", "2", "--", "--expand", "3"}, 0, 2, []string{"--expand", "3"}},
		{[]string{"arg", "--expand", "3"}, 0, 1, []string{"arg", "--expand", "3"}},
	} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		e := Count{Default: 50}
		fs.Var(&e, "expand", "")
		k := fs.Int("k", 1, "")
		fs.String("name", "", "")
		if err := ParseArgs(fs, c.args, &bytes.Buffer{}, "usage", nil); err != nil || e.N != c.n || *k != c.k || !slices.Equal(fs.Args(), c.rest) {
			t.Errorf("%q: expand %d, k %d, rest %q, %v; want %d, %d, %q", c.args, e.N, *k, fs.Args(), err, c.n, c.k, c.rest)
		}
	}
	for _, bad := range []string{"--expand=-1", "--expand=+2", "--expand=t", "--expand=1.5"} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.Var(&Count{Default: 50}, "expand", "")
		v := strings.TrimPrefix(bad, "--expand=")
		want := `--expand "` + v + `": want true, false or a whole number, 0 or more` + HelpHint
		if err := ParseArgs(fs, []string{bad}, &bytes.Buffer{}, "usage", nil); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", bad, err, want)
		}
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&Count{Default: 50}, "expand", "at most `N`")
	var help bytes.Buffer
	PrintUsage(&help, fs, "usage", []Group{{Title: "Results", Flags: []string{"expand"}}})
	if !strings.Contains(help.String(), "  --expand [N]\n") {
		t.Errorf("--help shows the count as:\n%s", help.String())
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{"10MiB": 10 << 20, "500KB": 500_000, "1.5GiB": 3 << 29, "123": 123, "64 KiB": 64 << 10, "7B": 7} {
		var b ByteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "ten", "-1MiB", "1TiB", "1e30"} {
		var b ByteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q: accepted as %d", in, b)
		}
	}
}
