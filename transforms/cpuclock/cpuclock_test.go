package cpuclock

import (
	"runtime"
	"testing"
	"time"
)

var sink float64

// spin keeps the calling thread busy for a while.
func spin() {
	x := 0.0
	for i := range 50_000_000 {
		x += float64(i)
	}
	sink = x
}

// TestProcessAdvances: spinning for a while adds CPU time.
func TestProcessAdvances(t *testing.T) {
	t0, ok := Process()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no CPU time on linux")
		}
		t.Skip("no process CPU time here")
	}
	spin()
	if t1, _ := Process(); t1 <= t0 {
		t.Errorf("CPU time went from %v to %v over a busy loop", t0, t1)
	}
}

// TestThreadCountsThisThreadOnly: the thread's clock advances over a busy
// loop on it, and hardly at all while it sleeps, however busy the other
// threads of the process are.
func TestThreadCountsThisThreadOnly(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := Thread()
	if !ok {
		if runtime.GOOS == "linux" {
			t.Fatal("no thread CPU time on linux")
		}
		t.Skip("no thread CPU time here")
	}
	spin()
	t1, _ := Thread()
	if t1 <= t0 {
		t.Fatalf("thread CPU time went from %v to %v over a busy loop", t0, t1)
	}
	done := make(chan bool)
	go func() { spin(); spin(); done <- true }()
	time.Sleep(200 * time.Millisecond)
	t2, _ := Thread()
	<-done
	if d := t2 - t1; d > 50*time.Millisecond {
		t.Errorf("a thread asleep for 200ms gained %v of CPU time while another spun", d)
	}
}
