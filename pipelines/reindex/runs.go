package reindex

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/formats/run"
)

// runIDTime is the time part of a run id: UTC, to the second, so that ids
// sort as the nights started.
const runIDTime = "20060102T150405Z"

// runID matches the run ids NewRunID makes; Prune touches nothing else
// under runs/.
var runID = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{4}$`)

// NewRunID returns a run id for a night starting at now: its UTC time and
// a short random suffix from rnd (crypto/rand when nil), e.g.
// "20261125T071500Z-3f9a". Ids sort by time; the suffix keeps two nights
// started in the same second apart.
func NewRunID(now time.Time, rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [2]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return now.UTC().Format(runIDTime) + "-" + hex.EncodeToString(b[:]), nil
}

// IsRunID reports whether s is a run id as NewRunID makes them.
func IsRunID(s string) bool { return runID.MatchString(s) }

// RunDir returns the directory of the run id under root.
func RunDir(root, id string) string { return blob.Join(root, RunRel(id)) }

// RunRel returns the directory of the run id relative to the root, as
// published.json names it.
func RunRel(id string) string { return published.RunsDir + "/" + id }

// Runs returns the ids of the runs under root, oldest first: the
// directories under <root>/runs/ named as NewRunID names them (on Cloud
// Storage, which has no directories, those holding at least one object).
// A root without runs has none.
func Runs(ctx context.Context, root string) ([]string, error) {
	dir := blob.Join(root, published.RunsDir)
	var names []string
	if blob.IsRemote(root) {
		paths, err := blob.List(ctx, dir)
		if err != nil {
			return nil, err
		}
		prefix := strings.TrimSuffix(blob.Join(dir, "x"), "x")
		for _, p := range paths {
			name, _, _ := strings.Cut(strings.TrimPrefix(p, prefix), "/")
			names = append(names, name)
		}
	} else {
		// Locally a run's directory exists, possibly empty, from the
		// moment its night starts.
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("runs of %s: %w", root, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	seen := map[string]bool{}
	var ids []string
	for _, n := range names {
		if IsRunID(n) && !seen[n] {
			seen[n] = true
			ids = append(ids, n)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// RunState is what a run under runs/ is to Prune, from its gate.json.
type RunState string

// Run states.
const (
	// StatePublished: the gate passed it and it was published (gate.json's
	// outcome), or published.json names it.
	StatePublished RunState = "published"
	// StateRefused: judged and not published — refused by the gate, or
	// beaten to the publish by another night. Its run and gate.json are
	// the operator's evidence.
	StateRefused RunState = "refused"
	// StateUnfinished: no gate.json, so its night never reached a verdict:
	// killed (or failed) during its job or the gate, or still running.
	StateUnfinished RunState = "unfinished"
)

// RunInfo is one run under runs/ as Prune saw it.
type RunInfo struct {
	ID    string
	State RunState
	// Why says, for a run Prune removed or reports, what it was and why
	// it went or stayed.
	Why string
}

// Pruned is what Prune did.
type Pruned struct {
	// Removed are the runs deleted, oldest first.
	Removed []RunInfo
	// Unfinished are unfinished runs older than the night that Prune kept,
	// because nothing published since they started: a night killed then,
	// or one still running beside this one. A later publish removes them.
	Unfinished []RunInfo
}

// IDs returns the ids of the runs removed, oldest first.
func (p Pruned) IDs() []string {
	var ids []string
	for _, r := range p.Removed {
		ids = append(ids, r.ID)
	}
	return ids
}

// classify returns the state of the run id under root, from its gate.json
// (and whether its job finished, for people), pubID being the published
// run's id ("" for none).
func classify(ctx context.Context, root, id, pubID string) (RunInfo, error) {
	r := RunInfo{ID: id}
	g, err := LoadGate(ctx, RunDir(root, id))
	switch {
	case id == pubID:
		r.State = StatePublished
	case errors.Is(err, fs.ErrNotExist):
		r.State = StateUnfinished
		switch gen, err := blob.Generation(ctx, blob.Join(RunDir(root, id), run.ManifestName)); {
		case err != nil:
			r.Why = "no gate.json"
		case gen == 0:
			r.Why = "no " + run.ManifestName + ": its job never finished"
		default:
			r.Why = "its job finished, but the night never judged it"
		}
	case err != nil:
		return r, fmt.Errorf("prune: %w", err)
	case g.Outcome == OutcomePublished:
		r.State = StatePublished
	default:
		r.State = StateRefused
		r.Why = g.Outcome
	}
	return r, nil
}

// Prune removes the runs under root that are no longer worth their space,
// night being the id of the night pruning (its own run is never removed),
// and reports the unfinished runs it keeps. keep ≤ 0 removes nothing.
//
//   - Published runs: the newest keep of them stay — the run published.json
//     names always among them — whatever else happened, so that refused or
//     killed nights never push out a run that a published.json's
//     "previous" may name. Older published runs go.
//   - Refused runs (gate.json says why) stay while they are newer than the
//     published run: the evidence of the nights refused since the last
//     publish, for the operator. A publish removes the refused runs older
//     than it.
//   - Unfinished runs (no gate.json: killed, or still running) older than
//     the published run go: a night publishes only if published.json has
//     not changed since it started, so a night that started before the
//     published run's can never publish, whether it was killed or is still
//     running. Unfinished runs newer than the published run but older than
//     night are kept and reported (Pruned.Unfinished).
//
// Only directories named as run ids are considered.
func Prune(ctx context.Context, root string, keep int, night string) (Pruned, error) {
	var res Pruned
	if keep <= 0 {
		return res, nil
	}
	pubID := ""
	switch pub, err := published.ReadPublished(ctx, root); {
	case err == nil:
		pubID = pub.ID()
	case !errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("prune: %w", err)
	}
	ids, err := Runs(ctx, root)
	if err != nil {
		return res, err
	}
	var runs []RunInfo
	nPublished := 0
	for _, id := range ids {
		r, err := classify(ctx, root, id, pubID)
		if err != nil {
			return res, err
		}
		runs = append(runs, r)
		if r.State == StatePublished {
			nPublished++
		}
	}
	olderThanPublished := func(id string) bool { return pubID != "" && id < pubID }
	var gone []RunInfo
	for _, r := range runs {
		switch {
		case r.ID == night || r.ID == pubID:
			continue
		case r.State == StatePublished:
			// Runs are oldest first: the first nPublished − keep published
			// runs are the ones beyond the newest keep.
			if nPublished > keep {
				nPublished--
				r.Why = fmt.Sprintf("published before the newest %d", keep)
				gone = append(gone, r)
			}
		case r.State == StateRefused && olderThanPublished(r.ID):
			r.Why = fmt.Sprintf("%s, older than the published run %s", r.Why, pubID)
			gone = append(gone, r)
		case r.State == StateUnfinished && olderThanPublished(r.ID):
			r.Why = fmt.Sprintf("unfinished (%s), started before the published run %s, so it can never publish", r.Why, pubID)
			gone = append(gone, r)
		case r.State == StateUnfinished && (night == "" || r.ID < night):
			r.Why = fmt.Sprintf("unfinished (%s), kept: nothing was published since it started, so it may be a night still running", r.Why)
			res.Unfinished = append(res.Unfinished, r)
		}
	}
	for _, r := range gone {
		if err := blob.RemoveAll(ctx, RunDir(root, r.ID)); err != nil {
			return res, fmt.Errorf("prune: %w", err)
		}
		res.Removed = append(res.Removed, r)
	}
	return res, nil
}
