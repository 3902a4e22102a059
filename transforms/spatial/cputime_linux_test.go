package spatial

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID: to the nanosecond, where getrusage counts
// whole scheduler ticks, too coarse for a query of a few milliseconds).
// The benchmarks lock their goroutine to its thread and report CPU times
// besides wall-clock times: on a machine shared with other jobs the wall
// clock also counts the time the thread waited for a core.
func threadCPU() (time.Duration, bool) {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
