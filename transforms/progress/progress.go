// Package progress says how far the stages of a long job have got, in
// lines a person reads in the job's log: which stage is running, how many
// of its units of work (parts, training groups, query shards, models) are
// done of how many, the rows they read and how long the stage has run.
//
// The units are counted as they finish, in the process that ran them, so
// on Prism in-process the lines cover the whole job, and on a cluster each
// worker's log covers the units that worker ran (its totals are still the
// job's). A stage's lines are rate-limited: its first unit and its last
// are always told, in between at most one line per Tracker period.
package progress

import (
	"fmt"
	"sync"
	"time"
)

// Unit is a finished unit of work (or several finished together).
type Unit struct {
	// Stage names the stage: "describe", "index", …
	Stage string
	// Source tells apart the sets of units of a stage that runs once per
	// model ("solis-ada" for the index of that learner), "" when the
	// stage runs once.
	Source string
	// Noun says what a unit is: "parts", "query shards", "models".
	Noun string
	// Units is how many units this is (1 if 0); Of how many units Source
	// has in the job, 0 if unknown.
	Units, Of int64
	// Sources is how many sources the stage has in the job: 0 if it has
	// one (Source "") or the number is unknown.
	Sources int
	// Rows is the number of rows the unit read.
	Rows int64
	// Start is when the unit started.
	Start time.Time
}

// Tracker counts the units of each stage and decides which deserve a
// line. It is safe for concurrent use.
type Tracker struct {
	every  time.Duration
	mu     sync.Mutex
	stages map[string]*stage
}

type stage struct {
	done, rows int64
	start      time.Time
	lastLine   time.Time
	// of and doneBy are the units of each source in the job and done.
	of, doneBy map[string]int64
	sources    int
	finished   bool
}

// New returns a tracker that writes a stage's progress at most once every
// period, besides its first and last unit.
func New(every time.Duration) *Tracker {
	return &Tracker{every: every, stages: map[string]*stage{}}
}

// Default is the process's tracker: a line per stage at most every 20
// seconds, a readable pace for a run of minutes or hours.
var Default = New(20 * time.Second)

// Done counts u, finished at now, and returns the lines it deserves: the
// stage's start at its first unit, a source's end when it has all its
// units, the stage's end when every unit of every source is done, and
// otherwise its progress if the last line of the stage was a period ago.
func (t *Tracker) Done(u Unit, now time.Time) []string {
	n := max(u.Units, 1)
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.stages[u.Stage]
	if !ok {
		s = &stage{start: u.Start, of: map[string]int64{}, doneBy: map[string]int64{}}
		t.stages[u.Stage] = s
	}
	first := !ok
	s.done += n
	s.rows += u.Rows
	if u.Start.Before(s.start) {
		s.start = u.Start
	}
	s.of[u.Source] = u.Of
	s.doneBy[u.Source] += n
	s.sources = max(s.sources, u.Sources)
	total, known := s.total()
	elapsed := now.Sub(s.start)

	var lines []string
	say := func(format string, a ...any) {
		lines = append(lines, fmt.Sprintf(format, a...))
		s.lastLine = now
	}
	done := fmt.Sprintf("%d %s", s.done, u.Noun)
	if known {
		done = fmt.Sprintf("%d of %d %s", s.done, total, u.Noun)
	}
	switch {
	case known && s.done >= total && !s.finished:
		s.finished = true
		say("%s: finished %s, %d rows in, %s since it started", u.Stage, done, s.rows, Duration(elapsed))
		return lines
	case first:
		say("%s: started at %s; %s done, %d rows in", u.Stage, s.start.UTC().Format("15:04:05 UTC"), done, s.rows)
	case u.Source != "" && u.Of > 0 && s.doneBy[u.Source] == u.Of:
		say("%s %s: finished %d %s; the stage has done %s, %d rows in, %s since it started", u.Stage, u.Source, u.Of, u.Noun, done, s.rows, Duration(elapsed))
	case now.Sub(s.lastLine) >= t.every:
		say("%s: %s done, %d rows in, %s since it started", u.Stage, done, s.rows, Duration(elapsed))
	}
	return lines
}

// total returns the stage's units in the job, if every source has been
// seen and knows its count.
func (s *stage) total() (int64, bool) {
	want := s.sources
	if want == 0 {
		// A stage of unknown sources is known only if it has one.
		if _, one := s.of[""]; !one || len(s.of) != 1 {
			return 0, false
		}
		want = 1
	}
	if len(s.of) < want {
		return 0, false
	}
	var n int64
	for _, of := range s.of {
		if of <= 0 {
			return 0, false
		}
		n += of
	}
	return n, true
}

// Meter tells the progress of one long step of a unit of work — a
// vocabulary's seeding, which chooses its centroids one at a time — whose
// own steps are too many and too short to be a Tracker's units: a line at
// most every period of its Tracker, with how many of how many are done and
// the time since the step started, and one when the last is done. It is
// not safe for concurrent use: one goroutine runs the step.
type Meter struct {
	stage, noun string
	of          int64
	every       time.Duration
	start, last time.Time
	finished    bool
}

// Meter returns a meter for a step of stage that does of units (noun says
// what they are: "centroids") from start, telling its progress at most
// once every period of t.
func (t *Tracker) Meter(stage, noun string, of int64, start time.Time) *Meter {
	return &Meter{stage: stage, noun: noun, of: of, every: t.every, start: start, last: start}
}

// Done says that done of the step's units are done at now, and returns
// the line that deserves, if any.
func (m *Meter) Done(done int64, now time.Time) (string, bool) {
	elapsed := Duration(now.Sub(m.start))
	switch {
	case m.finished:
		return "", false
	case done >= m.of:
		m.finished = true
		return fmt.Sprintf("%s: finished %d %s, %s since it started", m.stage, m.of, m.noun, elapsed), true
	case now.Sub(m.last) >= m.every:
		m.last = now
		return fmt.Sprintf("%s: %d of %d %s done, %s since it started", m.stage, done, m.of, m.noun, elapsed), true
	}
	return "", false
}

// Duration writes d for a person: "850ms", "42s", "12m05s", "3h07m".
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.0fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
