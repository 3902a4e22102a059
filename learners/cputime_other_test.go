//go:build !linux

package learners_test

import "time"

// threadCPU is not available off Linux; the benchmarks then report only
// wall-clock rates.
func threadCPU() (time.Duration, bool) { return 0, false }
