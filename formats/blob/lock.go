package blob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrStaleLock is returned (wrapped) by WriteIf and AwaitLock on a local
// path whose lock file was left by a writer that died while holding it: no
// write can take the lock until a person removes the file
// (Lock.ClearCommand).
var ErrStaleLock = errors.New("stale lock")

// ErrLocked is returned (wrapped) by WriteIf and AwaitLock on a local path
// whose lock file a writer this host cannot prove dead (a live process, or
// one on another host) held for longer than LockWait: far longer than a
// conditional write holds it. It is not ErrPrecondition: the object itself
// may not have changed.
var ErrLocked = errors.New("lock held too long")

// StaleLockAge is how long a lock may be held before it is taken for
// stale, whoever holds it: a conditional write holds its lock for a stat
// and a rename, so a lock this old was left by a writer that was killed.
const StaleLockAge = 10 * time.Minute

// LockWait is how long a writer waits for another's lock to be released:
// a conditional write holds it for a stat and a rename, well under a
// second, and writes its owner record into it as soon as it is created. A
// lock older than this is not a write in progress, and one without an
// owner record (empty, or not a record) is stale.
const LockWait = 5 * time.Second

// lockWait is LockWait, shortened by tests.
var lockWait = LockWait

// Lock describes the lock file (path + ".lock") that serialises
// conditional writes of a local path across processes, as its owner
// recorded it.
type Lock struct {
	// Path is the lock file's path.
	Path string `json:"-"`
	// Host and PID are the owning process's; Time when it took the lock.
	// All are zero for a lock file without a readable record (one left by
	// a writer killed while writing it, or not written by this package).
	Host string    `json:"host"`
	PID  int       `json:"pid"`
	Time time.Time `json:"time"`
	// Age is how long the lock has been held when it was read: since Time,
	// or since the file's modification for a lock without a record.
	Age time.Duration `json:"-"`
	// Record says what the file holds when it holds no owner record
	// ("empty", "not an owner record"); "" for a lock with one.
	Record string `json:"-"`
	// Stale says that no writer holds the lock any more, and Why how that
	// is known.
	Stale bool   `json:"-"`
	Why   string `json:"-"`
}

// ClearCommand returns the shell command that removes the lock file.
func (l Lock) ClearCommand() string {
	return "rm " + shellQuote(l.Path)
}

// String describes the lock and its owner, for an error message: for a
// lock that stops writers, what is known of its writer and the command
// that removes it.
func (l Lock) String() string {
	owner := "an unknown writer"
	switch {
	case l.PID > 0:
		owner = fmt.Sprintf("process %d on %s", l.PID, l.Host)
	case l.Record != "":
		owner += " (the file is " + l.Record + ")"
	}
	s := fmt.Sprintf("%s, held by %s", l.Path, owner)
	if !l.Time.IsZero() {
		s += " since " + l.Time.UTC().Format(time.RFC3339)
	}
	switch {
	case l.Stale:
		s += fmt.Sprintf(", is stale (%s): no writer holds it; remove it with: %s", l.Why, l.ClearCommand())
	case l.Age > lockWait:
		check := "its owner is unknown"
		switch host, _ := os.Hostname(); {
		case l.PID > 0 && l.Host == host:
			check = fmt.Sprintf("process %d runs on this host: a hung writer, or another process that took its id", l.PID)
		case l.PID > 0:
			check = fmt.Sprintf("this host cannot tell whether process %d still runs on %s", l.PID, l.Host)
		}
		s += fmt.Sprintf(", has been held for %s, where a write holds it for less than a second (%s): if no writer is at work there, remove it with: %s",
			l.Age.Round(time.Second), check, l.ClearCommand())
	}
	return s
}

// err is the error a writer that found the lock gives up with:
// ErrStaleLock for a stale lock, ErrLocked for one held longer than
// lockWait, nil for one worth waiting for.
func (l *Lock) err() error {
	switch {
	case l.Stale:
		return fmt.Errorf("%w: %v", ErrStaleLock, l)
	case l.Age > lockWait:
		return fmt.Errorf("%w: %v", ErrLocked, l)
	}
	return nil
}

// AwaitLock returns once no writer holds the lock of the conditional
// writes of path, waiting up to LockWait for a writer at work to release
// it. A lock that would stop the next write is an error wrapping
// ErrStaleLock or ErrLocked, which describes the lock and names the
// command that removes it. A gs:// path has no lock: nil.
func AwaitLock(ctx context.Context, path string) error {
	if IsRemote(path) {
		return nil
	}
	lockPath := path + ".lock"
	return waitLock(ctx, lockPath, func() (bool, error) {
		_, err := os.Lstat(lockPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return true, nil
		case err != nil:
			return false, fmt.Errorf("blob: lock %s: %w", lockPath, err)
		}
		return false, nil
	})
}

// waitLock calls try until it is done or fails, as long as the lock file
// lockPath, which stops it, may still be released: for at most lockWait
// by the lock's age or by this wait. Otherwise it returns the lock's
// error (Lock.err).
func waitLock(ctx context.Context, lockPath string, try func() (done bool, err error)) error {
	start := time.Now()
	for {
		done, err := try()
		if done || err != nil {
			return err
		}
		now := time.Now()
		l, err := readLock(lockPath, now)
		if err != nil {
			return err
		}
		if l == nil {
			continue // released in between
		}
		l.Age = max(l.Age, now.Sub(start))
		if err := l.err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("blob: waiting for %v: %w", l, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// lockPoll is how often a waiting writer looks at a lock.
const lockPoll = 20 * time.Millisecond

func readLock(lockPath string, now time.Time) (*Lock, error) {
	st, err := os.Stat(lockPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("blob: lock %s: %w", lockPath, err)
	}
	data, err := os.ReadFile(lockPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // released in between
	}
	if err != nil {
		return nil, fmt.Errorf("blob: lock %s: %w", lockPath, err)
	}
	l := &Lock{}
	if len(bytes.TrimSpace(data)) == 0 {
		l.Record = "empty"
	} else if json.Unmarshal(data, l) != nil || l.PID <= 0 {
		*l = Lock{Record: "not an owner record"}
	}
	l.Path = lockPath
	since := l.Time
	if since.IsZero() {
		since = st.ModTime()
	}
	l.Age = max(now.Sub(since), 0)
	host, _ := os.Hostname()
	switch {
	case l.PID > 0 && l.Host == host && !processAlive(l.PID):
		l.Stale, l.Why = true, fmt.Sprintf("process %d is not running on this host", l.PID)
	case l.Age > StaleLockAge:
		l.Stale, l.Why = true, fmt.Sprintf("taken %s ago, and a write holds it for less than a second", l.Age.Round(time.Second))
	case l.Record != "" && l.Age > lockWait:
		// A writer records itself as soon as it has created the file.
		how := "its writer was killed before it recorded itself"
		if l.Record != "empty" {
			how = "its writer was killed while recording itself, or was no writer of this program"
		}
		l.Stale, l.Why = true, fmt.Sprintf("%s for %s: %s", l.Record, l.Age.Round(time.Second), how)
	}
	return l, nil
}

// takeLock takes the lock file of path for a conditional write, recording
// this process as its owner, and returns its release. It waits for a lock
// held by another writer (waitLock); a stale lock is ErrStaleLock, and
// one held too long ErrLocked.
func takeLock(ctx context.Context, path string) (release func(), err error) {
	lockPath := path + ".lock"
	var f *os.File
	err = waitLock(ctx, lockPath, func() (bool, error) {
		var err error
		f, err = os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	rec, _ := json.Marshal(Lock{Host: host, PID: os.Getpid(), Time: time.Now().UTC()})
	_, werr := f.Write(append(rec, '\n'))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(lockPath)
		return nil, werr
	}
	return func() { os.Remove(lockPath) }, nil
}

// processAlive reports whether a process pid runs on this host. Only a
// definite "no such process" counts as dead: a process of another user
// (EPERM) is alive.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
