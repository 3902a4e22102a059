// Package published reads and writes published.json, the pointer from a
// root directory of versioned runs to the one run readers use.
//
// The nightly job (cmd/reindex) writes each night's run whole under
// <root>/runs/<run-id>/ and, once the run has finished and passed its
// quality gate, points <root>/published.json at it in one object write,
// conditional on the generation of published.json the night read when it
// started: of two nights that started from the same published run, exactly
// one publishes. Readers — the query service, the next night — follow
// published.json only, never list runs/: a run there may be unfinished,
// refused by the gate, or about to be deleted.
//
// The package is pure Go (no Beam), so that any program can import it.
package published

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/bowline/bowline/formats/blob"
	rundir "github.com/bowline/bowline/formats/run"
)

// Name is the file's name under the root.
const Name = rundir.PublishedName

// RunsDir is the directory under the root that holds the runs, one
// sub-directory each.
const RunsDir = "runs"

// Run is the content of published.json.
type Run struct {
	// Run is the published run's directory relative to the root,
	// "runs/<run-id>": what a reader joins to the root it was given, so a
	// copied or renamed root stays readable.
	Run string `json:"run"`
	// RunURI is the run's full path when it was published, for people.
	RunURI      string    `json:"run_uri"`
	PublishedAt time.Time `json:"published_at"`
	// Images is the number of images the run holds.
	Images int64 `json:"images"`
	// MAP is each method's held-out mAP (training-query mAP for a run
	// that held no query out), by method name.
	MAP map[string]float64 `json:"map"`
	// ServingLearner names the learner whose index readers serve.
	ServingLearner string `json:"serving_learner"`
	// Previous is the run published before this one ("runs/<run-id>"),
	// empty for the first.
	Previous string `json:"previous,omitempty"`
}

// ID returns the run id, the last element of Run.
func (r Run) ID() string { return path.Base(r.Run) }

// Dir returns the published run's directory under root.
func (r Run) Dir(root string) string { return blob.Join(root, r.Run) }

// Validate reports a Run that no reader could follow.
func (r Run) Validate() error {
	id, ok := strings.CutPrefix(r.Run, RunsDir+"/")
	switch {
	case !ok || id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == "..":
		return fmt.Errorf("run %q is not %s/<run-id>", r.Run, RunsDir)
	case r.ServingLearner == "":
		return errors.New("no serving learner")
	case r.PublishedAt.IsZero():
		return errors.New("no publication time")
	}
	return nil
}

// Path returns the path of published.json under root (local or gs://).
func Path(root string) string { return blob.Join(root, Name) }

// Read returns the run published under root and the generation of
// published.json, which Publish needs to replace it. When nothing is
// published the error wraps fs.ErrNotExist (blob.ErrNotExist).
func Read(ctx context.Context, root string) (Run, int64, error) {
	data, gen, err := blob.Read(ctx, Path(root))
	if err != nil {
		return Run{}, 0, fmt.Errorf("published run of %s: %w", root, err)
	}
	r, err := Parse(data)
	if err != nil {
		return Run{}, 0, fmt.Errorf("%s: %w", Path(root), err)
	}
	return r, gen, nil
}

// ReadPublished returns the run published under root: what a reader
// follows. When nothing is published the error wraps fs.ErrNotExist.
func ReadPublished(ctx context.Context, root string) (Run, error) {
	r, _, err := Read(ctx, root)
	return r, err
}

// Parse reads published.json's content and validates it.
func Parse(data []byte) (Run, error) {
	var r Run
	if err := json.Unmarshal(data, &r); err != nil {
		return Run{}, err
	}
	if err := r.Validate(); err != nil {
		return Run{}, err
	}
	return r, nil
}

// JSON returns r as published.json holds it.
func (r Run) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// CheckLock returns once no writer holds the lock of published.json under
// a local root, waiting a few seconds (blob.LockWait) for a night that is
// publishing. A lock that would stop this night's publish — left by a
// night killed while publishing, empty or unreadable, or held far longer
// than a publish takes by a process this host cannot check — is an error
// wrapping blob.ErrStaleLock or blob.ErrLocked that names the command that
// clears it: a night checks before it starts its job, which would
// otherwise run in full and then fail to publish. A gs:// root has no
// lock: nil.
func CheckLock(ctx context.Context, root string) error {
	return blob.AwaitLock(ctx, Path(root))
}

// ErrRace is returned (wrapped, with blob.ErrPrecondition) by Publish when
// published.json changed since it was read: another night published first.
var ErrRace = errors.New("another run was published since this night started")

// Publish points published.json under root at r, in one write, only if
// published.json is still at generation gen (0: only if nothing is
// published); otherwise it returns an error wrapping ErrRace and
// blob.ErrPrecondition and leaves published.json alone. A published.json
// that already holds exactly r is this publish's own write (Cloud Storage
// retries a conditional upload whose answer was lost, and the retry then
// fails its condition): nil. A lock that stops the publish of a local
// root while published.json is unchanged is not a race: the error wraps
// blob.ErrStaleLock or blob.ErrLocked, not ErrRace.
func Publish(ctx context.Context, root string, r Run, gen int64) error {
	if err := r.Validate(); err != nil {
		return fmt.Errorf("publish %s: %w", r.Run, err)
	}
	data, err := r.JSON()
	if err != nil {
		return fmt.Errorf("publish %s: %w", r.Run, err)
	}
	err = blob.WriteIf(ctx, Path(root), data, gen)
	if errors.Is(err, blob.ErrPrecondition) {
		if cur, _, rerr := blob.Read(ctx, Path(root)); rerr == nil && bytes.Equal(cur, data) {
			return nil
		}
		return fmt.Errorf("publish %s: %w: %w", r.Run, ErrRace, err)
	}
	if err != nil {
		return fmt.Errorf("publish %s: %w", r.Run, err)
	}
	return nil
}
