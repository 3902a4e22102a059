package learners_test

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used. The
// benchmarks lock their goroutine to its thread and report triplets per
// second of it besides wall-clock triplets/s: on a machine shared with
// other jobs the wall clock also counts the time the thread waited for a
// core, and the CPU time does not.
func threadCPU() (time.Duration, bool) {
	const rusageThread = 1 // RUSAGE_THREAD, Linux only
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
