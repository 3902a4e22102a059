package cli

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/cmd/internal/memlimit"
)

// DefaultMemoryLimit is --memory_limit's default, 3 GiB. Between
// collections the Go runtime lets the heap grow to twice what was live at
// the last one (GOGC=100) and gives freed pages back lazily: building 100K
// words from 5M descriptors on Prism, 1.0–1.4 GB live at the ends of
// iterations took up to 3.3 GB of resident memory. The limit makes the
// collector run earlier as the heap nears it, at no measurable CPU there;
// set below the live heap, the collector would take up to half the CPU.
const DefaultMemoryLimit = 3 << 30

// MemoryLimit is --memory_limit, the soft memory limit of every process
// that runs a command's pipelines: registered by AddMemoryLimitFlag (the
// job's flags include it), applied by Apply once the command line is
// parsed.
type MemoryLimit struct {
	fs    *flag.FlagSet
	limit cmdline.ByteSize
}

// AddMemoryLimitFlag registers --memory_limit on fs, for every command
// that runs a pipeline.
func AddMemoryLimitFlag(fs *flag.FlagSet) *MemoryLimit {
	m := &MemoryLimit{fs: fs, limit: DefaultMemoryLimit}
	fs.Var(&m.limit, "memory_limit", "soft limit on the memory of this process and of every worker process of the job, in bytes or with a unit (3GiB, 3500MB): Go's garbage collector runs more often as the heap nears it and gives back what it freed, where resident memory otherwise runs to twice the live heap between collections. On Prism this process runs the workers; on Dataflow and Flink each worker process takes the limit from the job's options as it starts. GOMEMLIMIT in this process's environment takes the place of the default (0: GOMEMLIMIT's limit, or none)")
	return m
}

// Apply sets this process's soft memory limit to --memory_limit, unless
// it is 0 or left at its default while GOMEMLIMIT, which the Go runtime
// has already applied, is set. Either way the flag ends holding the limit
// in force (0: none), so that the run records what it ran with, and the
// pipelines this process runs from now on have each of their worker
// processes set that limit when it starts (memlimit.Enable).
func (m *MemoryLimit) Apply() {
	if m.limit > 0 && (given(m.fs, "memory_limit") || os.Getenv("GOMEMLIMIT") == "") {
		memlimit.Set(int64(m.limit))
	}
	limit := memlimit.InForce()
	if err := m.fs.Set("memory_limit", strconv.FormatInt(limit, 10)); err != nil {
		panic(fmt.Sprintf("cli: %v", err)) // a byte size takes a count of bytes
	}
	memlimit.Enable(limit)
}
