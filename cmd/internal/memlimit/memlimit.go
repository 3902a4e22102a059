// Package memlimit carries a job's soft memory limit (the commands'
// --memory_limit) to every process that runs the job's DoFns, on every
// runner. The flag is parsed by the launching process only: on Prism that
// process holds the workers too, but on Dataflow and Flink the workers are
// other processes (the same binary, started with --worker by the runner's
// harness) that never see the command line, and without a limit a worker's
// resident memory runs to about twice its live heap between collections.
// So the limit travels as a Beam worker hook (core/util/hooks): registered
// here at init, so that the worker binary knows it before beam.Init starts
// the harness (a worker binary without it panics on the options: it must
// be built from the launching command's main package, as it is unless
// --worker_binary names another); enabled by the launcher with the limit
// in force (Enable), which the runner serializes into the pipeline
// options; run by each worker harness at start-up, before it takes work.
// It is a Beam-side package because the hook is Beam's; the rule of which
// limit is in force is the flag's (cli.MemoryLimit).
package memlimit

import (
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/hooks"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
)

// Hook is the name of the worker hook, as the pipeline options carry it.
const Hook = "bowline_memory_limit"

func init() {
	hooks.RegisterHook(Hook, newHook)
}

// Set makes limit (bytes; 0: none) this process's soft memory limit. On
// Prism in-process the workers' hook runs in the launcher and sets the
// limit it already has.
func Set(limit int64) {
	if limit == 0 {
		limit = math.MaxInt64 // the runtime's "no limit"
	}
	debug.SetMemoryLimit(limit)
}

// InForce returns this process's soft memory limit in bytes, 0 for none.
func InForce() int64 {
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 {
		return 0
	}
	return limit
}

// Enable has every worker process of the pipelines this process runs
// from now on set limit (bytes; 0: none) as its soft memory limit when
// it starts (Set). A later call replaces the limit.
func Enable(limit int64) {
	if err := hooks.EnableHook(Hook, strconv.FormatInt(limit, 10)); err != nil {
		panic(fmt.Sprintf("memlimit: %v", err)) // registered by init
	}
}

// newHook is the hook's factory: args are what Enable gave, the limit.
// The worker logs the limit it took (Started), where the runner keeps
// its workers' logs.
func newHook(args []string) hooks.Hook {
	return hooks.Hook{Init: func(ctx context.Context) (context.Context, error) {
		limit, err := parse(args)
		if err != nil {
			return ctx, err
		}
		Set(limit)
		log.Info(ctx, Started(limit))
		return ctx, nil
	}}
}

// Started is the line a worker logs once it has set limit, its soft
// memory limit.
func Started(limit int64) string {
	return fmt.Sprintf("worker memory limit: %d bytes (0: none), the launching command's --memory_limit", limit)
}

// parse reads the hook's arguments, one count of bytes.
func parse(args []string) (int64, error) {
	if len(args) != 1 {
		return 0, fmt.Errorf("%s hook: want one argument, the limit in bytes; got %q", Hook, args)
	}
	limit, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || limit < 0 {
		return 0, fmt.Errorf("%s hook: limit %q: want a count of bytes, 0 or more", Hook, args[0])
	}
	return limit, nil
}
