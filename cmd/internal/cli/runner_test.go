package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bowline/bowline/cmd/internal/cmdline"
)

func TestWorkers(t *testing.T) {
	for _, c := range []struct {
		r    Runner
		want Workers
	}{
		{Runner{}, InProcess},
		{Runner{Name: "prism"}, InProcess},
		{Runner{Name: "PrismRunner", EnvironmentType: "LOOPBACK"}, InProcess},
		{Runner{Name: "prism", EnvironmentType: "process"}, ThisMachine},
		{Runner{Name: "direct"}, InProcess},
		{Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "LOOPBACK"}, InProcess},
		{Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "PROCESS"}, ThisMachine},
		{Runner{Name: "portable", Endpoint: "127.0.0.1:8073", EnvironmentType: "EXTERNAL", EnvironmentConfig: "localhost:50000"}, ThisMachine},
		{Runner{Name: "universal", Endpoint: "[::1]:8073", EnvironmentType: "process"}, ThisMachine},
		{Runner{Name: "prism", Endpoint: "localhost:8073", EnvironmentType: "process"}, ThisMachine},
		// A worker pool on another machine, a job server elsewhere, DOCKER.
		{Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "EXTERNAL", EnvironmentConfig: "pool.internal:50000"}, Remote},
		{Runner{Name: "universal", Endpoint: "jobs.internal:8073", EnvironmentType: "PROCESS"}, Remote},
		{Runner{Name: "universal", Endpoint: "localhost:8073"}, Remote},
		{Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "DOCKER"}, Remote},
		{Runner{Name: "prism", Endpoint: "localhost:8073"}, Remote},
		// Clusters, whatever the environment but LOOPBACK.
		{Runner{Name: "flink", Endpoint: "localhost:8099", EnvironmentType: "EXTERNAL", EnvironmentConfig: "localhost:50000"}, Remote},
		{Runner{Name: "FlinkRunner", Endpoint: "localhost:8099", EnvironmentType: "PROCESS"}, Remote},
		{Runner{Name: "flink", Endpoint: "localhost:8099", EnvironmentType: "loopback"}, InProcess},
		{Runner{Name: "spark", Endpoint: "localhost:8099"}, Remote},
		{Runner{Name: "samza", Endpoint: "localhost:8099"}, Remote},
		{Runner{Name: "dataflow"}, Remote},
		{Runner{Name: "DataflowRunner", EnvironmentType: "LOOPBACK"}, Remote},
	} {
		if got := c.r.Workers(); got != c.want {
			t.Errorf("%+v: workers %v, want %v", c.r, got, c.want)
		}
	}
}

// TestCheckRunner: local paths stay fine wherever the workers share this
// machine's files; elsewhere the first local one is refused with one line
// naming its flag.
func TestCheckRunner(t *testing.T) {
	prism := Runner{}
	flink := Runner{Name: "flink", Endpoint: "localhost:8099", EnvironmentType: "DOCKER"}
	dataflow := Runner{Name: "dataflow"}
	jobServer := Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "PROCESS"}
	local := []PathFlag{{Name: "input", Value: "/data/labels.csv"}, {Name: "output", Value: "/tmp/out", Required: true}}
	remote := []PathFlag{{Name: "input", Value: "gs://b/labels.csv"}, {Name: "output", Value: "gs://b/out", Required: true}}
	synthetic := []PathFlag{{Name: "input", Value: "synthetic:1000"}, {Name: "output", Value: "gs://b/out", Required: true}}
	noOutput := []PathFlag{{Name: "input", Value: "gs://b/labels.csv"}, {Name: "output", Required: true}}
	staging := []PathFlag{{Name: "staging_location", Value: "/tmp/staging"}, {Name: "temp_location"}}
	for _, c := range []struct {
		name     string
		r        Runner
		async    bool
		paths    []PathFlag
		dataflow []PathFlag
		want     string // "" for no error
	}{
		{"prism, local paths", prism, false, local, nil, ""},
		{"loopback job server, local paths", Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "LOOPBACK"}, false, local, nil, ""},
		{"process workers on this machine, local paths", jobServer, false, local, nil, ""},
		{"process workers on this machine, async", jobServer, true, local, nil, ""},
		{"flink, local input", flink, false, local, nil, "--input /data/labels.csv is a local path, but the flink runner's workers run on other machines and cannot reach it: give a gs:// path"},
		{"flink, local output", flink, false, []PathFlag{remote[0], local[1]}, nil, "--output /tmp/out is a local path"},
		{"flink, file: output", flink, false, []PathFlag{remote[0], {Name: "output", Value: "file:///tmp/out"}}, nil, "--output file:///tmp/out is a local path"},
		{"flink, no output", flink, false, noOutput, nil, "--output is required on the flink runner, whose workers run on other machines: give a gs:// path"},
		{"flink, gs:// paths", flink, true, remote, nil, ""},
		{"flink, synthetic input", flink, false, synthetic, nil, ""},
		{"flink without an endpoint", Runner{Name: "flink"}, false, remote, nil, "--runner flink submits to a job service: name it with --endpoint"},
		{"universal without an endpoint", Runner{Name: "universal", EnvironmentType: "LOOPBACK"}, false, local, nil, "--runner universal submits to a job service"},
		{"dataflow, gs:// paths", dataflow, true, remote, []PathFlag{{Name: "staging_location", Value: "gs://b/staging"}}, ""},
		{"dataflow, local staging", dataflow, false, remote, staging, "--staging_location /tmp/staging is a local path, but the dataflow runner's workers"},
		{"dataflow, local temp", dataflow, false, remote, []PathFlag{{Name: "temp_location", Value: "tmp"}}, "--temp_location tmp is a local path"},
		{"staging is only dataflow's", flink, false, remote, staging, ""},
		{"async on prism in-process", prism, true, local, nil, "--async leaves the job running after this process exits, but the prism runner's workers run in this process"},
		{"async with loopback workers", Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "loopback"}, true, local, nil, "--async leaves the job running"},
	} {
		err := CheckRunner(c.r, c.async, c.paths, c.dataflow)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q…", c.name, err, c.want)
		case err != nil && (!errors.As(err, new(cmdline.UsageError)) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: %q is not a one-line usage error", c.name, err)
		}
	}
}

func TestSelfWorker(t *testing.T) {
	for _, c := range []struct {
		w           Workers
		goos, arch  string
		cgo         bool
		machine     string
		want        bool
		description string
	}{
		{InProcess, "linux", "amd64", false, "", false, "no binary is staged in process"},
		{ThisMachine, "linux", "amd64", true, "", true, "any build runs on this machine"},
		{ThisMachine, "darwin", "arm64", true, "", true, "any build runs on this machine"},
		{Remote, "linux", "amd64", false, "", true, "a static linux/amd64 build"},
		{Remote, "linux", "amd64", false, "n2-standard-4", true, "a static linux/amd64 build"},
		{Remote, "linux", "amd64", true, "", false, "cgo links the launcher's libc"},
		{Remote, "darwin", "arm64", false, "", false, "a laptop's build"},
		{Remote, "linux", "amd64", false, "t2a-standard-4", false, "Arm workers"},
	} {
		if got := SelfWorker(c.w, c.goos, c.arch, c.cgo, c.machine); got != c.want {
			t.Errorf("SelfWorker(%v, %s/%s, cgo %v, %q) = %v, want %v: %s", c.w, c.goos, c.arch, c.cgo, c.machine, got, c.want, c.description)
		}
	}
}

// TestUseSelfAsWorker: --worker_binary is set to the program where it
// can be the worker, and a given one is kept.
func TestUseSelfAsWorker(t *testing.T) {
	self := func() (string, error) { return "/bin/bowline", nil }
	newFlags := func(args ...string) *flag.FlagSet {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.String("worker_binary", "", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	here := Runner{Name: "universal", Endpoint: "localhost:8073", EnvironmentType: "PROCESS"}
	fs := newFlags()
	if got, err := UseSelfAsWorker(fs, here, self); err != nil || got != "/bin/bowline" || flagValue(fs, "worker_binary") != "/bin/bowline" {
		t.Errorf("on this machine: set %q, flag %q, %v", got, flagValue(fs, "worker_binary"), err)
	}
	fs = newFlags("--worker_binary", "/w")
	if got, err := UseSelfAsWorker(fs, here, self); err != nil || got != "" || flagValue(fs, "worker_binary") != "/w" {
		t.Errorf("given --worker_binary: set %q, flag %q, %v", got, flagValue(fs, "worker_binary"), err)
	}
	fs = newFlags()
	if got, _ := UseSelfAsWorker(fs, Runner{}, self); got != "" || flagValue(fs, "worker_binary") != "" {
		t.Errorf("in process: set %q", got)
	}
	fs = newFlags()
	broken := func() (string, error) { return "", errors.New("no /proc") }
	if _, err := UseSelfAsWorker(fs, here, broken); err == nil {
		t.Error("an unknown executable: no error")
	}
}

type result struct{ id string }

func (r *result) JobID() string { return r.id }

// TestJobID: the result's id first, else the one the runner logged on
// submitting; a nil result (Dataflow's --dry_run) is not a submitted job.
func TestJobID(t *testing.T) {
	submitted.Lock()
	submitted.id = ""
	submitted.Unlock()
	h := quietHandler{slog.DiscardHandler}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "Submitted job: job-007", 0)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	var none *result
	for _, c := range []struct {
		res       any
		id        string
		submitted bool
	}{
		{&result{"df-123"}, "df-123", true},
		{&result{}, "job-007", true},
		{none, "job-007", false},
		{nil, "job-007", false},
	} {
		if got := JobID(c.res); got != c.id {
			t.Errorf("JobID(%#v) = %q, want %q", c.res, got, c.id)
		}
		if got := Submitted(c.res); got != c.submitted {
			t.Errorf("Submitted(%#v) = %v, want %v", c.res, got, c.submitted)
		}
	}
}

func TestSubmission(t *testing.T) {
	got := Submission("bowline", "FlinkRunner", "bowline-1_abc", "bowline-1", "gs://b/out/report.html", "gs://b/out/report.json")
	want := "submitted job bowline-1_abc (bowline-1) to flink; it runs on after bowline exits.\n" +
		"when it finishes: gs://b/out/report.html\n" +
		"                  gs://b/out/report.json\n"
	if got != want {
		t.Errorf("Submission:\n%s\nwant\n%s", got, want)
	}
	if got := Submission("bowline", "dataflow", "", "bowline-1"); !strings.HasPrefix(got, "submitted job bowline-1 to dataflow;") {
		t.Errorf("Submission without an id: %q", got)
	}
}
