package blob

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrStaleLock is returned (wrapped) by WriteIf on a local path whose lock
// file was left by a writer that died while holding it: no write can take
// the lock until a person removes the file (Lock.ClearCommand).
var ErrStaleLock = errors.New("stale lock")

// StaleLockAge is how long a lock may be held before it is taken for
// stale, whoever holds it: a conditional write holds its lock for a stat
// and a rename, so a lock this old was left by a writer that was killed.
const StaleLockAge = 10 * time.Minute

// Lock describes the lock file (path + ".lock") that serialises
// conditional writes of a local path across processes, as its owner
// recorded it.
type Lock struct {
	// Path is the lock file's path.
	Path string `json:"-"`
	// Host and PID are the owning process's; Time when it took the lock.
	// All are zero for a lock file without a readable record (one left by
	// a writer killed while writing it, or by an older version).
	Host string    `json:"host"`
	PID  int       `json:"pid"`
	Time time.Time `json:"time"`
	// Stale says that no writer holds the lock any more, and Why how that
	// is known.
	Stale bool   `json:"-"`
	Why   string `json:"-"`
}

// ClearCommand returns the shell command that removes the lock file.
func (l Lock) ClearCommand() string {
	return "rm " + shellQuote(l.Path)
}

// String describes the lock and its owner, for an error message.
func (l Lock) String() string {
	owner := "an unknown writer"
	if l.PID > 0 {
		owner = fmt.Sprintf("process %d on %s", l.PID, l.Host)
	}
	s := fmt.Sprintf("%s, held by %s", l.Path, owner)
	if !l.Time.IsZero() {
		s += " since " + l.Time.UTC().Format(time.RFC3339)
	}
	if l.Stale {
		s += fmt.Sprintf(", is stale (%s): no writer holds it; remove it with: %s", l.Why, l.ClearCommand())
	}
	return s
}

// LockOf returns the lock of the conditional writes of path, nil when
// none is held. Only local paths have locks: Cloud Storage checks
// generations itself.
func LockOf(path string) (*Lock, error) {
	if IsRemote(path) {
		return nil, nil
	}
	return readLock(path+".lock", time.Now())
}

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
	if json.Unmarshal(data, l) != nil {
		*l = Lock{}
	}
	l.Path = lockPath
	since := l.Time
	if since.IsZero() {
		since = st.ModTime()
	}
	host, _ := os.Hostname()
	switch {
	case l.PID > 0 && l.Host == host && !processAlive(l.PID):
		l.Stale, l.Why = true, fmt.Sprintf("process %d is not running on this host", l.PID)
	case now.Sub(since) > StaleLockAge:
		l.Stale, l.Why = true, fmt.Sprintf("taken %s ago, and a write holds it for less than a second", now.Sub(since).Round(time.Second))
	}
	return l, nil
}

// takeLock takes the lock file of path for a conditional write, recording
// this process as its owner, and returns its release. A lock held by
// another writer is ErrPrecondition (that writer is writing the object);
// a stale one is ErrStaleLock.
func takeLock(path string) (release func(), err error) {
	lockPath := path + ".lock"
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if errors.Is(err, fs.ErrExist) {
		l, lerr := readLock(lockPath, time.Now())
		switch {
		case lerr != nil:
			return nil, lerr
		case l == nil:
			return nil, fmt.Errorf("%w: another writer held %s", ErrPrecondition, lockPath)
		case l.Stale:
			return nil, fmt.Errorf("%w: %v", ErrStaleLock, l)
		}
		return nil, fmt.Errorf("%w: another writer holds %v", ErrPrecondition, l)
	}
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
