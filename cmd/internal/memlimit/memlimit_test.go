package memlimit

import (
	"context"
	"encoding/json"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/hooks"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, "prism") }

// TestWorkerTakesTheLimit: the limit Enable gives reaches a worker as Beam
// carries it — serialized into the job's options, read back by the worker
// harness and applied by its init hooks, before the worker takes work —
// and becomes the worker's soft memory limit; 0 lifts any. The harness
// here is Prism's in-process one, which runs in the launching process:
// so the hook sets the launcher's own limit, which is why the launcher
// enables it with the limit in force (cli.MemoryLimit.Apply), never
// another.
func TestWorkerTakesTheLimit(t *testing.T) {
	// Beam's LOOPBACK launch leaves a beamloopbackworker-* file in the
	// temporary directory at each job: the test's own, removed after it.
	t.Setenv("TMPDIR", t.TempDir())
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer hooks.DisableHook(Hook)
	for _, tc := range []struct{ limit, want int64 }{{2 << 30, 2 << 30}, {5 << 30, 5 << 30}, {0, math.MaxInt64}} {
		debug.SetMemoryLimit(6 << 30) // the worker's own limit, which the job's replaces
		Enable(tc.limit)
		p, s := beam.NewPipelineWithRoot()
		passert.Count(s, beam.Create(s, 1, 2, 3), "elements", 3)
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		var enabled map[string][]string
		if err := json.Unmarshal([]byte(runtime.GlobalOptions.Get("hooks")), &enabled); err != nil {
			t.Fatalf("the job's hooks: %v", err)
		}
		if got, want := enabled[Hook], []string{strconv.FormatInt(tc.limit, 10)}; !slices.Equal(got, want) {
			t.Errorf("Enable(%d): the job's options carry %s with %q, want %q", tc.limit, Hook, got, want)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("Enable(%d): after a job the worker's memory limit is %d, want %d", tc.limit, got, tc.want)
		}
		if got, want := InForce(), tc.want%math.MaxInt64; got != want {
			t.Errorf("Enable(%d): InForce %d, want %d", tc.limit, got, want)
		}
	}
}

// TestBadHookArguments: options the launcher did not write stop the
// worker at start-up with a reason, rather than leave it unlimited.
func TestBadHookArguments(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(12345)
	for _, args := range [][]string{nil, {"-1"}, {"3GiB"}, {"1", "2"}} {
		_, err := newHook(args).Init(context.Background())
		if err == nil || !strings.HasPrefix(err.Error(), Hook+" hook: ") {
			t.Errorf("%q: %v, want an error naming the hook", args, err)
		}
	}
	if got := debug.SetMemoryLimit(-1); got != 12345 {
		t.Errorf("bad arguments changed the memory limit to %d", got)
	}
}
