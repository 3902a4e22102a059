//go:build unix

package bow

import "syscall"

// cpuSeconds returns the CPU time, user and system, that the process has
// used. Benchmarks report throughput per CPU second besides per wall
// second because on a shared machine the load of other processes inflates
// wall time unevenly from one sub-benchmark to the next, which makes
// ratios of wall-time figures unreliable.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
