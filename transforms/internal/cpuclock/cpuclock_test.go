package cpuclock

import (
	"runtime"
	"testing"
)

var sink float64

// TestProcessAdvances: spinning for a while adds CPU time.
func TestProcessAdvances(t *testing.T) {
	t0, ok := Process()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no CPU time on linux")
		}
		t.Skip("no process CPU time here")
	}
	x := 0.0
	for i := range 50_000_000 {
		x += float64(i)
	}
	sink = x
	if t1, _ := Process(); t1 <= t0 {
		t.Errorf("CPU time went from %v to %v over a busy loop", t0, t1)
	}
}
