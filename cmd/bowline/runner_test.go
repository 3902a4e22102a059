//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bowline/bowline/cmd/internal/memlimit"
	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/report"
)

// TestJobServerWithWorkerProcesses runs the job the way a cluster does: on a
// Prism job server started as a process of its own, whose SDK worker is a
// process of its own too (Beam's PROCESS environment, not LOOPBACK, where
// the launcher would run the DoFns itself). The launcher only submits the
// pipeline and stages the worker binary, so a setting the DoFns took from the
// launcher's memory (a global set by a flag) instead of their own fields
// would be missing on the worker. The run's output is read back and compared
// with the same job on Prism in-process: the same files, every Parquet file
// byte for byte, and the same scores.
//
// The worker's process tree: Prism runs testdata/procboot (see there why),
// which execs Beam's Go boot program (sdks/go/container, the entry point of
// Beam's Go SDK container); the boot program fetches the worker binary the
// launcher staged (--worker_binary, the binary under test) from Prism's
// artifact service, copies it to /tmp/bin*/worker and runs it with --worker.
func TestJobServerWithWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prism and Beam's boot program and runs the job twice, on Prism in-process and on a Prism job server")
	}
	// About a minute on an idle 2-core machine with the builds cached;
	// the limits leave room for a loaded one, within go test's 10 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	bins := t.TempDir()
	work := keptOnFailure(t)

	prism, boot, procboot := buildJobServer(ctx, t, bins)

	start := time.Now()
	ref := filepath.Join(work, "in-process")
	launch(ctx, t, work, "in-process", "", "--input", shapes, "--output", ref)
	t.Logf("in-process run: %.1fs", time.Since(start).Seconds())

	start = time.Now()
	js := startJobServer(ctx, t, prism, work, bins)
	semi := filepath.Join(bins, "semi-persist")
	env, err := json.Marshal(map[string]any{
		"command": procboot,
		"env":     map[string]string{"PROCBOOT_BOOT": boot, "PROCBOOT_SEMI_PERSIST": semi},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(work, "job-server")
	watching, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	go js.watch(watching)
	launcher := launch(ctx, t, work, "job-server", js.log, "--input", shapes, "--output", out,
		"--runner=universal", "--endpoint="+js.endpoint,
		"--environment_type=PROCESS", "--environment_config="+string(env),
		"--worker_binary="+binary, "--memory_limit=2500MB")
	stopWatching()
	js.scan()
	t.Logf("job-server run: %.1fs (launcher pid %d, its CPU %.2fs)", time.Since(start).Seconds(), launcher.Pid(), launcher.UserTime().Seconds()+launcher.SystemTime().Seconds())

	// The DoFns ran in a worker process the job server started, from the
	// binary it was sent, not in the launcher.
	workers := js.workers()
	if len(workers) == 0 {
		t.Fatalf("no SDK worker (a process with --worker=true) in the job server's process group; saw %v; job server log %s", js.seen(), js.log)
	}
	booted, err := os.ReadFile(js.log)
	if err != nil {
		t.Fatal(err)
	}
	for pid, w := range workers {
		t.Logf("worker pid %d (parent %d): %s %s", pid, w.ppid, w.exe, strings.Join(w.args[1:], " "))
		if pid == launcher.Pid() || w.exe == binary {
			t.Errorf("worker pid %d runs %s: the launcher's pid %d or binary %s", pid, w.exe, launcher.Pid(), binary)
		}
		if !bytes.Contains(booted, []byte(fmt.Sprintf("procboot: pid %d: %s ", w.ppid, boot))) {
			t.Errorf("worker pid %d: its parent %d is not a boot program procboot started (job server log %s)", pid, w.ppid, js.log)
		}
		if !staged.MatchString(w.exe) {
			t.Errorf("worker pid %d runs %s, not the boot program's copy of the staged binary", pid, w.exe)
		}
	}

	// Each worker took the launcher's memory limit, not the default, from
	// the job's options (cmd/internal/memlimit).
	if started := memlimit.Started(2500e6); !bytes.Contains(booted, []byte(started)) {
		t.Errorf("no worker logged %q (job server log %s)", started, js.log)
	}

	sameRun(ctx, t, ref, out, 96)
}

// staged matches the path the boot program copies the worker binary to
// (a file Beam's boot program leaves behind: the test removes it from a
// /tmp the worker shared with the test).
var staged = regexp.MustCompile(`^(/tmp/bin[0-9]+)/worker( \(deleted\))?$`)

// sameRun checks that the run in out finished, that its manifest is true to
// the directory, and that it is the run in ref: the same files, every
// Parquet file byte for byte (the job's output is a function of its input
// and seed, whatever runs it), the same counts, stage sizes and scores.
// ref and out are directories, local or gs://; the run is of images
// images.
func sameRun(ctx context.Context, t *testing.T, ref, out string, images int64) {
	t.Helper()
	mRef, err := fileio.RunDir(ref).Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mOut, err := fileio.RunDir(out).Manifest(ctx)
	if err != nil {
		t.Fatalf("the job server's run did not finish: %v", err)
	}
	var names, refNames []string
	for _, f := range mRef.Files {
		refNames = append(refNames, f.Name)
	}
	parquet := 0
	for _, f := range mOut.Files {
		names = append(names, f.Name)
		got, err := fileio.ReadBytes(ctx, fileio.Join(out, f.Name))
		if err != nil {
			t.Errorf("manifest lists %s: %v", f.Name, err)
			continue
		}
		if int64(len(got)) != f.Bytes {
			t.Errorf("manifest gives %s %d bytes, it has %d", f.Name, f.Bytes, len(got))
		}
		if filepath.Ext(f.Name) != ".parquet" {
			continue
		}
		parquet++
		if want, err := fileio.ReadBytes(ctx, fileio.Join(ref, f.Name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s differs from the in-process run's (%d bytes against %d; %v)", f.Name, len(got), len(want), err)
		}
	}
	if strings.Join(names, " ") != strings.Join(refNames, " ") {
		t.Errorf("manifest lists\n%v\nthe in-process run's\n%v", names, refNames)
	}
	if parquet == 0 || !strings.Contains(" "+strings.Join(names, " ")+" ", " "+run.ReportName+" ") {
		t.Errorf("manifest lists %d Parquet files and no %s: %v", parquet, run.ReportName, names)
	}

	rRef, err := report.Load(ctx, fileio.RunDir(ref))
	if err != nil {
		t.Fatal(err)
	}
	rOut, err := report.Load(ctx, fileio.RunDir(out))
	if err != nil {
		t.Fatal(err)
	}
	if rOut.Counts != rRef.Counts || rOut.Counts.Images != images {
		t.Errorf("counts %+v, in-process %+v", rOut.Counts, rRef.Counts)
	}
	// Stages start in another order on another runner; their sizes are the
	// same.
	size := func(r report.Report) map[string]string {
		m := map[string]string{}
		for _, s := range r.Stages {
			m[s.Name] = fmt.Sprintf("%d units, %d rows in, %d out", s.Units, s.RowsIn, s.RowsOut)
		}
		return m
	}
	if got, want := size(rOut), size(rRef); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("stages\n%v\nin-process\n%v", got, want)
	}
	key := func(m formats.ReportRow) string { return m.Method + "/" + m.Input + "/" + m.Split }
	want := map[string]formats.ReportRow{}
	for _, m := range rRef.Methods {
		want[key(m)] = m
	}
	heldOut := 0
	for _, m := range rOut.Methods {
		w, ok := want[key(m)]
		switch {
		case !ok:
			t.Errorf("%s: not in the in-process run's report", key(m))
		case m.MAP != w.MAP || m.PrecisionAt10 != w.PrecisionAt10 || m.Queries != w.Queries:
			t.Errorf("%s: mAP %v, P@10 %v over %d queries; in-process %v, %v over %d", key(m), m.MAP, m.PrecisionAt10, m.Queries, w.MAP, w.PrecisionAt10, w.Queries)
		}
		if m.Split == "held-out" {
			heldOut++
			t.Logf("held-out mAP of %s: %.4f (in-process %.4f)", m.Method, m.MAP, w.MAP)
		}
	}
	if len(rOut.Methods) != len(rRef.Methods) || heldOut < 2 {
		t.Errorf("%d report rows, %d held-out; in-process %d rows", len(rOut.Methods), heldOut, len(rRef.Methods))
	}
}

// keptOnFailure returns a directory for the test's logs and outputs,
// removed when the test passes and kept, its path logged, when it fails.
func keptOnFailure(t *testing.T) string {
	dir, err := os.MkdirTemp("", "bowline-runner-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs and outputs kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// buildJobServer builds, into dir, Prism, Beam's Go boot program and
// testdata/procboot (the command of the PROCESS environment), and returns
// their paths.
func buildJobServer(ctx context.Context, t *testing.T, dir string) (prism, boot, procboot string) {
	t.Helper()
	start := time.Now()
	prism = goBuild(ctx, t, dir, "prism", "github.com/apache/beam/sdks/v2/go/cmd/prism")
	boot = goBuild(ctx, t, dir, "boot", "github.com/apache/beam/sdks/v2/go/container")
	procboot = goBuild(ctx, t, dir, "procboot", "./testdata/procboot")
	t.Logf("built prism, boot and procboot in %.1fs", time.Since(start).Seconds())
	return prism, boot, procboot
}

// goBuild builds pkg into dir/name and returns its path.
func goBuild(ctx context.Context, t *testing.T, dir, name, pkg string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", path, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return path
}

// launch runs the binary under test with args, its stdout and stderr in
// dir/name.out and dir/name.err, for at most three minutes, and returns its
// process state. A failure names the logs and shows the end of stderr and
// of the runner's log, if any (where a worker's failure shows).
func launch(ctx context.Context, t *testing.T, dir, name, runnerLog string, args ...string) *os.ProcessState {
	t.Helper()
	return launchProgram(ctx, t, binary, dir, name, runnerLog, args...)
}

// launchProgram is launch for another program than the binary under test.
func launchProgram(ctx context.Context, t *testing.T, program, dir, name, runnerLog string, args ...string) *os.ProcessState {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	stdout, stderr := filepath.Join(dir, name+".out"), filepath.Join(dir, name+".err")
	cmd := exec.CommandContext(ctx, program, args...)
	var err error
	if cmd.Stdout, err = os.Create(stdout); err != nil {
		t.Fatal(err)
	}
	if cmd.Stderr, err = os.Create(stderr); err != nil {
		t.Fatal(err)
	}
	err = cmd.Run()
	cmd.Stdout.(*os.File).Close()
	cmd.Stderr.(*os.File).Close()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", err, ctx.Err())
		}
		msg := fmt.Sprintf("%s run: %v\n%s %s\nstdout %s, stderr %s, ending:\n%s", name, err, filepath.Base(program), strings.Join(args, " "), stdout, stderr, tail(stderr))
		if runnerLog != "" {
			msg += fmt.Sprintf("\nrunner log %s, ending:\n%s", runnerLog, tail(runnerLog))
		}
		t.Fatal(msg)
	}
	return cmd.ProcessState
}

// tail returns the last lines of a log file.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// jobServer is a Prism job server running as a process of its own, in a
// process group of its own with the workers it starts, so that stopping it
// stops them all.
type jobServer struct {
	cmd      *exec.Cmd
	endpoint string // host:port of its job service
	log      string // its stdout and stderr, and its workers'

	mu    sync.Mutex
	procs map[int]proc // processes seen in its group, by pid
	// probes are paths scan looks up in each process's own view of the
	// file system (/proc/<pid>/root), recording those it sees.
	probes []string
}

// proc is a process seen in the job server's group.
type proc struct {
	ppid    int
	exe     string
	args    []string
	mountNS string   // its mount namespace, as /proc/<pid>/ns/mnt names it
	cwd     string   // its working directory, in its own view
	sees    []string // the job server's probes it sees
}

// startJobServer starts prism in dir on a port the system picks, and stops
// it and everything it started when the test ends, failed or not.
func startJobServer(ctx context.Context, t *testing.T, prism, logDir, workDir string) *jobServer {
	t.Helper()
	s := &jobServer{log: filepath.Join(logDir, "prism.log"), procs: map[int]proc{}}
	f, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s.cmd = exec.Command(prism, "--job_port=0", "--serve_http=false", "--log_kind=text")
	// The boot program writes pipeline_options.json into its working
	// directory, which is Prism's.
	s.cmd.Dir = workDir
	s.cmd.Stdout, s.cmd.Stderr = f, f
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", prism, err)
	}
	exited := make(chan struct{})
	go func() { s.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// The worker outlives the boot program Prism kills at the end of a
		// job, but stays in the group.
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		s.scan()
		s.mu.Lock()
		defer s.mu.Unlock()
		self, _ := os.Readlink("/proc/self/ns/mnt")
		for _, p := range s.procs {
			if m := staged.FindStringSubmatch(p.exe); m != nil && p.mountNS == self {
				os.RemoveAll(m[1])
			}
		}
	})

	serving := regexp.MustCompile(`msg="Serving JobManagement" endpoint=(\S+)`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(s.log)
		if m := serving.FindSubmatch(b); m != nil {
			s.endpoint = string(m[1])
			return s
		}
		select {
		case <-exited:
			t.Fatalf("prism exited: %v; log %s:\n%s", s.cmd.ProcessState, s.log, tail(s.log))
		case <-ctx.Done():
			t.Fatalf("prism: %v", ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism does not serve after 30s; log %s:\n%s", s.log, tail(s.log))
		}
	}
}

// watch records the processes of the job server's group every 50 ms until
// ctx is done: a worker lives only while a job runs.
func (s *jobServer) watch(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		s.scan()
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scan records the processes now in the job server's group, but for the
// job server itself.
func (s *jobServer) scan() {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == s.cmd.Process.Pid {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 3 || fields[2] != strconv.Itoa(s.cmd.Process.Pid) {
			continue
		}
		// A process is read again once its executable changes: a child
		// seen between fork and exec still shows its parent's program
		// (the boot program's, for the SDK worker it starts).
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		s.mu.Lock()
		if p, ok := s.procs[pid]; !ok || (err == nil && exe != p.exe) {
			ppid, _ := strconv.Atoi(fields[1])
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			p := proc{ppid: ppid, exe: exe, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}
			p.mountNS, _ = os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
			p.cwd, _ = os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
			for _, probe := range s.probes {
				if _, err := os.Stat(fmt.Sprintf("/proc/%d/root%s", pid, probe)); err == nil {
					p.sees = append(p.sees, probe)
				}
			}
			s.procs[pid] = p
		}
		s.mu.Unlock()
	}
}

// workers returns the SDK workers seen: processes run with --worker=true.
func (s *jobServer) workers() map[int]proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := map[int]proc{}
	for pid, p := range s.procs {
		for _, a := range p.args {
			if a == "--worker=true" {
				w[pid] = p
			}
		}
	}
	return w
}

// seen describes every process seen in the job server's group.
func (s *jobServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var d []string
	for pid, p := range s.procs {
		d = append(d, fmt.Sprintf("%d %s", pid, p.exe))
	}
	return d
}
