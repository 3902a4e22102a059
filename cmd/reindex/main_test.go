package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/cmd/internal/cmdtest"
	"github.com/bowline/bowline/cmd/internal/cmdtest/fakejobs"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "reindex", &binary) }

// shapes is the project's own labelled test set.
var shapes, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "shapes", "labels.csv"))

// runCmd runs the command and returns its stdout, stderr and exit status.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir()
	return cmdtest.RunCmd(t, cmd)
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestCommandLine: what can be refused before a night starts is refused
// with exit status 2 and one line naming the flag.
func TestCommandLine(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--input", shapes}, "reindex: --root is required"},
		{[]string{"--input", shapes, "--root", root, "--async"}, "reindex: --async"},
		{[]string{"--input", shapes, "--root", root, "--learners", "solis-ada", "--serving_learner", "oasis-diag"}, "the serving learner oasis-diag is not among the learners trained"},
		{[]string{"--input", "gs://b/labels.csv", "--root", root, "--runner", "dataflow"}, "--root " + root + " is a local path"},
		{[]string{"--input", shapes, "--root", root, "--max_dead_rate", "2"}, "reindex: --max_dead_rate 2: must be in [0, 1]"},
		// A Flex Template launch: Dataflow only writes the job.
		{[]string{"--input", "gs://b/labels.csv", "--root", "gs://b/root", "--runner", "dataflow", "--template_location", "gs://b/job.json"}, "reindex: --template_location: Dataflow would return before the job ran"},
		{[]string{"--input", "gs://b/labels.csv", "--root", "gs://b/root", "--runner", "dataflow", "--dry_run"}, "reindex: --dry_run: Dataflow would return before the job ran"},
		{[]string{"--input", shapes, "--root", root, "--vocab", "1"}, "reindex: --vocab 1: must be 2 or more"},
		// reindex's own flags, beside the job's (cmd/internal/cli's
		// TestEveryJobFlagIsChecked).
		{[]string{"--input", shapes, "--root", root, "--keep", "-1"}, "reindex: --keep -1: must be 0 or more"},
		{[]string{"--input", shapes, "--root", root, "--max_map_drop", "-0.1"}, "reindex: --max_map_drop -0.1: must be a number, 0 or more"},
		{[]string{"--input", shapes, "--root", root, "--max_shrink", "1.5"}, "reindex: --max_shrink 1.5: must be in [0, 1]"},
		{[]string{"--input", shapes, "--root", root, "--serving_learner", ""}, `reindex: --serving_learner "": must not be empty`},
		{[]string{"--input", shapes, "--root", root, "--max_drift", "-1"}, "reindex: --max_drift -1: must be a number, 0 or more"},
		{[]string{"--input", shapes, "--root", root, "--nope"}, "reindex: unknown flag --nope (--help lists every flag)"},
		{[]string{"--input", shapes, "--root", root, "extra"}, `reindex: unexpected arguments ["extra"]: flags are written --name value (--help lists every flag)`},
		// A root that is a file, not the lock's "not a directory" from
		// below it.
		{[]string{"--input", shapes, "--root", shapes}, "reindex: --root " + shapes + ": is a file, not a directory (--help lists every flag)"},
	} {
		_, stderr, code := runCmd(t, tc.args...)
		if code != 2 || !strings.Contains(lastLine(stderr), tc.want) {
			t.Errorf("%v: exit %d, last line %q; want 2 and %q", tc.args, code, lastLine(stderr), tc.want)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("refused command lines wrote into the root: %v", entries)
	}
}

// TestNights: a first night publishes; a second, with a corrupt image
// and a dead-letter limit below its rate, is refused: exit status 1, one
// line saying why, published.json untouched.
func TestNights(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	job := []string{"--root", root, "--vocab", "100", "--learners", "solis-ada"}
	stdout, stderr, code := runCmd(t, append([]string{"--input", shapes}, job...)...)
	if code != 0 {
		t.Fatalf("night 1: exit %d\n%s", code, stderr)
	}
	pub, err := os.ReadFile(filepath.Join(root, "published.json"))
	if err != nil || !strings.Contains(stdout, "published: ") || !strings.Contains(stdout, "pass  dead_rate") {
		t.Fatalf("night 1 published %s (%v); stdout:\n%s", pub, err, stdout)
	}

	// The shapes set, with absolute paths, plus a truncated image.
	f, err := os.Open(shapes)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		r[1] = filepath.Join(filepath.Dir(shapes), r[1])
	}
	good, err := os.ReadFile(rows[1][1])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.jpg")
	if err := os.WriteFile(corrupt, good[:len(good)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	rows = append(rows, []string{"corrupt", corrupt, "class0", ""})
	var b bytes.Buffer
	csv.NewWriter(&b).WriteAll(rows)
	in := filepath.Join(dir, "labels.csv")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code = runCmd(t, append([]string{"--input", in, "--max_dead_rate", "0.005"}, job...)...)
	last := lastLine(stderr)
	if code != 1 || !strings.HasPrefix(last, "reindex: night ") || !strings.Contains(last, "refused by the quality gate: 1 dead letters of 97 images") {
		t.Fatalf("night 2: exit %d, last line %q; want 1 and the gate's refusal", code, last)
	}
	if !strings.Contains(stdout, "FAIL  dead_rate") || !strings.Contains(stdout, "incremental") {
		t.Errorf("night 2's stdout:\n%s", stdout)
	}
	after, err := os.ReadFile(filepath.Join(root, "published.json"))
	if err != nil || !bytes.Equal(after, pub) {
		t.Errorf("published.json changed by a refused night:\n%s\nwas\n%s", after, pub)
	}
	runs, _ := os.ReadDir(filepath.Join(root, "runs"))
	if len(runs) != 2 {
		t.Fatalf("%d runs, want both nights'", len(runs))
	}
	if _, err := os.Stat(filepath.Join(root, "runs", runs[1].Name(), "gate.json")); err != nil {
		t.Errorf("the refused run has no gate.json: %v", err)
	}
}

// TestWorkersTakeTheMemoryLimit: the job a night submits has each worker
// set the memory limit in force (fakejobs.CheckMemoryLimit).
func TestWorkersTakeTheMemoryLimit(t *testing.T) {
	fakejobs.CheckMemoryLimit(t, binary, "--input", shapes, "--root", t.TempDir())
}
