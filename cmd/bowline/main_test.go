package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

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

// TestRemoteRunnerRefusesLocalPaths: on a runner whose workers run on
// other machines, a local input, output or Dataflow staging path is
// refused before anything is built, in one line naming the flag.
func TestRemoteRunnerRefusesLocalPaths(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	flink := []string{"--runner", "flink", "--endpoint", "localhost:8099", "--environment_type", "DOCKER"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"flink, local input", append(flink, "--input", shapes, "--output", "gs://b/out"),
			"bowline: --input " + shapes + " is a local path, but the flink runner's workers run on other machines and cannot reach it: give a gs:// path"},
		{"flink, local output", append(flink, "--input", "gs://b/labels.csv", "--output", out), "bowline: --output " + out + " is a local path"},
		{"flink, no output", append(flink, "--input", "synthetic:100"), "bowline: --output is required on the flink runner"},
		{"dataflow, local staging", []string{"--runner", "dataflow", "--input", "gs://b/labels.csv", "--output", "gs://b/out", "--staging_location", out},
			"bowline: --staging_location " + out + " is a local path, but the dataflow runner's workers"},
		{"async on prism in-process", []string{"--input", shapes, "--output", out, "--async"}, "bowline: --async leaves the job running after this process exits"},
	} {
		stderr, code := runCmd(t, c.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if last := lines[len(lines)-1]; code != 2 || !strings.HasPrefix(last, c.want) {
			t.Errorf("%s: exit %d, last line %q; want exit 2 and %q", c.name, code, last, c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run made its local output %s: %v", out, err)
	}
}

// TestAsyncReturnsOnceSubmitted: with --async the command returns as soon
// as the job service accepted the job, exit 0, printing the job's id (one
// the job service knows) and where the report will be, not waiting for
// the job: its workers here are a command that exits at once, so the job
// could never finish.
func TestAsyncReturnsOnceSubmitted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	jobs, err := prism.CreateJobServer(ctx, prism.Options{Port: port})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.CommandContext(ctx, binary, "--input", shapes, "--output", out, "--vocab", "20",
		"--runner", "universal", "--endpoint", fmt.Sprintf("localhost:%d", port),
		"--environment_type", "PROCESS", "--environment_config", `{"command": "/bin/false"}`, "--async")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v after %v:\n%s\n%s", err, time.Since(start), stdout.String(), stderr.String())
	}
	m := regexp.MustCompile(`(?m)^submitted job (\S+) \((bowline-[0-9-]+)\) to universal; it runs on after bowline exits\.\nwhen it finishes: (\S+)\n +(\S+)\n`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no submission message in stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if m[3] != filepath.Join(out, "report.html") || m[4] != filepath.Join(out, "report.json") {
		t.Errorf("report paths %q, %q", m[3], m[4])
	}
	state, err := jobs.GetState(ctx, &jobpb.GetJobStateRequest{JobId: m[1]})
	if err != nil {
		t.Fatalf("the job service does not know job %s: %v", m[1], err)
	}
	if _, err := jobs.Cancel(ctx, &jobpb.CancelJobRequest{JobId: m[1]}); err != nil {
		t.Logf("cancel %s (state %v): %v", m[1], state.GetState(), err)
	}
	if _, err := os.Stat(filepath.Join(out, "report.json")); !os.IsNotExist(err) {
		t.Errorf("report.json exists although the job cannot have run: %v", err)
	}
}
