// Package cpuclock reads CPU time: the process's, all its threads together,
// and the calling thread's. The report times a stage's work by the first,
// and benchmarks quote figures per CPU second, which the load of other
// processes on a shared machine inflates far less than wall time. It is
// the one place that reads them, for the stages and the benchmark
// commands alike.
package cpuclock

import "time"

// Process returns the user and system CPU time of this process, and false
// where it cannot be read (then callers report wall time only).
func Process() (time.Duration, bool) { return process() }

// Thread returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID, as Python's time.thread_time: to the
// nanosecond, where getrusage counts whole scheduler ticks, too coarse for
// a query of a few milliseconds), and false where it cannot be read (off
// Linux). It excludes the time the thread waited for a core; callers lock
// their goroutine to its thread (runtime.LockOSThread) around the two
// readings they subtract.
func Thread() (time.Duration, bool) { return thread() }
