// Package fakejobs is a Beam job service for the commands' tests: it
// records the pipeline options of every job a command submits to it and
// refuses to prepare the job, so that a test reads what a launch would
// give the job's workers (which read those options) without running it.
// It is a package of its own so that cmdtest's users stay free of Beam.
package fakejobs

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/bowline/bowline/cmd/internal/memlimit"

	"github.com/apache/beam/sdks/v2/go/container/tools"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Refusal is the message of the error Prepare answers every job with.
const Refusal = "fakejobs: a test's job service prepares no job"

// Service is a job service listening on localhost until the test ends.
type Service struct {
	// Endpoint is the address to give a command's --endpoint.
	Endpoint string

	jobpb.UnimplementedJobServiceServer
	mu       sync.Mutex
	prepared []runtime.RawOptionsWrapper
}

// Start starts a Service for t.
func Start(t testing.TB) *Service {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{Endpoint: l.Addr().String()}
	srv := grpc.NewServer()
	jobpb.RegisterJobServiceServer(srv, s)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)
	return s
}

// Prepare records the job's options and refuses the job.
func (s *Service) Prepare(_ context.Context, req *jobpb.PrepareJobRequest) (*jobpb.PrepareJobResponse, error) {
	var o runtime.RawOptionsWrapper
	if err := tools.ProtoToOptions(req.GetPipelineOptions(), &o); err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "fakejobs: the job's options: %v", err)
	}
	s.mu.Lock()
	s.prepared = append(s.prepared, o)
	s.mu.Unlock()
	return nil, status.Error(codes.FailedPrecondition, Refusal)
}

// Launch runs binary with args, the runner flags that submit its job to
// s (the universal runner, LOOPBACK workers: no worker is started) and
// env added to its environment, and returns the hooks its job enables
// (Hooks). The command must fail on the refused job, exit 1.
func (s *Service) Launch(t testing.TB, binary string, env []string, args ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command(binary, append(args, "--runner", "universal", "--endpoint", s.Endpoint, "--environment_type", "LOOPBACK")...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), Refusal) {
		t.Fatalf("%s %q with %q: %v, want exit 1 on the refused job; stderr:\n%s", binary, args, env, err, stderr.String())
	}
	return s.Hooks(t)
}

// Hooks returns the worker hooks the one job submitted since the last
// call enables, with their arguments (the "hooks" option Beam's
// hooks.SerializeHooksToOptions writes); it fails t if not exactly one job
// was submitted.
func (s *Service) Hooks(t testing.TB) map[string][]string {
	t.Helper()
	s.mu.Lock()
	prepared := s.prepared
	s.prepared = nil
	s.mu.Unlock()
	if len(prepared) != 1 {
		t.Fatalf("%d jobs submitted to the job service, want 1", len(prepared))
	}
	enabled := map[string][]string{}
	if h := prepared[0].Options.Options["hooks"]; h != "" {
		if err := json.Unmarshal([]byte(h), &enabled); err != nil {
			t.Fatalf("the job's hooks %q: %v", h, err)
		}
	}
	return enabled
}

// CheckMemoryLimit checks that the job binary submits, with args (its
// input and output), carries in the options every worker reads the
// worker hook that sets the memory limit in force in the launching
// process (memlimit.Hook): --memory_limit's when given, GOMEMLIMIT's when
// the flag is left at its default, the default's (3 GiB) otherwise.
func CheckMemoryLimit(t *testing.T, binary string, args ...string) {
	t.Helper()
	s := Start(t)
	for _, c := range []struct {
		env, args []string
		want      string
	}{
		{[]string{"GOMEMLIMIT="}, nil, "3221225472"},
		{[]string{"GOMEMLIMIT=1GiB"}, []string{"--memory_limit", "1500MB"}, "1500000000"},
		{[]string{"GOMEMLIMIT=1GiB"}, nil, "1073741824"},
		{[]string{"GOMEMLIMIT="}, []string{"--memory_limit", "0"}, "0"},
	} {
		hooks := s.Launch(t, binary, c.env, append(args, c.args...)...)
		if got := hooks[memlimit.Hook]; len(got) != 1 || got[0] != c.want {
			t.Errorf("%q with %q: the job's hooks %q, want %s with %s", c.args, c.env, hooks, memlimit.Hook, c.want)
		}
	}
}
