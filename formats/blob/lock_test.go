package blob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	return cmd.Process.Pid
}

// TestStaleLock: a lock file left by a dead writer on this host, or one
// older than StaleLockAge, is stale — WriteIf says so with the command
// that clears it, instead of a precondition failure that looks like
// another writer forever; a live writer's lock is a precondition failure.
func TestStaleLock(t *testing.T) {
	ctx := context.Background()
	host, _ := os.Hostname()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, tc := range []struct {
		name   string
		record string
		age    time.Duration
		stale  string // what Why must say; "" for a lock that is held
	}{
		{"dead process", fmt.Sprintf(`{"host":%q,"pid":%d,"time":%q}`, host, deadPID(t), now), 0, "is not running on this host"},
		{"old", fmt.Sprintf(`{"host":"elsewhere","pid":1,"time":%q}`, time.Now().Add(-time.Hour).Format(time.RFC3339Nano)), 0, "ago"},
		{"old, no record", "", time.Hour, "ago"},
		{"live process", fmt.Sprintf(`{"host":%q,"pid":%d,"time":%q}`, host, os.Getpid(), now), 0, ""},
		{"another host", fmt.Sprintf(`{"host":"elsewhere","pid":1,"time":%q}`, now), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "published.json")
			lock := p + ".lock"
			if err := os.WriteFile(lock, []byte(tc.record), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.age > 0 {
				old := time.Now().Add(-tc.age)
				if err := os.Chtimes(lock, old, old); err != nil {
					t.Fatal(err)
				}
			}
			l, err := LockOf(p)
			if err != nil || l == nil || l.Path != lock {
				t.Fatalf("LockOf: %+v, %v", l, err)
			}
			err = WriteIf(ctx, p, []byte("x"), 0)
			if tc.stale == "" {
				if l.Stale || !errors.Is(err, ErrPrecondition) || errors.Is(err, ErrStaleLock) {
					t.Fatalf("a held lock: %+v; WriteIf: %v, want ErrPrecondition", l, err)
				}
				return
			}
			if !l.Stale || !strings.Contains(l.Why, tc.stale) {
				t.Errorf("lock %+v, want stale: %s", l, tc.stale)
			}
			if !errors.Is(err, ErrStaleLock) || errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), "rm "+lock) {
				t.Fatalf("WriteIf past a stale lock: %v, want ErrStaleLock naming rm %s", err, lock)
			}
			if _, err := os.Stat(p); err == nil {
				t.Error("WriteIf wrote past a lock")
			}
		})
	}
}

// TestLockRecordsItsOwner: while WriteIf holds the lock, the lock says
// which process holds it and since when; afterwards there is none.
func TestLockRecordsItsOwner(t *testing.T) {
	p := filepath.Join(t.TempDir(), "published.json")
	release, err := takeLock(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := LockOf(p)
	host, _ := os.Hostname()
	if err != nil || l == nil || l.PID != os.Getpid() || l.Host != host || time.Since(l.Time) > time.Minute || l.Stale {
		t.Fatalf("lock while held: %+v, %v", l, err)
	}
	release()
	if l, err := LockOf(p); l != nil || err != nil {
		t.Fatalf("lock after release: %+v, %v", l, err)
	}
	if l, err := LockOf("gs://bucket/published.json"); l != nil || err != nil {
		t.Fatalf("a gs:// path has a lock: %+v, %v", l, err)
	}
}
