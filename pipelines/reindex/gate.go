package reindex

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
)

// Limits are the quality gate's thresholds.
type Limits struct {
	// MaxMAPDrop is the largest fall of the serving learner's held-out mAP
	// below the published run's, in mAP (0.01 is one point).
	MaxMAPDrop float64
	// MaxDeadRate bounds dead letters / images: a night passes below it
	// (or with no dead letter at all).
	MaxDeadRate float64
	// MaxShrink is the largest fall of the image count relative to the
	// published run's (0.1: at most 10% fewer images).
	MaxShrink float64
}

// DefaultLimits are the limits cmd/reindex defaults to.
func DefaultLimits() Limits {
	return Limits{MaxMAPDrop: 0.01, MaxDeadRate: 0.05, MaxShrink: 0.1}
}

// Validate reports limits the gate cannot work with.
func (l Limits) Validate() error {
	switch {
	case !(l.MaxMAPDrop >= 0) || math.IsInf(l.MaxMAPDrop, 1):
		return setting.Errorf("reindex", "MaxMAPDrop", l.MaxMAPDrop, "a number, 0 or more")
	case !(l.MaxDeadRate >= 0 && l.MaxDeadRate <= 1):
		return setting.Errorf("reindex", "MaxDeadRate", l.MaxDeadRate, "in [0, 1]")
	case !(l.MaxShrink >= 0 && l.MaxShrink <= 1):
		return setting.Errorf("reindex", "MaxShrink", l.MaxShrink, "in [0, 1]")
	}
	return nil
}

// The gate's checks, by name.
const (
	CheckMAPDrop  = "map_drop"
	CheckDeadRate = "dead_rate"
	CheckShrink   = "shrink"
)

// Check is one test of the gate: Value against Limit.
type Check struct {
	Name string `json:"name"`
	// Value is what was measured: the mAP drop (published − this night;
	// negative is a rise), the dead-letter rate, or the relative fall of
	// the image count (negative is growth).
	Value float64 `json:"value"`
	Limit float64 `json:"limit"`
	Pass  bool    `json:"pass"`
	// Skipped says the check had nothing to compare with (the first
	// night): it passes.
	Skipped bool `json:"skipped,omitempty"`
	// Detail says what was compared, for people.
	Detail string `json:"detail"`
}

// Verdict is the gate's answer for a night.
type Verdict struct {
	Pass bool `json:"pass"`
	// ComparedWith is the published run the night was compared with
	// ("runs/<run-id>"), empty on the first night.
	ComparedWith   string  `json:"compared_with,omitempty"`
	ServingLearner string  `json:"serving_learner"`
	Checks         []Check `json:"checks"`
}

// Failed returns the checks that failed.
func (v Verdict) Failed() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Pass {
			out = append(out, c)
		}
	}
	return out
}

// Reason returns why the night was refused, one clause per failed check;
// empty if it passed.
func (v Verdict) Reason() string {
	var parts []string
	for _, c := range v.Failed() {
		parts = append(parts, c.Detail)
	}
	return strings.Join(parts, "; ")
}

// WriteTable writes one line per check, for a terminal.
func (v Verdict) WriteTable(w io.Writer) {
	for _, c := range v.Checks {
		mark := "pass"
		switch {
		case !c.Pass:
			mark = "FAIL"
		case c.Skipped:
			mark = "skip"
		}
		fmt.Fprintf(w, "  %-4s  %-9s  %s\n", mark, c.Name, c.Detail)
	}
}

// HeadlineMAP returns the named method's headline mAP in r — over
// held-out queries, or over training queries for a run that held none
// out — and whether r has it.
func HeadlineMAP(r report.Report, method string) (float64, bool) {
	m, ok := r.Method(method)
	return m.MAP, ok
}

// Gate decides whether a finished night, whose report is r, may replace
// the published run pub (nil when nothing is published yet) for readers
// of the serving learner: its headline mAP may fall below the published
// one by at most MaxMAPDrop, its dead-letter rate must be under
// MaxDeadRate, and its image count may fall by at most MaxShrink. The
// first night is judged on its dead-letter rate alone. A published run
// without the serving learner (it was changed) leaves nothing to compare
// the mAP with: the check is skipped, and the first night under the new
// learner sets the bar.
func Gate(r report.Report, pub *published.Run, servingLearner string, l Limits) Verdict {
	v := Verdict{ServingLearner: servingLearner}
	if pub != nil {
		v.ComparedWith = pub.Run
	}

	// mAP of the serving learner.
	cur, ok := HeadlineMAP(r, servingLearner)
	mc := Check{Name: CheckMAPDrop, Limit: l.MaxMAPDrop}
	switch {
	case !ok:
		mc.Detail = fmt.Sprintf("the run has no mAP for the serving learner %s", servingLearner)
	case pub == nil:
		mc.Pass, mc.Skipped = true, true
		mc.Detail = fmt.Sprintf("%s mAP %.4f; nothing published to compare with", servingLearner, cur)
	default:
		old, had := pub.MAP[servingLearner]
		if !had {
			mc.Pass, mc.Skipped = true, true
			mc.Detail = fmt.Sprintf("%s mAP %.4f; the published run has no %s to compare with", servingLearner, cur, servingLearner)
			break
		}
		mc.Value = old - cur
		// The tolerance keeps a drop of exactly the limit, as written in
		// decimal, from failing on its binary rounding.
		mc.Pass = mc.Value <= l.MaxMAPDrop+1e-12
		mc.Detail = fmt.Sprintf("%s mAP %.4f, published %.4f: drop %+.4f, limit %.4f", servingLearner, cur, old, mc.Value, l.MaxMAPDrop)
	}
	v.Checks = append(v.Checks, mc)

	// Dead letters.
	c := r.Counts
	dc := Check{Name: CheckDeadRate, Limit: l.MaxDeadRate}
	if c.Images > 0 {
		dc.Value = float64(c.DeadLetters) / float64(c.Images)
		dc.Pass = c.DeadLetters == 0 || dc.Value < l.MaxDeadRate
		dc.Detail = fmt.Sprintf("%d dead letters of %d images: rate %.4f, limit %.4f", c.DeadLetters, c.Images, dc.Value, l.MaxDeadRate)
	} else {
		dc.Detail = "the run has no images"
	}
	v.Checks = append(v.Checks, dc)

	// Image count.
	sc := Check{Name: CheckShrink, Limit: l.MaxShrink}
	switch {
	case pub == nil:
		sc.Pass, sc.Skipped = true, true
		sc.Detail = fmt.Sprintf("%d images; nothing published to compare with", c.Images)
	case pub.Images <= 0:
		sc.Pass, sc.Skipped = true, true
		sc.Detail = fmt.Sprintf("%d images; the published run records none", c.Images)
	default:
		sc.Value = float64(pub.Images-c.Images) / float64(pub.Images)
		sc.Pass = sc.Value <= l.MaxShrink
		sc.Detail = fmt.Sprintf("%d images, published %d: fall %+.4f, limit %.4f", c.Images, pub.Images, sc.Value, l.MaxShrink)
	}
	v.Checks = append(v.Checks, sc)

	v.Pass = len(v.Failed()) == 0
	return v
}
