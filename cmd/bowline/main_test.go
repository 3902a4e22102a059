package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bowline-cmd-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "bowline")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// shapes is the project's own labelled test set.
var shapes, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "shapes", "labels.csv"))

// runCmd runs the command and returns its stderr and exit status.
func runCmd(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir()
	var e bytes.Buffer
	cmd.Stderr = &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return e.String(), 0
}

// TestErrorsAreOneReadableLine: a mistake ends in one short
// "bowline: <cause>" line, not kilobytes of the runner's plans, whether it
// is found before the job starts or by a stage while it runs.
func TestErrorsAreOneReadableLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	noLabel := filepath.Join(dir, "nolabel.csv")
	os.WriteFile(noLabel, []byte("image_id,path,category\na,x.jpg,c\n"), 0o644)
	empty := filepath.Join(dir, "empty.csv")
	os.WriteFile(empty, []byte("image_id,path,label\n"), 0o644)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no input", []string{"--output", out}, 2, "bowline: --input is required"},
		{"missing input", []string{"--input", filepath.Join(dir, "missing.csv"), "--output", out}, 1, "bowline: cannot read the labels CSV " + filepath.Join(dir, "missing.csv") + ": no such file or directory"},
		{"output is a file", []string{"--input", shapes, "--output", file}, 1, "bowline: output " + file + " is a file, not a directory"},
		{"no label column", []string{"--input", noLabel, "--output", out}, 1, `bowline: the labels CSV ` + noLabel + ` has no label column "label" (its columns: image_id,path,category): name it with --label_column`},
		{"unknown learner", []string{"--input", shapes, "--output", out, "--learners", "nope"}, 2, `bowline: unknown learner "nope"`},
		{"no images, found by the running job", []string{"--input", empty, "--output", out}, 1, "bowline: ingest: no images in " + empty},
	} {
		stderr, code := runCmd(t, c.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		last := lines[len(lines)-1]
		if code != c.code || !strings.HasPrefix(last, c.want) {
			t.Errorf("%s: exit %d, last line %q; want exit %d and %q", c.name, code, last, c.code, c.want)
		}
		if strings.Contains(stderr, "bowline: bowline:") || strings.Contains(stderr, "Plan[") || len(stderr) > 4096 {
			t.Errorf("%s: stderr holds a doubled prefix or the runner's plan, or is long (%d bytes):\n%s", c.name, len(stderr), stderr)
		}
	}
}

// TestHelpGroupsTheJobsFlags: --help shows the job's flags by stage, then
// the runner's on one line.
func TestHelpGroupsTheJobsFlags(t *testing.T) {
	stderr, code := runCmd(t, "--help")
	if code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	at := func(s string) int { return strings.Index(stderr, s) }
	if !(at("--input") >= 0 && at("--input") < at("Vocabulary:") && at("--vocab ") > at("Vocabulary:") &&
		at("--rootsift") > 0 && at("--learners") < at("Beam runner flags")) {
		t.Fatalf("--help is not grouped as expected:\n%s", stderr)
	}
	runner := stderr[at("Beam runner flags"):]
	if n := strings.Count(runner, "\n"); n > 2 || !strings.Contains(runner, "--runner") {
		t.Errorf("the runner flags take %d lines: %q", n, runner)
	}
}

// TestRootSIFT: --rootsift reaches the describe stage: the job's
// descriptors of an image are the RootSIFT ones a Describer computes, not
// the plain SIFT ones.
func TestRootSIFT(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	if stderr, code := runCmd(t, "--input", shapes, "--output", out, "--rootsift", "--vocab", "50", "--learners", "solis-ada"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	feats, err := fileio.ReadAll[formats.Features](ctx, filepath.Join(out, "features-*.parquet"))
	if err != nil || len(feats) != 96 {
		t.Fatalf("read %d features rows: %v", len(feats), err)
	}
	f := feats[0]
	img := formats.Image{ImageID: f.ImageID, URI: filepath.Join(filepath.Dir(shapes), "images", f.ImageID[:6], f.ImageID+".jpg")}
	descriptors := func(root bool) [][]byte {
		opt := describe.DefaultOptions()
		opt.SIFT.RootSIFT = root
		d, err := describe.NewDescriber(opt, fileio.ReadBytes)
		if err != nil {
			t.Fatal(err)
		}
		got, dead := d.Describe(ctx, img)
		if dead != nil {
			t.Fatalf("%+v", dead)
		}
		return got.Descriptors
	}
	if want := descriptors(true); !reflect.DeepEqual(f.Descriptors, want) {
		t.Errorf("%s: the job's descriptors are not RootSIFT's", f.ImageID)
	}
	if plain := descriptors(false); reflect.DeepEqual(f.Descriptors, plain) {
		t.Errorf("%s: RootSIFT and SIFT descriptors are the same: the test proves nothing", f.ImageID)
	}
}
