package report

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/bowline/bowline/transforms/progress"
)

// Stage is what one stage of the job did: the rows it read and wrote and
// its time. A stage runs as units of work (a part, a training group, a
// query shard, a model, the vocabulary's chunks) on as many workers as the
// runner gives it, so it has three times:
//
//   - CPUSeconds is the CPU time (user + system) of the worker processes
//     while the stage's units ran, each moment's CPU split equally among
//     the units running in that process at that moment. Go has no clock of
//     a goroutine's CPU and a unit may use several goroutines, so this is
//     an attribution, not a measurement of the unit alone: it includes what
//     else the process did meanwhile (the runner, garbage collection, DoFns
//     that are not units), and a unit that waits beside a busy one is
//     charged half of the busy one's CPU. CPU spent while no unit ran (the
//     runner between stages, the report) belongs to no stage, so the
//     stages' sum is at most the job's CPU. Only units whose record was
//     made in a process whose CPU clock ran since the unit started are
//     counted (CPUUnits of Units): on Prism in-process, all of them.
//   - UnitWallSeconds sums the units' wall times: what the stage would take
//     on one worker running one unit at a time, were the units not slowed
//     by one another (under load they are, and it grows with the load).
//   - WallSeconds, from the start of its first unit to the end of its last,
//     is how long the job waited on it (stages overlap where the graph lets
//     them).
//
// A unit (Unit) is a Stage of one unit of work, which also carries the
// process CPU clock at its start and end for MergeStages to split.
type Stage struct {
	Name    string `json:"name"`
	Units   int64  `json:"units"`
	RowsIn  int64  `json:"rows_in"`
	RowsOut int64  `json:"rows_out"`
	// CPUUnits counts the units whose CPU was measured and is in
	// CPUSeconds.
	CPUUnits        int64   `json:"cpu_units"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	UnitWallSeconds float64 `json:"unit_wall_seconds"`
	WallSeconds     float64 `json:"wall_seconds"`
	// StartMillis and EndMillis bound the stage's units, in Unix
	// milliseconds.
	StartMillis int64 `json:"start_unix_ms"`
	EndMillis   int64 `json:"end_unix_ms"`

	// Process names the worker process whose CPU clock a unit read ("" if
	// none ran since the unit started), and CPUStart and CPUEnd are that
	// process's CPU seconds at the unit's start and end: a unit's record,
	// not a stage's.
	Process  string  `json:"-"`
	CPUStart float64 `json:"-"`
	CPUEnd   float64 `json:"-"`
}

// Unit returns the stage name's record of one unit of work that read in
// rows and wrote out rows from startMillis to endMillis (Unix ms), with
// this process's CPU clock at both ends if it ran then (StartCPUClock). It
// must be called in the process that ran the unit — in the DoFn that did
// the work or one fused after it — and soon after the unit ended, while
// the clock still holds the unit's start finely (see StartCPUClock).
func Unit(name string, in, out, startMillis, endMillis int64) Stage {
	return UnitsOf(name, 1, in, out, startMillis, endMillis)
}

// UnitsOf is Unit for units of work that run together and are timed as
// one, from the first one's start to the last one's end: the vocabulary's
// chunks, assigned in lock-step iterations. Their unit wall time is that
// span, and MergeStages splits CPU with them as with one unit.
func UnitsOf(name string, units, in, out, startMillis, endMillis int64) Stage {
	u := Stage{Name: name, Units: units, RowsIn: in, RowsOut: out, StartMillis: startMillis, EndMillis: endMillis,
		UnitWallSeconds: float64(endMillis-startMillis) / 1000, WallSeconds: float64(endMillis-startMillis) / 1000}
	c0, ok0 := processClock.at(time.UnixMilli(startMillis))
	c1, ok1 := processClock.at(time.UnixMilli(endMillis))
	if ok0 && ok1 {
		u.Process, u.CPUStart, u.CPUEnd, u.CPUUnits = processID, c0, max(c0, c1), units
	}
	return u
}

// Progress returns the unit u for the progress of its stage
// (progress.Tracker): noun says what its units are, of how many units its
// source has in the job (0 if unknown), sources how many sources the
// stage has (0 if one, or unknown).
func (u Stage) Progress(noun, source string, of int64, sources int) progress.Unit {
	return progress.Unit{Stage: u.Name, Source: source, Noun: noun, Units: u.Units, Of: of, Sources: sources,
		Rows: u.RowsIn, Start: time.UnixMilli(u.StartMillis)}
}

// StageOrder is the order of the job's stages, the order in which its
// data flows; MergeStages lists stages in it, and any other stage after
// them.
var StageOrder = []string{"ingest", "describe", "vocabulary", "bow.quantise", "bow.weight", "triplets", "train", "index", "evaluate"}

// MergeStages sums units by stage name: rows and unit wall times add up,
// the wall time spans the first start to the last end, and the CPU of each
// process is split among the units it ran at each moment (see Stage). The
// stages come out in StageOrder, others after them in the order they
// started, ties by name: not in the order their units happened to start,
// which varies between identical runs.
func MergeStages(units []Stage) []Stage {
	byName := map[string]int{}
	var out []Stage
	for _, u := range units {
		i, ok := byName[u.Name]
		if !ok {
			byName[u.Name] = len(out)
			s := u
			s.Process, s.CPUStart, s.CPUEnd, s.CPUSeconds = "", 0, 0, 0
			out = append(out, s)
			continue
		}
		s := &out[i]
		s.Units += u.Units
		s.CPUUnits += u.CPUUnits
		s.RowsIn += u.RowsIn
		s.RowsOut += u.RowsOut
		s.UnitWallSeconds += u.UnitWallSeconds
		s.StartMillis = min(s.StartMillis, u.StartMillis)
		s.EndMillis = max(s.EndMillis, u.EndMillis)
		s.WallSeconds = float64(s.EndMillis-s.StartMillis) / 1000
	}
	for name, cpu := range splitCPU(units) {
		out[byName[name]].CPUSeconds = cpu
	}
	rank := func(name string) int {
		if i := slices.Index(StageOrder, name); i >= 0 {
			return i
		}
		return len(StageOrder)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ra, rb := rank(a.Name), rank(b.Name); ra != rb {
			return ra < rb
		}
		if a.StartMillis != b.StartMillis {
			return a.StartMillis < b.StartMillis
		}
		return a.Name < b.Name
	})
	return out
}

// splitCPU returns the CPU seconds of each stage: in each process, between
// two consecutive starts or ends of its measured units the set of running
// units is fixed, and the process's CPU over that interval (read from the
// units' clocks at its bounds) is split equally among them.
func splitCPU(units []Stage) map[string]float64 {
	type event struct {
		millis int64
		cpu    float64
		name   string
		delta  int
	}
	byProcess := map[string][]event{}
	for _, u := range units {
		if u.Process == "" || u.CPUUnits == 0 {
			continue
		}
		byProcess[u.Process] = append(byProcess[u.Process],
			event{u.StartMillis, u.CPUStart, u.Name, +1}, event{u.EndMillis, u.CPUEnd, u.Name, -1})
	}
	cpu := map[string]float64{}
	for _, ev := range byProcess {
		sort.Slice(ev, func(i, j int) bool {
			if ev[i].millis != ev[j].millis {
				return ev[i].millis < ev[j].millis
			}
			return ev[i].cpu < ev[j].cpu
		})
		running := map[string]int{}
		total := 0
		// clock is the process's CPU at the last event: the largest
		// reading so far, since readings at one moment made at different
		// times may differ by the clock's interpolation.
		clock := ev[0].cpu
		for i := 0; i < len(ev); {
			j := i
			for ; j < len(ev) && ev[j].millis == ev[i].millis; j++ {
				clock = max(clock, ev[j].cpu)
				running[ev[j].name] += ev[j].delta
				total += ev[j].delta
			}
			if j == len(ev) || total == 0 {
				i = j
				continue
			}
			// Until the next moment, the running units share its CPU.
			next := clock
			for k := j; k < len(ev) && ev[k].millis == ev[j].millis; k++ {
				next = max(next, ev[k].cpu)
			}
			share := (next - clock) / float64(total)
			for name, n := range running {
				if n > 0 {
					cpu[name] += share * float64(n)
				}
			}
			i = j
		}
	}
	return cpu
}

// writeStages writes the stage table of WriteTable.
func writeStages(w io.Writer, stages []Stage) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tunits\trows in\trows out\tcpu s\tunit wall s\twall s\t")
	for _, s := range stages {
		cpu := fmt.Sprintf("%.1f", s.CPUSeconds)
		if s.CPUUnits < s.Units {
			// Some units went unmeasured: the CPU is a lower bound.
			cpu = "≥" + cpu
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%.1f\t%.1f\t\n", s.Name, s.Units, s.RowsIn, s.RowsOut, cpu, s.UnitWallSeconds, s.WallSeconds)
	}
	return tw.Flush()
}
