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
	"unicode/utf8"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/cmd/internal/cmdtest"
	"github.com/bowline/bowline/cmd/internal/cmdtest/fakejobs"

	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "bowline", &binary) }

// shapes is the project's own labelled test set.
var shapes, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "shapes", "labels.csv"))

// runCmd runs the command and returns its stderr and exit status.
func runCmd(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	_, stderr, code = runIn(t, nil, args...)
	return stderr, code
}

// runIn runs the command with env added to its environment and returns
// its stdout, stderr and exit status.
func runIn(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	return cmdtest.RunCmd(t, cmd)
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
	// Every row but one is refused at ingest for its repeated id, which
	// the check before the job does not look for: the job finds one label.
	repeated := filepath.Join(dir, "repeated.csv")
	img := func(class string, i int) string {
		return filepath.Join(filepath.Dir(shapes), "images", class, fmt.Sprintf("%s-%02d.jpg", class, i))
	}
	os.WriteFile(repeated, []byte("image_id,path,label\n"+
		"a,"+img("class0", 0)+",class0\na,"+img("class0", 1)+",class0\n"+
		"a,"+img("class1", 0)+",class1\na,"+img("class1", 1)+",class1\n"), 0o644)
	// Every image is a dead letter, found by the running job: the
	// check before it reads no image.
	deadFolder := filepath.Join(dir, "dead")
	for name, body := range map[string]string{"a/z.jpg": "", "a/y.jpg": "", "b/x.jpg": "", "b/w.jpg": "junk"} {
		os.MkdirAll(filepath.Join(deadFolder, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(deadFolder, name), []byte(body), 0o644)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no input", []string{"--output", out}, 2, "bowline: --input is required"},
		{"missing input", []string{"--input", filepath.Join(dir, "missing.csv"), "--output", out}, 1, "bowline: cannot read the labels CSV " + filepath.Join(dir, "missing.csv") + ": no such file or directory"},
		{"output is a file", []string{"--input", shapes, "--output", file}, 2, "bowline: --output " + file + ": is a file, not a directory (--help lists every flag)"},
		{"no label column", []string{"--input", noLabel, "--output", out}, 1, `bowline: the labels CSV ` + noLabel + ` has no label column "label" (its columns: image_id,path,category): name it with --label_column`},
		{"unknown learner", []string{"--input", shapes, "--output", out, "--learners", "nope"}, 2, `bowline: --learners: unknown learner "nope"`},
		{"no triplets, found by the running job", []string{"--input", repeated, "--output", out, "--vocab", "20"}, 1, "bowline: triplets: no training triplets"},
		{"no image described", []string{"--input", deadFolder, "--output", out, "--vocab", "20"}, 1,
			"bowline: describe: no image could be described: 4 dead letters (3 at decode, e.g. empty file (0 bytes); 1 at decode, e.g. not an image: the data looks like text"},
	} {
		stderr, code := runCmd(t, c.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		last := lines[len(lines)-1]
		if code != c.code || !strings.HasPrefix(last, c.want) {
			t.Errorf("%s: exit %d, last line %q; want exit %d and %q", c.name, code, last, c.code, c.want)
		}
		// The job's own progress lines (a few KB, one a k-means iteration)
		// may precede the error; the runner's plan runs to tens of KB.
		if strings.Contains(stderr, "bowline: bowline:") || strings.Contains(stderr, "Plan[") || len(stderr) > 16<<10 {
			t.Errorf("%s: stderr holds a doubled prefix or the runner's plan, or is long (%d bytes):\n%s", c.name, len(stderr), stderr)
		}
	}
}

// TestHelpGroupsTheJobsFlags: --help writes to stdout (so that a pager
// reads it) the job's flags by stage, then the runner's, in lines of at
// most 100 characters.
func TestHelpGroupsTheJobsFlags(t *testing.T) {
	help, stderr, code := runIn(t, nil, "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("--help exited %d, stderr:\n%s", code, stderr)
	}
	at := func(s string) int { return strings.Index(help, s) }
	if !(at("--input") >= 0 && at("--input") < at("Vocabulary:") && at("--vocab ") > at("Vocabulary:") &&
		at("--rootsift") > 0 && at("--learners") < at("Beam runner flags")) {
		t.Fatalf("--help is not grouped as expected:\n%s", help)
	}
	input := strings.Join(strings.Fields(help[at("--input"):at("--label_column")]), " ")
	for _, rule := range []string{"A folder's images are labelled by the name of the sub-folder that holds them",
		"an image directly in the folder has no label and is refused as a dead letter", "A file is an image by its content, not its name",
		"The output directory may not hold the input"} {
		if !strings.Contains(input, rule) {
			t.Errorf("--input's help does not say %q:\n%s", rule, input)
		}
	}
	if runner := help[at("Beam runner flags"):]; !strings.Contains(runner, "--runner") || !strings.Contains(runner, "--worker_binary") {
		t.Errorf("the runner flags: %q", runner)
	}
	for i, line := range strings.Split(help, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line %d has %d characters: %q", i+1, n, line)
		}
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

// TestBadFlagValues: every flag of the command that takes a value out of
// its range is refused before anything starts — exit 2, one line naming
// the flag, no output directory, nothing in the temporary directory —
// where --group_images 0 ran 10 s and panicked, and --eval_depth -1 ran as
// if 0. Every flag --help lists is in the table or in cmdline.Unchecked, so a
// new flag cannot be left out.
func TestBadFlagValues(t *testing.T) {
	bad := map[string]string{
		"label_column": "", "part_images": "0", "part_loads": "-1", "memory_limit": "3XB", "vocab": "1", "vocab_sample": "999", "vocab_iter": "0", "vocab_init": "kmeans+++", "akm_checks": "-1",
		"vocab_chunks": "-1", "soft_words": "-1", "soft_sigma": "-1", "tf": "cube", "max_keypoints": "-1", "max_side": "8", "max_pixels": "-1", "sift_double": "16",
		"triplets_per_query": "0", "negatives": "hardest", "positives": "far", "hard_pool": "0", "hard_fraction": "2", "batch_images": "1", "train_shards": "0", "train_rounds": "0", "group_images": "0",
		"group_postings": "-1", "group_loads": "-1", "query_fraction": "1", "train_queries": "-1", "eval_queries": "-1", "eval_depth": "-1",
		"eval_shard_queries": "-1", "max_drift": "-0.5", "learners": "nope", "learner_params": "solis-ada.eta=-1",
		"sweep": "solis-ada.lambda=x", "tune_fraction": "1", "target_sparsity": "1", "rerank": "-1", "expand": "-1",
		// Directories given a file: "is a file, not a directory".
		"output": shapes, "previous": shapes, "compare_to": shapes,
	}
	tmp := t.TempDir()
	out := filepath.Join(t.TempDir(), "out")
	for name, v := range bad {
		_, stderr, code := runIn(t, []string{"TMPDIR=" + tmp}, "--input", shapes, "--output", out, "--"+name, v)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], "bowline: --"+name+" ") && !strings.HasPrefix(lines[0], "bowline: --"+name+":") ||
			!strings.HasSuffix(lines[0], "(--help lists every flag)") {
			t.Errorf("--%s %q: exit %d, stderr:\n%s", name, v, code, stderr)
		}
	}
	// Without --output too: no bowline-NNNN directory is made for a job
	// that does not start.
	if _, _, code := runIn(t, []string{"TMPDIR=" + tmp}, "--input", shapes, "--group_images", "0"); code != 2 {
		t.Errorf("--group_images 0 without --output: exit %d", code)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused runs made their output %s: %v", out, err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("refused runs left %d entries in the temporary directory, the first %s", len(entries), entries[0].Name())
	}
	help, _, _ := runIn(t, nil, "--help")
	end := strings.Index(help, "Beam runner flags")
	if end < 0 {
		t.Fatalf("no runner flags in --help's stdout:\n%s", help)
	}
	listed := regexp.MustCompile(`(?m)^  --([a-z_]+)`).FindAllStringSubmatch(help[:end], -1)
	if len(listed) < 30 {
		t.Fatalf("--help lists %d flags", len(listed))
	}
	for _, m := range listed {
		_, tested := bad[m[1]]
		if _, free := cmdline.Unchecked[m[1]]; !tested && !free {
			t.Errorf("--%s: neither a bad value tested nor in cmdline.Unchecked", m[1])
		}
	}
}

// TestCommandLineErrors: an unknown flag, or a value its type cannot
// parse, is one line "bowline: <cause> (--help lists every flag)", exit
// 2, not the cause without "bowline:" followed by every flag's help.
func TestCommandLineErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--input", shapes, "--nope"}, "bowline: unknown flag --nope (--help lists every flag)\n"},
		{[]string{"--input", shapes, "--vocab", "abc"}, `bowline: --vocab "abc": want a whole number (--help lists every flag)` + "\n"},
		{[]string{"--input", shapes, "--rootsift=yes"}, `bowline: --rootsift "yes": want true or false (--help lists every flag)` + "\n"},
		{[]string{"--input", shapes, "extra"}, `bowline: unexpected arguments ["extra"]: flags are written --name value (--help lists every flag)` + "\n"},
		{[]string{"--input", shapes, "--global", "--dct_scale"}, "bowline: describe: DCT-scaled decoding is for SIFT alone (global features read colour at full size): turn it off with global features\n"},
	} {
		stdout, stderr, code := runIn(t, nil, c.args...)
		if code != 2 || stderr != c.want || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %d bytes; want exit 2 and %q", c.args, code, stderr, len(stdout), c.want)
		}
	}
}

// TestLabelsCheckedBeforeTheJob: a labels CSV the job cannot learn from —
// one label, no rows — is refused before the job starts, in one line,
// creating nothing: neither the output directory nor, without --output,
// a bowline-NNNN directory in the temporary directory. A missing CSV
// likewise. Rows of the wrong width are counted and reported, and the
// job goes on.
func TestLabelsCheckedBeforeTheJob(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var one strings.Builder
	one.WriteString("image_id,path,label\n")
	for i := range 30 {
		fmt.Fprintf(&one, "i%d,%s,class0\n", i, filepath.Join(filepath.Dir(shapes), "images", "class0", fmt.Sprintf("class0-%02d.jpg", i%16)))
	}
	oneLabel := write("one-label.csv", one.String())
	headerOnly := write("header.csv", "image_id,path,label\n")
	empty := write("empty.csv", "")
	missing := filepath.Join(dir, "missing.csv")
	tmp := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		input, want string
	}{
		{oneLabel, "bowline: the labels CSV " + oneLabel + ` (column "label"): no training triplets: the 30 labelled images all carry one label ("class0"); learning needs at least 2 labels`},
		{headerOnly, "bowline: the labels CSV " + headerOnly + " has no rows below its header"},
		{empty, "bowline: the labels CSV " + empty + " is empty: it has no header row (image_id,path,label), nor any row"},
		{missing, "bowline: cannot read the labels CSV " + missing + ": no such file or directory"},
	} {
		for _, args := range [][]string{{"--input", c.input, "--output", out}, {"--input", c.input}} {
			_, stderr, code := runIn(t, []string{"TMPDIR=" + tmp}, args...)
			if code != 1 || strings.TrimRight(stderr, "\n") != c.want {
				t.Errorf("%q: exit %d, stderr:\n%s\nwant exit 1 and %q", args, code, stderr, c.want)
			}
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("refused runs made their output %s: %v", out, err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("refused runs left %d entries in the temporary directory, the first %s", len(entries), entries[0].Name())
	}
}

// TestOverwriteSaysWhatItRemoves: the refusal of a directory holding
// other files, and --help, say what --overwrite removes — the files
// directly in the directory that the run does not write, not its
// sub-directories — and a run with --overwrite does exactly that. (The
// refusal named the sub-directory and promised to replace "its content".)
func TestOverwriteSaysWhatItRemoves(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(out, "sub"), 0o755)
	os.WriteFile(filepath.Join(out, "sub", "keep.txt"), []byte("y"), 0o644)
	const removes = "the files directly in it that it did not write (sub-directories are kept)"
	args := []string{"--input", shapes, "--output", out, "--vocab", "20", "--learners", "solis-ada"}
	stderr, code := runCmd(t, args...)
	if want := "bowline: output " + out + " holds files that are not a bowline run's (notes.txt, sub/): give an empty or new directory, or --overwrite to have the run remove, when it finishes, " + removes + "\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
	help, _, _ := runIn(t, nil, "--help")
	if i := strings.Index(help, "--overwrite\n"); i < 0 || !strings.Contains(strings.Join(strings.Fields(help[i:i+400]), " "),
		"it removes every file directly in the directory that it did not write; sub-directories, and what they hold, are kept") {
		t.Errorf("--help does not say what --overwrite removes:\n%s", help[i:])
	}
	stderr, code = runCmd(t, append(args, "--overwrite")...)
	if code != 0 {
		t.Fatalf("--overwrite: exit %d:\n%s", code, stderr)
	}
	// It says so before the job, and logs each file it removes.
	for _, want := range []string{"output " + out + ": --overwrite: when it finishes, the run removes 1 file directly in it that it does not write: notes.txt",
		"output: removed " + filepath.Join(out, "notes.txt") + ": not a bowline run's file (--overwrite)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--overwrite's stderr does not say %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt was not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "sub", "keep.txt")); err != nil {
		t.Errorf("sub/keep.txt was removed: %v", err)
	}
}

// TestOverwriteKeepsTheInput: an output directory that holds the job's
// input — its labels CSV, its folder — is refused with or without
// --overwrite, in one line naming the flag, exit 2, before anything is
// created or removed. (--input ds/labels.csv --output ds --overwrite
// exited 0 having removed labels.csv and NOTES.md, and a folder input lost
// its top-level photos.)
func TestOverwriteKeepsTheInput(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "ds")
	images := filepath.Join(filepath.Dir(shapes), "images")
	for _, class := range []string{"class0", "class1"} {
		os.MkdirAll(filepath.Join(ds, "images", class), 0o755)
		for i := range 3 {
			name := fmt.Sprintf("%s-%02d.jpg", class, i)
			data, err := os.ReadFile(filepath.Join(images, class, name))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ds, "images", class, name), data, 0o644)
		}
	}
	os.WriteFile(filepath.Join(ds, "images", "top.jpg"), []byte("a top-level photo"), 0o644)
	os.WriteFile(filepath.Join(ds, "labels.csv"), []byte("image_id,path,label\na,images/class0/class0-00.jpg,class0\nb,images/class0/class0-01.jpg,class0\nc,images/class1/class1-00.jpg,class1\n"), 0o644)
	os.WriteFile(filepath.Join(ds, "NOTES.md"), []byte("x\n"), 0o644)
	before := tree(t, ds)
	for _, c := range []struct{ input, output, what string }{
		{filepath.Join(ds, "labels.csv"), ds, "the input labels CSV " + filepath.Join(ds, "labels.csv")},
		{filepath.Join(ds, "images"), ds, "the input folder " + filepath.Join(ds, "images")},
		{filepath.Join(ds, "images"), filepath.Join(ds, "images"), "the input folder " + filepath.Join(ds, "images")},
		{filepath.Join(ds, "labels.csv"), filepath.Join(ds, "images", "class0"), "2 images the labels CSV " + filepath.Join(ds, "labels.csv") + " names"},
	} {
		for _, overwrite := range []bool{true, false} {
			args := []string{"--input", c.input, "--output", c.output, "--vocab", "20"}
			if overwrite {
				args = append(args, "--overwrite")
			}
			stderr, code := runCmd(t, args...)
			want := "bowline: --output " + c.output + " holds " + c.what
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, "(--help lists every flag)\n") {
				t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line %q…", args, code, stderr, want)
			}
		}
	}
	if after := tree(t, ds); !reflect.DeepEqual(after, before) {
		t.Errorf("the refused runs changed the input directory:\n%q\nwas\n%q", after, before)
	}
}

// tree lists every file under dir, relative, with its size.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, fmt.Sprintf("%s %d", rel, fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFolderCheckedBeforeTheJob: a folder the job cannot learn from — one
// label — is refused before the job starts, in one line, creating
// nothing. (It was described in full, leaving 8 Parquet files, before
// the job found it had no triplet.)
func TestFolderCheckedBeforeTheJob(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "oneclass")
	os.MkdirAll(filepath.Join(one, "a"), 0o755)
	for i := range 16 {
		name := fmt.Sprintf("class0-%02d.jpg", i)
		data, err := os.ReadFile(filepath.Join(filepath.Dir(shapes), "images", "class0", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(one, "a", name), data, 0o644)
	}
	tmp := t.TempDir()
	out := filepath.Join(dir, "o")
	want := "bowline: the folder " + one + ` (labelled by sub-folder): no training triplets: the 16 labelled images all carry one label ("a"); learning needs at least 2 labels` + "\n"
	for _, args := range [][]string{{"--input", one, "--output", out, "--vocab", "50"}, {"--input", one}} {
		_, stderr, code := runIn(t, []string{"TMPDIR=" + tmp}, args...)
		if code != 1 || stderr != want {
			t.Errorf("%q: exit %d, stderr %q; want exit 1 and %q", args, code, stderr, want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run made its output %s: %v", out, err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
		t.Errorf("a refused run left %d entries in the temporary directory", len(entries))
	}
}

// TestWorkersTakeTheMemoryLimit: the job bowline submits has each worker
// set the memory limit in force (fakejobs.CheckMemoryLimit).
func TestWorkersTakeTheMemoryLimit(t *testing.T) {
	fakejobs.CheckMemoryLimit(t, binary, "--input", shapes, "--output", filepath.Join(t.TempDir(), "out"), "--overwrite")
}
