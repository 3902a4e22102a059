// Package reindex is the nightly job around the bowline job: each night
// writes a complete, versioned run under <root>/runs/<run-id>/, a quality
// gate compares it with the published run, and only a night that passes
// is published, by one conditional write of <root>/published.json
// (package formats/published). Then old runs are removed (Prune): the
// newest published runs beyond a number kept, refused runs older than the
// published one, and unfinished runs of nights that can no longer publish.
//
//	<root>/published.json          → {"run": "runs/20261125T071500Z-3f9a", …}
//	<root>/runs/20261124T071500Z-0b1c/  an earlier night, kept for a while
//	<root>/runs/20261125T071500Z-3f9a/  the published night: manifest.json, report.json, gate.json, …
//
// A night starts from the published run (Options.Incremental): the bowline
// job reuses its vocabulary and carries over what did not change
// (bowline.Config.Previous).
package reindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
)

// GateJSON names the gate's verdict in a run's directory, beside
// report.json. It is written after the run's manifest and is not listed
// in it.
const GateJSON = "gate.json"

// Options configure a night.
type Options struct {
	// Job is the bowline job's configuration: the input and every
	// setting. Night sets its Output (the night's run directory), and
	// Previous and Earlier (the published run, if any).
	Job bowline.Config
	// Root is the directory (local or gs://) holding runs/ and
	// published.json.
	Root string
	// Incremental starts the night from the published run, when there is
	// one; otherwise every image is described and every model trained
	// anew.
	Incremental bool
	// ServingLearner names the learner readers serve, whose mAP the gate
	// checks: one of Job's learners, or a baseline.
	ServingLearner string
	Limits         Limits
	// Keep is the number of published runs kept under runs/ (0: every
	// run is kept); see Prune for the refused and unfinished ones.
	Keep int
	// Run runs a pipeline; beamx.Run (the runner --runner names, Prism by
	// default) when nil.
	Run func(context.Context, *beam.Pipeline) error
	// Log receives one line per step, for people; nothing when nil.
	Log io.Writer
	// Now and Rand make the run id (time.Now and crypto/rand when nil).
	Now  func() time.Time
	Rand io.Reader
}

// Validate reports options a night cannot run with. The job's own
// configuration is validated when its output is known.
func (o Options) Validate() error {
	if o.Keep < 0 {
		return setting.Errorf("reindex", "Keep", o.Keep, "0 or more")
	}
	if o.Root == "" {
		return errors.New("no root directory")
	}
	if err := o.Limits.Validate(); err != nil {
		return err
	}
	s := o.ServingLearner
	switch {
	case s == "":
		return errors.New("no serving learner")
	case s == string(learners.BaselineTFIDF), s == string(learners.BaselineEuclidean) && o.Job.Describe.Global:
	case !slices.Contains(o.Job.Learning.Learners, s):
		return fmt.Errorf("the serving learner %s is not among the learners trained (%v)", s, o.Job.Learning.Learners)
	}
	return nil
}

// Result is what a night did.
type Result struct {
	// ID is the night's run id, Dir its directory.
	ID, Dir string
	// Previous is the run published when the night started (nil: none),
	// and Incremental whether the job was given it to start from
	// (Lineage says what it reused of it).
	Previous    *published.Run
	Incremental bool
	// Report is the run's report, once it finished, and Lineage what it
	// described anew and what it carried over from Previous (nil if the
	// run records none).
	Report  report.Report
	Lineage *run.Lineage
	// Verdict is the gate's, once the run finished.
	Verdict Verdict
	// Published is what the night published; nil if it did not.
	Published *published.Run
	// Pruned is what the night removed under runs/ once judged, and the
	// unfinished runs it kept (see Prune).
	Pruned Pruned
}

// ErrRefused is returned (wrapped) by Night when the gate refused the
// night; published.ErrRace when another night published first.
var ErrRefused = errors.New("refused by the quality gate")

// GateFile is the content of gate.json: the gate's verdict on a run, and what
// came of it.
type GateFile struct {
	// Run is the run judged, "runs/<run-id>".
	Run string `json:"run"`
	Verdict
	// Outcome is "refused", "published", or, for a night that passed but
	// found another published first, "not published: <why>".
	Outcome     string    `json:"outcome"`
	Incremental bool      `json:"incremental"`
	JudgedAt    time.Time `json:"judged_at"`
}

// Gate outcomes.
const (
	OutcomeRefused   = "refused"
	OutcomePublished = "published"
)

// LoadGate reads the gate.json of the run under dir.
func LoadGate(ctx context.Context, dir string) (GateFile, error) {
	data, _, err := blob.Read(ctx, blob.Join(dir, GateJSON))
	if err != nil {
		return GateFile{}, err
	}
	var g GateFile
	if err := json.Unmarshal(data, &g); err != nil {
		return GateFile{}, fmt.Errorf("%s: %w", blob.Join(dir, GateJSON), err)
	}
	return g, nil
}

func writeGate(ctx context.Context, dir string, g GateFile) error {
	js, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return blob.Write(ctx, blob.Join(dir, GateJSON), append(js, '\n'))
}

// Night runs one night: it reads what is published under o.Root, runs the
// bowline job into a new run directory (from the published run when
// incremental), judges the finished run with the gate, writes gate.json
// into it, publishes it if it passed — conditionally on published.json
// being what the night read when it started — and prunes old runs. A
// refused night returns an error wrapping ErrRefused; a night another
// published before returns one wrapping published.ErrRace. Either way
// its run directory stays, and published.json is untouched.
func Night(ctx context.Context, o Options) (Result, error) {
	var res Result
	if err := o.Validate(); err != nil {
		return res, err
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	run := beamx.Run
	if o.Run != nil {
		run = o.Run
	}

	// A lock that stops writers would make the publish fail after the
	// whole job: say so, and how to clear it, before anything starts.
	if err := published.CheckLock(ctx, o.Root); err != nil {
		return res, err
	}
	// The generation read here is the one the publish is conditional on:
	// if another night publishes while this one runs, this one loses.
	pub, gen, err := published.Read(ctx, o.Root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		gen = 0
	case err != nil:
		return res, err
	default:
		res.Previous = &pub
	}
	if res.ID, err = NewRunID(now(), o.Rand); err != nil {
		return res, err
	}
	res.Dir = RunDir(o.Root, res.ID)

	c := o.Job
	c.Output = res.Dir
	if res.Previous != nil {
		// The report shows the change since the published run. The gate
		// needs only published.json: a full night goes on without the
		// comparison if the published run cannot be read, an incremental
		// one cannot.
		prev := res.Previous.Dir(o.Root)
		c.Earlier, err = report.LoadEarlier(ctx, fileio.RunDir(prev))
		switch {
		case err != nil && o.Incremental:
			return res, fmt.Errorf("the published run %s (--incremental=false runs a full night without it): %w", prev, err)
		case err != nil:
			logf("night %s: the report will not compare with the published run: %v", res.ID, err)
		}
		if o.Incremental {
			c.Previous = prev
			res.Incremental = true
		}
	}
	switch {
	case res.Incremental:
		logf("night %s: incremental, from the published run %s", res.ID, res.Previous.Run)
	case res.Previous != nil:
		logf("night %s: full run (not incremental); published: %s", res.ID, res.Previous.Run)
	default:
		logf("night %s: full run (nothing published yet)", res.ID)
	}
	if err := c.Validate(); err != nil {
		return res, err
	}
	if err := bowline.Preflight(ctx, c); err != nil {
		return res, err
	}
	if err := bowline.PrepareOutput(ctx, c.Output, false); err != nil {
		return res, err
	}
	p, s := beam.NewPipelineWithRoot()
	if err := bowline.Build(s, c); err != nil {
		return res, err
	}
	start := now()
	if err := run(ctx, p); err != nil {
		return res, fmt.Errorf("night %s: %w", res.ID, err)
	}
	// The manifest, written last, is what says the run finished.
	if _, err := fileio.RunDir(res.Dir).Manifest(ctx); err != nil {
		if cur, gerr := blob.Generation(ctx, published.Path(o.Root)); gerr == nil && cur != gen {
			// A night that started later published and pruned this one's
			// run, which could never have been published anyway (Prune).
			return res, fmt.Errorf("night %s: its run %s is gone, removed by a later night that published: %w", res.ID, res.Dir, published.ErrRace)
		}
		return res, fmt.Errorf("night %s: the job ended without finishing its run: %w", res.ID, err)
	}
	if res.Report, err = report.Load(ctx, fileio.RunDir(res.Dir)); err != nil {
		return res, fmt.Errorf("night %s: %w", res.ID, err)
	}
	cnt := res.Report.Counts
	logf("night %s: finished in %.1fs: %d images, %d dead letters, %d with features", res.ID, now().Sub(start).Seconds(), cnt.Images, cnt.DeadLetters, cnt.Described)
	if l, err := fileio.RunDir(res.Dir).Lineage(ctx); err != nil {
		logf("night %s: no lineage: %v", res.ID, err)
	} else {
		res.Lineage = &l
		logf("night %s: %d images described, %d carried over; vocabulary kept: %v (%s); warm-started: %v",
			res.ID, l.Images.Described, l.Images.Carried, l.Vocabulary.Kept, l.Vocabulary.Reason, l.WarmStarted)
		if l.FullReason != "" {
			logf("night %s: ran in full: %s", res.ID, l.FullReason)
		}
	}

	res.Verdict = Gate(res.Report, res.Previous, o.ServingLearner, o.Limits)
	if o.Log != nil {
		fmt.Fprintf(o.Log, "night %s: quality gate:\n", res.ID)
		res.Verdict.WriteTable(o.Log)
	}
	g := GateFile{Run: RunRel(res.ID), Verdict: res.Verdict, Incremental: res.Incremental, JudgedAt: now().UTC()}
	if !res.Verdict.Pass {
		g.Outcome = OutcomeRefused
		if err := writeGate(ctx, res.Dir, g); err != nil {
			return res, fmt.Errorf("night %s: %w", res.ID, err)
		}
		was := "nothing is published"
		if res.Previous != nil {
			was = published.Name + " still names " + res.Previous.Run
		}
		// A refused night prunes too (its own run stays: it is newer than
		// the published one); a failure is logged, the refusal is the error.
		_ = prune(ctx, o, &res, logf)
		return res, fmt.Errorf("night %s %w: %s (the run is kept in %s; %s)", res.ID, ErrRefused, res.Verdict.Reason(), res.Dir, was)
	}

	// The verdict is written before the publish, so that a published run
	// always has its gate.json.
	g.Outcome = OutcomePublished
	if err := writeGate(ctx, res.Dir, g); err != nil {
		return res, fmt.Errorf("night %s: %w", res.ID, err)
	}
	pr := published.Run{
		Run:            RunRel(res.ID),
		RunURI:         res.Dir,
		PublishedAt:    now().UTC(),
		Images:         cnt.Images,
		MAP:            map[string]float64{},
		ServingLearner: o.ServingLearner,
	}
	for _, m := range res.Report.Headline() {
		pr.MAP[m.Method] = m.MAP
	}
	if res.Previous != nil {
		pr.Previous = res.Previous.Run
	}
	if err := published.Publish(ctx, o.Root, pr, gen); err != nil {
		g.Outcome = "not published: " + err.Error()
		if werr := writeGate(ctx, res.Dir, g); werr != nil {
			logf("night %s: %v", res.ID, werr)
		}
		return res, fmt.Errorf("night %s passed the gate but was not published (the run is kept in %s): %w", res.ID, res.Dir, err)
	}
	res.Published = &pr
	logf("night %s: published (%s)", res.ID, published.Path(o.Root))

	if err := prune(ctx, o, &res, logf); err != nil {
		// The night is published; a failed clean-up is the next night's to
		// retry.
		return res, fmt.Errorf("night %s was published, but removing old runs failed: %w", res.ID, err)
	}
	return res, nil
}

// prune runs Prune for the night, once it is judged, and logs what it
// removed and the unfinished runs it kept.
func prune(ctx context.Context, o Options, res *Result, logf func(string, ...any)) error {
	p, err := Prune(ctx, o.Root, o.Keep, res.ID)
	res.Pruned = p
	for _, r := range p.Removed {
		logf("night %s: removed run %s: %s", res.ID, r.ID, r.Why)
	}
	for _, r := range p.Unfinished {
		logf("night %s: run %s is %s", res.ID, r.ID, r.Why)
	}
	if err != nil {
		logf("night %s: %v", res.ID, err)
	}
	return err
}
