//go:build !unix

package report

// processCPU cannot read the process's CPU time here: units go unmeasured.
func processCPU() (float64, bool) { return 0, false }
