package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/cmd/internal/cmdtest"
	"github.com/bowline/bowline/cmd/internal/cmdtest/fakejobs"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "retrain", &binary) }

// TestBadFlagValues: every flag of retrain that takes a value out of its
// range, or that does not exist, is refused before the run is read, exit
// 2, in one line naming the flag; every flag --help lists is in the table
// or in cmdline.Unchecked.
func TestBadFlagValues(t *testing.T) {
	aFile, err := filepath.Abs("main.go")
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"shards": "0", "train_shards": "0", "train_rounds": "-1", "query_fraction": "1.5", "eval_queries": "-1",
		"train_queries": "-1", "triplets_per_query": "0", "negatives": "hardest", "positives": "far", "hard_pool": "0", "hard_fraction": "2",
		"learners": "nope", "learner_params": "solis-ada.lambda=-1", "sweep": "solis-ada.lambda=1,1",
		"tune_fraction": "1", "target_sparsity": "1", "rerank": "-1", "expand": "-1",
		"part_loads": "-1", "memory_limit": "3XB", "group_images": "0", "group_postings": "-1", "group_loads": "-1",
		// Directories given a file: "is a file, not a directory".
		"run": aFile, "output": aFile, "compare_to": aFile,
	}
	out := filepath.Join(t.TempDir(), "out")
	run := func(args ...string) (stdout, stderr string, code int) { return cmdtest.Run(t, binary, args...) }
	for name, v := range bad {
		// The run does not exist: the flag is refused before it is read.
		_, stderr, code := run("--run", "/nonexistent/run", "--output", out, "--"+name, v)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "retrain: --"+name) || !strings.HasSuffix(lines[0], "(--help lists every flag)") {
			t.Errorf("--%s %q: exit %d, stderr:\n%s", name, v, code, stderr)
		}
	}
	if _, stderr, code := run("--run", "r", "--nope"); code != 2 || stderr != "retrain: unknown flag --nope (--help lists every flag)\n" {
		t.Errorf("--nope: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused runs made their output %s: %v", out, err)
	}
	help, stderr, code := run("--help")
	end := strings.Index(help, "Beam runner flags")
	if code != 0 || stderr != "" || end < 0 {
		t.Fatalf("--help: exit %d, stdout:\n%s\nstderr:\n%s", code, help, stderr)
	}
	listed := regexp.MustCompile(`(?m)^  --([a-z_]+)`).FindAllStringSubmatch(help[:end], -1)
	if len(listed) < 10 {
		t.Fatalf("--help lists %d flags", len(listed))
	}
	for _, m := range listed {
		_, tested := bad[m[1]]
		if _, free := cmdline.Unchecked[m[1]]; !tested && !free {
			t.Errorf("--%s: neither a bad value tested nor in cmdline.Unchecked", m[1])
		}
	}
}

// TestOutputMayNotHoldTheRun: an output directory that is, or holds, the
// run retrain reads is refused however it is spelt, in one line naming
// the flag, exit 2, and the run is left as it was. (The check compared
// the two strings: --run r --output ./r/ went on, and finishing the
// retrain would have removed the run's files.)
func TestOutputMayNotHoldTheRun(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "r")
	codebook := filepath.Join(run, "codebook-00000-of-00001.parquet")
	if err := fileio.WriteFile(context.Background(), codebook, []formats.Word{{WordID: 0, Centroid: []float32{1}}, {WordID: 1, Centroid: []float32{2}}}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(run, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ run, output string }{{"r", "./r/"}, {run, "r"}, {"r", link}, {filepath.Join("r", "..", "r"), dir}} {
		cmd := exec.Command(binary, "--run", c.run, "--output", c.output, "--overwrite")
		cmd.Dir = dir
		_, stderr, code := cmdtest.RunCmd(t, cmd)
		want := "retrain: --output " + c.output + " holds the run --run names, " + c.run + ": retrain writes a run of its own"
		if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "(--help lists every flag)\n") {
			t.Errorf("--run %s --output %s: exit %d, stderr %q; want exit 2 and %q…", c.run, c.output, code, stderr, want)
		}
	}
	if entries, _ := os.ReadDir(run); len(entries) != 1 {
		t.Errorf("the run holds %d files, want its codebook alone", len(entries))
	}
}

// TestWorkersTakeTheMemoryLimit: the job retrain submits has each worker
// set the memory limit in force (fakejobs.CheckMemoryLimit).
func TestWorkersTakeTheMemoryLimit(t *testing.T) {
	fakejobs.CheckMemoryLimit(t, binary, "--run", "../../testdata/legacy-run", "--output", filepath.Join(t.TempDir(), "out"), "--overwrite")
}
