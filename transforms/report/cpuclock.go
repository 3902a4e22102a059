package report

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/bowline/bowline/transforms/cpuclock"
)

// cpuTick is how often the CPU clock reads the process's CPU time: a
// unit's CPU at a moment between two readings is interpolated, so a
// unit much shorter than a tick gets the average rate of the tick.
const cpuTick = 100 * time.Millisecond

// maxCPUSamples bounds the clock's memory (16 bytes a sample): when full,
// the older half is thinned to every other sample, so the last half keeps
// the tick's resolution (6.8 minutes) and older times coarsen with age.
const maxCPUSamples = 1 << 13

// processClock is this process's CPU clock, read by Unit; processID
// tells it apart from the clocks of the job's other worker processes.
var (
	processClock = &cpuClock{read: processCPU, now: time.Now}
	processID    = func() string {
		host, _ := os.Hostname()
		return fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())
	}()
)

// StartCPUClock starts reading this process's CPU time every tenth of a
// second in the background, from which Unit finds the CPU at a unit's
// start and end; units that started before it are not measured. Call it
// where the job's DoFns are registered (an init of the Beam-side package),
// so that it runs from the start of every worker process. It does nothing
// the second time, or where the process's CPU time cannot be read.
func StartCPUClock() {
	processClock.start(cpuTick)
}

// cpuSample is the process's CPU seconds at a moment (Unix ns).
type cpuSample struct {
	nanos int64
	cpu   float64
}

// cpuClock is a bounded history of the process's CPU time.
type cpuClock struct {
	read func() (float64, bool)
	now  func() time.Time

	once    sync.Once
	mu      sync.Mutex
	samples []cpuSample
}

func (c *cpuClock) start(tick time.Duration) {
	c.once.Do(func() {
		if !c.sample() {
			return
		}
		go func() {
			for range time.Tick(tick) {
				c.sample()
			}
		}()
	})
}

// sample records the CPU time now, and reports whether it could be read.
func (c *cpuClock) sample() bool {
	cpu, ok := c.read()
	if !ok {
		return false
	}
	t := c.now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.add(cpuSample{t, cpu})
	return true
}

func (c *cpuClock) add(s cpuSample) {
	if n := len(c.samples); n > 0 && (s.nanos <= c.samples[n-1].nanos || s.cpu < c.samples[n-1].cpu) {
		return // keep the history increasing in both
	}
	if len(c.samples) == maxCPUSamples {
		old := c.samples[:maxCPUSamples/2]
		kept := c.samples[:0]
		for i := 0; i < len(old); i += 2 {
			kept = append(kept, old[i])
		}
		c.samples = append(kept, c.samples[maxCPUSamples/2:]...)
	}
	c.samples = append(c.samples, s)
}

// at returns the process's CPU seconds at t, interpolated between the
// readings around it (a fresh reading if t is later than the last), and
// false if the clock did not run at t. The fresh reading is kept if it is
// a tenth of a tick after the last, so that many short units do not
// crowd the history.
func (c *cpuClock) at(t time.Time) (float64, bool) {
	cpu, fresh := c.read()
	now := c.now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ns := c.samples, t.UnixNano()
	if len(s) == 0 || ns < s[0].nanos {
		return 0, false
	}
	last := s[len(s)-1]
	fresh = fresh && now > last.nanos && cpu >= last.cpu
	if fresh && now-last.nanos >= int64(cpuTick/10) {
		c.add(cpuSample{now, cpu})
		s = c.samples
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].nanos > ns })
	var a, b cpuSample
	switch {
	case i < len(s):
		a, b = s[i-1], s[i]
	case fresh && now > s[i-1].nanos:
		a, b = s[i-1], cpuSample{now, cpu}
	default:
		return s[i-1].cpu, true // t is at or after the latest reading
	}
	if ns >= b.nanos {
		return b.cpu, true
	}
	return a.cpu + (b.cpu-a.cpu)*float64(ns-a.nanos)/float64(b.nanos-a.nanos), true
}

// processCPU returns this process's CPU time in seconds (cpuclock.Process).
func processCPU() (float64, bool) {
	d, ok := cpuclock.Process()
	return d.Seconds(), ok
}
