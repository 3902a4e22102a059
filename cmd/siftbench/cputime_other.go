//go:build !linux

package main

import "time"

// threadCPU is not available here: speed is then reported by wall clock only.
func threadCPU() (time.Duration, bool) { return 0, false }
