//go:build !unix

package main

import "time"

// cpuTime returns 0 where the process's CPU time is not available; the
// tables then show wall time only.
func cpuTime() time.Duration { return 0 }
