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

// Prune deletes the oldest runs under root beyond the newest keep, never
// the run named keepAlso (the published run's id), and returns the ids it
// deleted, oldest first. keep ≤ 0 deletes nothing. Only directories named
// as run ids are considered.
//
// A night still writing an older run than the newest keep (possible only
// with nights that overlap) loses its directory: keep counts every run,
// published or not, so keep at least as many as nights may overlap.
func Prune(ctx context.Context, root string, keep int, keepAlso string) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	ids, err := Runs(ctx, root)
	if err != nil {
		return nil, err
	}
	if len(ids) <= keep {
		return nil, nil
	}
	var gone []string
	for _, id := range ids[:len(ids)-keep] {
		if id == keepAlso {
			continue
		}
		if err := blob.RemoveAll(ctx, RunDir(root, id)); err != nil {
			return gone, fmt.Errorf("prune: %w", err)
		}
		gone = append(gone, id)
	}
	return gone, nil
}
