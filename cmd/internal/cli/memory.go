package cli

import (
	"flag"
	"os"

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
// that runs a command's pipelines: the flag's value (registered by
// AddMemoryLimitFlag; the job's flags include it), applied by Apply once
// the command line is parsed.
type MemoryLimit struct {
	limit cmdline.ByteSize
	given bool // the command line set it
}

func (m *MemoryLimit) String() string { return m.limit.String() }

// Get returns the bytes, an int64, for the flag's rule (cmdline).
func (m *MemoryLimit) Get() any { return m.limit.Get() }

func (m *MemoryLimit) Set(s string) error {
	m.given = true
	return m.limit.Set(s)
}

// AddMemoryLimitFlag registers --memory_limit on fs, for every command
// that runs a pipeline.
func AddMemoryLimitFlag(fs *flag.FlagSet) *MemoryLimit {
	m := &MemoryLimit{limit: DefaultMemoryLimit}
	fs.Var(m, "memory_limit", "soft limit on the memory of this process and of every worker process of the job, in bytes or with a unit (3GiB, 3500MB): Go's garbage collector runs more often as the heap nears it and gives back what it freed, where resident memory otherwise runs to twice the live heap between collections. On Prism this process runs the workers; on Dataflow and Flink each worker process takes the limit from the job's options as it starts. GOMEMLIMIT in this process's environment takes the place of the default (0: GOMEMLIMIT's limit, or none)")
	return m
}

// Apply sets this process's soft memory limit to --memory_limit, unless
// it is 0 or left at its default while GOMEMLIMIT, which the Go runtime
// has already applied, is set. Either way the flag ends holding the limit
// in force (0: none), so that the run records what it ran with, and the
// pipelines this process runs from now on have each of their worker
// processes set that limit when it starts (memlimit.Enable). It changes
// the process, not only the flag.
func (m *MemoryLimit) Apply() {
	if m.limit > 0 && (m.given || os.Getenv("GOMEMLIMIT") == "") {
		memlimit.Set(int64(m.limit))
	}
	limit := memlimit.InForce()
	m.limit = cmdline.ByteSize(limit)
	memlimit.Enable(limit)
}
