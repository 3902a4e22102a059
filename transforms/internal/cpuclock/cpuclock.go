// Package cpuclock reads the CPU time this process has used, all its
// threads together: the report times a stage's work by it, and benchmarks
// quote figures per CPU second, which the load of other processes on a
// shared machine inflates far less than wall time.
package cpuclock

import "time"

// Process returns the user and system CPU time of this process, and false
// where it cannot be read (then callers report wall time only).
func Process() (time.Duration, bool) { return process() }
