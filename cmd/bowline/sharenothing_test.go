//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/bowline/bowline/formats/published"
	rundir "github.com/bowline/bowline/formats/run"
)

// TestShareNothing runs the job and two reindex nights as Dataflow or Flink
// would: on a Prism job server whose PROCESS workers each start in a mount
// namespace of their own (testdata/procboot under util-linux's unshare),
// with a private /tmp and empty file systems over the checkout, the
// launcher's working and temporary directories and the Go caches. The
// input, the outputs and the nights' root are in a bucket on a GCS
// emulator, the only thing the launcher and the workers share. Each run
// must equal the same run on Prism in-process, every Parquet file byte for
// byte: a DoFn that read a file the launcher or another worker wrote on
// local disk, or anything under the checkout, fails the job or changes
// its output.
func TestShareNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prism, Beam's boot program and reindex and runs the job and two nights in-process and on a Prism job server")
	}
	unshare := isolation(t)
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	bins := t.TempDir()
	work := keptOnFailure(t)

	prism, boot, procboot := buildJobServer(ctx, t, bins)
	reindex := goBuild(ctx, t, bins, "reindex", "../reindex")

	const bucket = "share-nothing"
	emulator := gcstest.Start(t, bucket)
	input := "gs://" + bucket + "/shapes/labels.csv"
	upload(ctx, t, filepath.Dir(shapes), fileio.Join("gs://"+bucket, "shapes"))

	hide := hidden(t)
	stage, err := os.MkdirTemp(bins, "worker-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	env, err := json.Marshal(map[string]any{
		"command": procboot,
		"env": map[string]string{
			"PROCBOOT_BOOT":         boot,
			"PROCBOOT_SEMI_PERSIST": "/tmp/semi-persist",
			"PROCBOOT_UNSHARE":      unshare,
			"PROCBOOT_STAGE":        stage,
			"PROCBOOT_HIDE":         strings.Join(hide, string(filepath.ListSeparator)),
			// What a cluster's workers are given: the bucket's address.
			"STORAGE_EMULATOR_HOST": emulator,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	js := startJobServer(ctx, t, prism, work, bins)
	checkout := moduleRoot(t)
	// What a worker must not see: the checkout, the binaries the launcher
	// runs and stages, the job server's directory.
	js.probes = []string{filepath.Join(checkout, "go.mod"), binary, reindex, bins}
	jobServer := []string{"--runner=universal", "--endpoint=" + js.endpoint,
		"--environment_type=PROCESS", "--environment_config=" + string(env)}
	// run runs program with args, in-process (name "in-process…") or on
	// the job server, and checks that its workers shared nothing.
	run := func(program, name string, args ...string) {
		t.Helper()
		start := time.Now()
		if !strings.HasPrefix(name, "in-process") {
			args = append(args, jobServer...)
			before := len(js.workers())
			watching, stopWatching := context.WithCancel(ctx)
			defer func() {
				stopWatching()
				js.scan()
				checkIsolated(t, js, before)
			}()
			go js.watch(watching)
		}
		launchProgram(ctx, t, program, work, name, js.log, args...)
		t.Logf("%s: %.1fs", name, time.Since(start).Seconds())
	}

	// The job with more of its stages than the nights' defaults: global
	// features and a dense learner, approximate k-means over chunks,
	// sharded training, re-ranking with query expansion, three parts.
	wide := []string{"--input", input, "--global", "--learners", "solis-ada,itq", "--akm", "--vocab_chunks", "2",
		"--train_shards", "2", "--train_rounds", "2", "--rerank", "10", "--expand", "2", "--part_images", "40"}
	ref, out := "gs://"+bucket+"/in-process", "gs://"+bucket+"/job-server"
	run(binary, "in-process", append(wide, "--output", ref)...)
	run(binary, "job-server", append(wide, "--output", out)...)
	sameRun(ctx, t, ref, out, 96)

	// The nights: a full run on 84 of the 96 images, then one starting
	// from it, describing the 12 others and reading the rest (features,
	// vocabulary, learners' states) from the bucket.
	first := "gs://" + bucket + "/shapes/first.csv"
	if err := fileio.WriteBytes(ctx, first, firstNight(t)); err != nil {
		t.Fatal(err)
	}
	refRoot, outRoot := "gs://"+bucket+"/nights-in-process", "gs://"+bucket+"/nights-job-server"
	for i, in := range []string{first, input} {
		night := i + 1
		run(reindex, fmt.Sprintf("in-process-night%d", night), "--input", in, "--root", refRoot)
		run(reindex, fmt.Sprintf("job-server-night%d", night), "--input", in, "--root", outRoot)
		pRef, _, err := published.Read(ctx, refRoot)
		if err != nil {
			t.Fatal(err)
		}
		pOut, _, err := published.Read(ctx, outRoot)
		if err != nil {
			t.Fatalf("night %d on the job server published nothing: %v", night, err)
		}
		if night == 2 {
			l, err := fileio.RunDir(pOut.RunURI).Lineage(ctx)
			if err != nil || l.Previous == "" || l.Images != (rundir.LineageImages{Listed: 96, Described: 12, Carried: 84}) || !l.Vocabulary.Kept || len(l.WarmStarted) == 0 {
				t.Errorf("night 2 did not start from night 1: %+v (%v)", l, err)
			}
		}
		sameRun(ctx, t, pRef.RunURI, pOut.RunURI, []int64{84, 96}[i])
	}
}

// firstNight returns testdata/shapes/labels.csv without images 14 and 15
// of each label: 84 of its 96 images.
func firstNight(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(shapes)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	kept := 0
	for i, line := range strings.SplitAfter(string(data), "\n") {
		id, _, _ := strings.Cut(line, ",")
		if i > 0 && (line == "" || strings.HasSuffix(id, "-14") || strings.HasSuffix(id, "-15")) {
			continue
		}
		b.WriteString(line)
		kept++
	}
	if kept != 1+84 {
		t.Fatalf("%d rows of %s kept, want 84 and the header: the shapes set changed", kept-1, shapes)
	}
	return []byte(b.String())
}

// isolation returns unshare's options that start a process in a mount
// namespace of its own where it may mount file systems: as root a new
// mount namespace, otherwise in a new user namespace too. It skips the
// test where neither works here (no unshare, or user namespaces refused).
func isolation(t *testing.T) string {
	t.Helper()
	opts := "--mount --propagation private"
	if os.Geteuid() != 0 {
		opts = "--user --map-root-user " + opts
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skipf("no unshare (util-linux) to start workers in their own mount namespace: %v", err)
	}
	args := append(strings.Fields(opts), "--", "sh", "-c", "mount -t tmpfs tmpfs /mnt")
	if out, err := exec.Command("unshare", args...).CombinedOutput(); err != nil {
		t.Skipf("unshare %s cannot mount a tmpfs here: %v\n%s", opts, err, out)
	}
	return opts
}

// hidden returns the directories a worker must not see: the checkout
// (holding the launcher's working directory and testdata), the temporary
// directory (the launcher's files, the binaries it runs and stages, the
// job server's) and the Go caches.
func hidden(t *testing.T) []string {
	t.Helper()
	dirs := []string{moduleRoot(t), os.TempDir()}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	dirs = append(dirs, strings.Fields(string(out))...)
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// moduleRoot returns the directory of the checkout's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "go.mod") {
		t.Fatalf("go env GOMOD: %q, %v", out, err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// upload copies the files under dir to the directory to (gs://…).
func upload(ctx context.Context, t *testing.T, dir, to string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return fileio.WriteBytes(ctx, fileio.Join(to, filepath.ToSlash(rel)), data)
	})
	if err != nil {
		t.Fatalf("upload %s: %v", dir, err)
	}
}

// checkIsolated checks that the job server started workers beyond the
// first skip it saw, and that each ran in a mount namespace of its own,
// in its private /tmp, seeing none of the job server's probes.
func checkIsolated(t *testing.T, js *jobServer, skip int) {
	t.Helper()
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	workers := js.workers()
	if len(workers) <= skip {
		t.Fatalf("no new SDK worker (a process with --worker=true) in the job server's process group; saw %v; job server log %s", js.seen(), js.log)
	}
	for pid, w := range workers {
		if w.mountNS == "" || w.mountNS == self {
			t.Errorf("worker pid %d runs in mount namespace %q, the test's (%s)", pid, w.mountNS, self)
		}
		if len(w.sees) > 0 {
			t.Errorf("worker pid %d sees %v", pid, w.sees)
		}
		if w.cwd != "/tmp" {
			t.Errorf("worker pid %d works in %q, not its own /tmp", pid, w.cwd)
		}
		if !staged.MatchString(w.exe) {
			t.Errorf("worker pid %d runs %s, not the boot program's copy of the staged binary", pid, w.exe)
		}
	}
}
