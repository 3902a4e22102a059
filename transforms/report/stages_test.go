package report

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// unit is a measured unit of process p whose CPU clock read c0 at its
// start and c1 at its end.
func unit(name, p string, start, end int64, c0, c1 float64) Stage {
	return Stage{Name: name, Units: 1, CPUUnits: 1, StartMillis: start, EndMillis: end,
		UnitWallSeconds: float64(end-start) / 1000, WallSeconds: float64(end-start) / 1000,
		Process: p, CPUStart: c0, CPUEnd: c1}
}

// MergeStages adds up the units of each stage: rows and unit wall time
// sum, wall time spans the first start to the last end.
func TestMergeStages(t *testing.T) {
	got := MergeStages([]Stage{
		Unit("bow.weight", 10, 2, 5_000, 6_000),
		Unit("describe", 4, 3, 1_000, 3_000),
		Unit("bow.weight", 20, 4, 5_500, 9_000),
		Unit("describe", 6, 6, 2_000, 4_500),
	})
	want := []Stage{
		{Name: "describe", Units: 2, RowsIn: 10, RowsOut: 9, UnitWallSeconds: 4.5, WallSeconds: 3.5, StartMillis: 1_000, EndMillis: 4_500},
		{Name: "bow.weight", Units: 2, RowsIn: 30, RowsOut: 6, UnitWallSeconds: 4.5, WallSeconds: 4, StartMillis: 5_000, EndMillis: 9_000},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MergeStages =\n%+v\nwant\n%+v", got, want)
	}
}

// The stages come out in the job's order whatever order their units
// started in (issue 23: evaluate was listed before train when one of its
// shards started first), other stages after them.
func TestMergeStagesJobOrder(t *testing.T) {
	got := MergeStages([]Stage{
		Unit("zeta", 1, 1, 500, 600),
		Unit("evaluate", 1, 1, 1_000, 2_000),
		Unit("train", 1, 1, 1_500, 2_500),
		Unit("index", 1, 1, 1_200, 1_300),
		Unit("describe", 1, 1, 900, 950),
		Unit("vocabulary", 1, 1, 950, 1_000),
	})
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if want := []string{"describe", "vocabulary", "train", "index", "evaluate", "zeta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("stages %v, want %v", names, want)
	}
}

// Each interval's CPU goes to the units running then, in equal shares, per
// process; the shares add up to the CPU of the times some unit ran.
func TestMergeStagesSplitsCPU(t *testing.T) {
	// Process a: describe runs alone from 0 to 1 s (2 CPU s), beside
	// train from 1 to 2 s (4 CPU s, 2 each), train alone from 2 to 3 s
	// (1 CPU s). Process b: evaluate alone (3 CPU s). Its clock reads the
	// same moment a little later in the second unit.
	got := MergeStages([]Stage{
		unit("describe", "a", 0, 2_000, 10, 16),
		unit("train", "a", 1_000, 3_000, 12, 17),
		unit("evaluate", "b", 0, 1_000, 100, 103),
		unit("describe", "b", 5_000, 6_000, 200, 200),
	})
	cpu := map[string]float64{}
	for _, s := range got {
		cpu[s.Name] = s.CPUSeconds
	}
	want := map[string]float64{"describe": 2 + 2, "train": 2 + 1, "evaluate": 3}
	for name, w := range want {
		if math.Abs(cpu[name]-w) > 1e-9 {
			t.Errorf("%s: %.3f CPU s, want %.3f (all: %v)", name, cpu[name], w, cpu)
		}
	}
}

// Before the fix a stage's time was its units' wall times summed: two
// units waiting side by side on one core for a second each made two
// "worker" seconds out of one second of CPU.
func TestMergeStagesCPUNotWallSum(t *testing.T) {
	got := MergeStages([]Stage{
		unit("describe", "a", 0, 1_000, 0, 1),
		unit("describe", "a", 0, 1_000, 0, 1),
	})
	if s := got[0]; s.CPUSeconds != 1 || s.UnitWallSeconds != 2 || s.WallSeconds != 1 || s.CPUUnits != 2 {
		t.Errorf("stage %+v: want 1 CPU s, 2 unit wall s, 1 wall s, 2 units measured", s)
	}
}

// A unit whose process clock did not run at its start is not measured:
// the stage's CPU leaves it out and the table says the CPU is a lower
// bound.
func TestUnmeasuredUnits(t *testing.T) {
	st := MergeStages([]Stage{
		unit("describe", "a", 0, 1_000, 0, 1),
		{Name: "describe", Units: 1, StartMillis: 0, EndMillis: 1_000},
	})
	if st[0].CPUUnits != 1 || st[0].Units != 2 || st[0].CPUSeconds != 1 {
		t.Errorf("stage %+v: want 1 of 2 units measured, 1 CPU s", st[0])
	}
	var b strings.Builder
	if err := (Report{Stages: st}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "≥1.0") {
		t.Errorf("table does not mark the lower bound:\n%s", b.String())
	}
}

// The table's columns say what they measure.
func TestStageTable(t *testing.T) {
	var b strings.Builder
	st := []Stage{{Name: "describe", Units: 2, CPUUnits: 2, RowsIn: 10, RowsOut: 9, CPUSeconds: 1.25, UnitWallSeconds: 4.5, WallSeconds: 3.5}}
	if err := writeStages(&b, st); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("table:\n%s", b.String())
	}
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "stage units rows in rows out cpu s unit wall s wall s" {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); strings.Join(f, " ") != "describe 2 10 9 1.2 4.5 3.5" && strings.Join(f, " ") != "describe 2 10 9 1.3 4.5 3.5" {
		t.Errorf("row %q", lines[1])
	}
}

// The clock interpolates between readings, refuses times before its first
// reading, and keeps at most maxCPUSamples of them, the first included.
func TestCPUClock(t *testing.T) {
	now := time.Unix(1000, 0)
	cpu := 0.0
	c := &cpuClock{read: func() (float64, bool) { return cpu, true }, now: func() time.Time { return now }}
	c.sample()
	now, cpu = now.Add(time.Second), 1
	c.sample()
	if got, ok := c.at(time.Unix(1000, 5e8)); !ok || got != 0.5 {
		t.Errorf("at 0.5 s: %v, %v; want 0.5", got, ok)
	}
	if _, ok := c.at(time.Unix(999, 0)); ok {
		t.Error("at a time before the first reading: measured")
	}
	for range 3 * maxCPUSamples {
		now, cpu = now.Add(time.Second), cpu+1
		c.sample()
	}
	if len(c.samples) > maxCPUSamples || c.samples[0].nanos != time.Unix(1000, 0).UnixNano() {
		t.Errorf("%d samples from %v", len(c.samples), time.Unix(0, c.samples[0].nanos))
	}
	// cpu grows by one a second: interpolation in the thinned part is exact.
	if got, ok := c.at(time.Unix(1010, 0)); !ok || got != 10 {
		t.Errorf("at 10 s: %v, %v; want 10", got, ok)
	}
	if got, ok := c.at(now.Add(-time.Second)); !ok || got != cpu-1 {
		t.Errorf("at the last second: %v, %v; want %v", got, ok, cpu-1)
	}
}

// A time after the last reading is interpolated to a fresh one, which is
// kept only a tenth of a tick after the last.
func TestCPUClockFreshReading(t *testing.T) {
	now, cpu := time.Unix(1000, 0), 0.0
	c := &cpuClock{read: func() (float64, bool) { return cpu, true }, now: func() time.Time { return now }}
	c.sample()
	now, cpu = now.Add(4*time.Millisecond), 0.004
	if got, ok := c.at(time.Unix(1000, 2e6)); !ok || math.Abs(got-0.002) > 1e-12 || len(c.samples) != 1 {
		t.Errorf("at 2 ms: %v, %v, %d readings kept; want 0.002 from a fresh reading not kept", got, ok, len(c.samples))
	}
	now, cpu = now.Add(cpuTick), 1
	if got, ok := c.at(now); !ok || got != 1 || len(c.samples) != 2 {
		t.Errorf("at now: %v, %v, %d readings kept; want 1, the fresh reading kept", got, ok, len(c.samples))
	}
}

// A unit recorded by Unit in this process, with the clock running, carries
// the process's CPU over its span: a unit that burns CPU gets some.
func TestUnitReadsProcessClock(t *testing.T) {
	StartCPUClock()
	time.Sleep(2 * time.Millisecond) // a unit's start in ms must follow the clock's first reading
	start := time.Now()
	for x := 0.0; time.Since(start) < 300*time.Millisecond; x++ {
		_ = math.Sqrt(x)
	}
	u := Unit("describe", 1, 1, start.UnixMilli(), time.Now().UnixMilli())
	if u.Process == "" || u.CPUUnits != 1 || !(u.CPUEnd > u.CPUStart) {
		t.Errorf("unit %+v: want the process's CPU over its span", u)
	}
	if st := MergeStages([]Stage{u}); !(st[0].CPUSeconds > 0) {
		t.Errorf("stage %+v: no CPU", st[0])
	}
}
