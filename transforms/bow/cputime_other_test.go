//go:build !unix

package bow

// cpuSeconds is unavailable here: benchmarks then report wall-time
// throughput only.
func cpuSeconds() float64 { return 0 }
