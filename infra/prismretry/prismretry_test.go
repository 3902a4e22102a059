package prismretry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, Runner) }

// raceError is what ptest.Run returned when Prism v2.77.0 asked a Flatten
// stage's nil worker for progress, cut to its structure: the recovered
// panic, the stage (no environment) and the frames that matter.
const raceError = "job job-001 failed:\n" +
	"panic in stage.Execute bundle processing goroutine: runtime error: invalid memory address or nil pointer dereference, " +
	"stage: &{ID:stage-002 transforms:[e4] primaryInput: outputs:[{Transform:e4 Local:i0 Global:n4}] sideInputs:[] internalCols:[] envID: finalize:false stateful:false},stackTrace:\n" +
	"goroutine 133 [running]:\nruntime/debug.Stack()\n" +
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal/worker.(*W).NextInst(...)\n" +
	"\t.../prism/internal/worker/worker.go:153\n" +
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal/worker.(*W).sendInstruction(0x0, {0x1cee7a8, 0x28c8ca0fa7d0}, 0x28c8ca45c410)\n" +
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal/worker.(*B).Progress(0x28c8ca2ce870, {0x1cee7a8, 0x28c8ca0fa7d0}, 0x0)\n" +
	"\t.../prism/internal/worker/bundle.go:292 +0xdd\n" +
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism/internal.(*stage).Execute(0x28c8ca425980, {0x1cee7a8, 0x28c8ca0fa7d0}, 0x28c8ca7026c0, 0x0, ...)\n"

// sdkPanic is a nil dereference in a stage that has an SDK worker (a
// DoFn's or Prism's own bug elsewhere): not the race, so not retried.
var sdkPanic = strings.NewReplacer(" envID: ", " envID:go ", "worker.(*B).Progress(", "worker.(*B).Split(").Replace(raceError)

func TestIsProgressRace(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New(raceError), true},
		{errors.Join(errors.New("pipeline: "), errors.New(raceError)), true},
		{errors.New(sdkPanic), false},
		{errors.New(strings.Replace(raceError, " envID: ", " envID:go ", 1)), false},
		{errors.New("job job-001 failed:\nDoFn[UID:8] failed:\ningest: open /nonexistent.csv: no such file or directory"), false},
		{nil, false},
	} {
		if got := IsProgressRace(c.err); got != c.want {
			t.Errorf("IsProgressRace(%.60q…) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestRetry: a job that fails with the race runs again, and its second
// run's result is the result; any other failure, a canceled context or
// Attempts failures in a row end it.
func TestRetry(t *testing.T) {
	race, other := errors.New(raceError), errors.New("DoFn failed: boom")
	for _, c := range []struct {
		name     string
		errs     []error // one per run; nil succeeds
		cancel   bool
		want     error
		wantRuns int
	}{
		{"race then success", []error{race, nil}, false, nil, 2},
		{"race twice then success", []error{race, race, nil}, false, nil, 3},
		{"race every time", []error{race, race, race, nil}, false, race, Attempts},
		{"other error", []error{other, nil}, false, other, 1},
		{"race then other error", []error{race, other, nil}, false, other, 2},
		{"canceled", []error{race, nil}, true, race, 1},
		{"success", []error{nil}, false, nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				cancel()
			}
			runs := 0
			_, err := retry(ctx, func() (beam.PipelineResult, error) {
				err := c.errs[runs]
				runs++
				return nil, err
			})
			if err != c.want || runs != c.wantRuns {
				t.Errorf("got %v after %d runs, want %v after %d", err, runs, c.want, c.wantRuns)
			}
		})
	}
}

// TestExecute runs a job with the stages Prism executes itself (a
// GroupByKey and a Flatten) through the registered runner.
func TestExecute(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	a := beam.CreateList(s, []int{1, 2, 3})
	b := beam.CreateList(s, []int{4, 5})
	sums := beam.ParDo(s, sumFn, beam.GroupByKey(s, beam.ParDo(s, parityFn, beam.Flatten(s, a, b))))
	passert.Equals(s, sums, 6, 9)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	if got := ptest.DefaultRunner(); got != Runner {
		t.Errorf("the tests ran on %q", got)
	}
}

func parityFn(x int) (int, int) { return x % 2, x }

func sumFn(_ int, xs func(*int) bool) int {
	total := 0
	for x := 0; xs(&x); {
		total += x
	}
	return total
}

func init() {
	beam.RegisterFunction(parityFn)
	beam.RegisterFunction(sumFn)
}
