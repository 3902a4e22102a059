//go:build !linux

package spatial

import "time"

// threadCPU is not available off Linux; the benchmarks then report only
// wall-clock times.
func threadCPU() (time.Duration, bool) { return 0, false }
