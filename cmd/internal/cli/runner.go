package cli

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/bowline/bowline/cmd/internal/cmdline"
)

// Runner is what Beam's runner flags say about where a job runs: the
// runner's name (--runner, Prism when empty), its job service
// (--endpoint) and how the SDK workers are started (--environment_type,
// --environment_config).
type Runner struct {
	Name              string
	Endpoint          string
	EnvironmentType   string
	EnvironmentConfig string
}

// RunnerFromFlags reads the runner flags the Beam SDK registered on fs;
// a flag that is not defined reads as empty.
func RunnerFromFlags(fs *flag.FlagSet) Runner {
	return Runner{
		Name:              flagValue(fs, "runner"),
		Endpoint:          flagValue(fs, "endpoint"),
		EnvironmentType:   flagValue(fs, "environment_type"),
		EnvironmentConfig: flagValue(fs, "environment_config"),
	}
}

func flagValue(fs *flag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// Workers says where a job's SDK workers run, which decides what paths
// they can read and whether the job outlives the process that launched it.
type Workers int

const (
	// InProcess workers run inside the launching process (Prism
	// in-process, LOOPBACK, the direct runner): every local path works,
	// and the job ends when the process does.
	InProcess Workers = iota
	// ThisMachine workers are other processes on the launching machine
	// (a job server on localhost with PROCESS workers or an EXTERNAL
	// worker pool on localhost): local paths work, and the job outlives
	// the launcher.
	ThisMachine
	// Remote workers run on other machines or in containers (Dataflow,
	// Flink, Spark, DOCKER workers, a job server elsewhere): they see
	// none of the launcher's files.
	Remote
)

func (w Workers) String() string {
	switch w {
	case InProcess:
		return "in this process"
	case ThisMachine:
		return "on this machine"
	}
	return "on other machines"
}

// runnerName is the runner's name as Beam registers it in lower case
// without a "Runner" suffix ("DataflowRunner" → "dataflow"), "prism" for
// none.
func (r Runner) runnerName() string {
	n := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(r.Name)), "runner")
	if n == "" {
		return "prism"
	}
	return n
}

// Workers classifies where the runner's SDK workers run.
func (r Runner) Workers() Workers {
	env := strings.ToLower(r.EnvironmentType)
	switch name := r.runnerName(); {
	case name == "dataflow":
		return Remote
	case name == "direct" || name == "dot" || name == "vet":
		return InProcess
	case name == "prism" && r.Endpoint == "":
		// Prism starts a job server in this process; its workers are
		// LOOPBACK unless an environment is named.
		if env == "" || env == "loopback" {
			return InProcess
		}
		return ThisMachine
	case env == "loopback":
		return InProcess
	case name != "prism" && name != "universal" && name != "portable":
		// Flink, Spark, Samza…: a cluster, whatever the environment.
		return Remote
	case (env == "process" || env == "external") && loopbackHost(r.Endpoint) &&
		(env == "process" || loopbackHost(r.EnvironmentConfig)):
		return ThisMachine
	}
	// DOCKER (the default environment), or a job server elsewhere.
	return Remote
}

// loopbackHost reports whether a host:port (or bare host) names this
// machine.
func loopbackHost(addr string) bool {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// usesEndpoint reports whether the runner submits to a job service named
// by --endpoint.
func (r Runner) usesEndpoint() bool {
	switch r.runnerName() {
	case "universal", "portable", "flink", "spark", "samza":
		return true
	}
	return false
}

// PathFlag is a flag whose value names a file or directory; Required
// ones must be given when the workers run on other machines, where no
// local default would do.
type PathFlag struct {
	Name, Value string
	Required    bool
}

// DataflowPaths returns Dataflow's own path flags as set on fs: the
// workers write to both, so neither may be local.
func DataflowPaths(fs *flag.FlagSet) []PathFlag {
	return []PathFlag{
		{Name: "staging_location", Value: flagValue(fs, "staging_location")},
		{Name: "temp_location", Value: flagValue(fs, "temp_location")},
	}
}

// CheckRunner returns a cmdline.UsageError, one line naming the flag, when the
// job cannot run as the flags ask: a runner that submits to a job service
// without --endpoint; on a runner whose workers run on other machines, a
// path flag left empty that is Required there, or one that names a local
// file, which the workers would not find (on Dataflow, dataflow's flags
// too: DataflowPaths); and --async where the job would end with this
// process. paths are the command's own path flags, those the workers read
// or write.
func CheckRunner(r Runner, async bool, paths, dataflow []PathFlag) error {
	if r.usesEndpoint() && r.Endpoint == "" {
		return cmdline.Usagef("--runner %s submits to a job service: name it with --endpoint host:port (Beam's Flink job server listens on localhost:8099)", r.Name)
	}
	w := r.Workers()
	if w == Remote {
		check := paths
		if r.runnerName() == "dataflow" {
			check = append(append([]PathFlag(nil), paths...), dataflow...)
		}
		for _, p := range check {
			switch {
			case p.Value == "" && p.Required:
				return cmdline.Usagef("--%s is required on the %s runner, whose workers run %s: give a gs:// path", p.Name, r.runnerName(), w)
			case cmdline.LocalPath(p.Value):
				return cmdline.Usagef("--%s %s is a local path, but the %s runner's workers run %s and cannot reach it: give a gs:// path", p.Name, p.Value, r.runnerName(), w)
			}
		}
	}
	if async && w == InProcess {
		return cmdline.Usagef("--async leaves the job running after this process exits, but the %s runner's workers run %s: give a job server with --endpoint and a non-LOOPBACK --environment_type, or leave out --async", r.runnerName(), w)
	}
	return nil
}

// SelfWorker reports whether a program built for goos/goarch, with cgo
// on or off, can itself be the worker binary of a job whose workers run
// as w, on Dataflow machines of machineType: on this machine always (it
// runs here already); elsewhere only a linux/amd64 build without cgo, what
// the Beam SDK would build itself, and not for Dataflow's Arm machines
// (t2a…), for which the SDK builds linux/arm64.
func SelfWorker(w Workers, goos, goarch string, cgo bool, machineType string) bool {
	switch w {
	case InProcess:
		return false // no worker binary is staged
	case ThisMachine:
		return true
	}
	return goos == "linux" && goarch == "amd64" && !cgo && !strings.HasPrefix(machineType, "t2a")
}

// buildCgo reports whether this program was built with cgo, from its
// build information; a program without it counts as built with cgo.
func buildCgo() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return true
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value != "0"
		}
	}
	return true
}

// UseSelfAsWorker sets --worker_binary on fs to this program when it was
// not given and the program can be the worker (SelfWorker). Without it the
// Beam SDK builds the worker from source with "go build", which needs the
// Go toolchain and the module's source at the path they were compiled
// from: neither is in a container image or a Flex Template launcher. It
// returns the binary set, or "".
func UseSelfAsWorker(fs *flag.FlagSet, r Runner, executable func() (string, error)) (string, error) {
	f := fs.Lookup("worker_binary")
	if f == nil || f.Value.String() != "" {
		return "", nil
	}
	machine := flagValue(fs, "worker_machine_type")
	if machine == "" {
		machine = flagValue(fs, "machine_type")
	}
	if !SelfWorker(r.Workers(), runtime.GOOS, runtime.GOARCH, buildCgo(), machine) {
		return "", nil
	}
	self, err := executable()
	if err != nil {
		return "", fmt.Errorf("the worker binary: %w", err)
	}
	if err := fs.Set("worker_binary", self); err != nil {
		return "", err
	}
	return self, nil
}

// JobID returns the id of the job a runner returned res for: res's own,
// or, where the runner leaves it empty (Beam's portable runners with
// --async), the one the runner logged on submitting it (see
// QuietRunnerLogs). res may be nil or a nil pointer, as Dataflow returns
// for --dry_run and --template_location.
func JobID(res any) string {
	if r, ok := res.(interface{ JobID() string }); ok && Submitted(res) {
		if id := r.JobID(); id != "" {
			return id
		}
	}
	submitted.Lock()
	defer submitted.Unlock()
	return submitted.id
}

// Submitted reports whether res stands for a job the runner submitted,
// unlike the nil, or nil pointer, Dataflow returns when it only wrote or
// printed the job (--template_location, --dry_run).
func Submitted(res any) bool {
	if res == nil {
		return false
	}
	v := reflect.ValueOf(res)
	return v.Kind() != reflect.Pointer || !v.IsNil()
}

// submitted is the job id the runner last logged as submitted.
var submitted struct {
	sync.Mutex
	id string
}

// submittedPrefix starts the record Beam's portable runner logs once the
// job service accepted the job (runnerlib.Execute, v2.77.0).
const submittedPrefix = "Submitted job: "

// noteSubmitted keeps the job id of a "Submitted job: <id>" record.
func noteSubmitted(r slog.Record) {
	if id, ok := strings.CutPrefix(r.Message, submittedPrefix); ok {
		submitted.Lock()
		submitted.id = strings.TrimSpace(id)
		submitted.Unlock()
	}
}

// Submission is the message a command prints when it returns with its job
// submitted and not finished: the job, where it runs, and where its
// results will appear.
func Submission(prog, runner, jobID, jobName string, results ...string) string {
	var b strings.Builder
	b.WriteString("submitted")
	switch {
	case jobID != "" && jobName != "" && jobName != jobID:
		fmt.Fprintf(&b, " job %s (%s)", jobID, jobName)
	case jobID != "":
		fmt.Fprintf(&b, " job %s", jobID)
	case jobName != "":
		fmt.Fprintf(&b, " job %s", jobName)
	default:
		b.WriteString(" the job")
	}
	fmt.Fprintf(&b, " to %s; it runs on after %s exits.\n", Runner{Name: runner}.runnerName(), prog)
	for i, r := range results {
		if i == 0 {
			fmt.Fprintf(&b, "when it finishes: %s\n", r)
		} else {
			fmt.Fprintf(&b, "                  %s\n", r)
		}
	}
	return b.String()
}
