package main

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU returns the CPU time consumed so far by the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID, as Python's time.thread_time), which excludes
// time spent waiting for a core; callers lock the goroutine to its thread.
func threadCPU() (time.Duration, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
