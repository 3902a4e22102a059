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

// shortLockWait shortens the wait for another writer's lock for a test.
func shortLockWait(t *testing.T, d time.Duration) {
	old := lockWait
	lockWait = d
	t.Cleanup(func() { lockWait = old })
}

// TestStaleLock: a lock file that stops writers — left by a dead writer
// on this host, older than StaleLockAge, empty or holding no owner record
// past LockWait, or held past LockWait by a writer this host cannot prove
// dead — stops WriteIf and AwaitLock with what is known of it and the
// command that clears it, and is never taken for a change of the object
// (ErrPrecondition): that object is unchanged.
func TestStaleLock(t *testing.T) {
	shortLockWait(t, 200*time.Millisecond)
	ctx := context.Background()
	host, _ := os.Hostname()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	ago := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	for _, tc := range []struct {
		name   string
		record string
		age    time.Duration
		want   error
		says   string // what the error says of the lock
	}{
		{"dead process", fmt.Sprintf(`{"host":%q,"pid":%d,"time":%q}`, host, deadPID(t), now), 0, ErrStaleLock, "is not running on this host"},
		{"old", fmt.Sprintf(`{"host":"elsewhere","pid":1,"time":%q}`, time.Now().Add(-time.Hour).Format(time.RFC3339Nano)), 0, ErrStaleLock, "ago"},
		{"old, no record", "", time.Hour, ErrStaleLock, "ago"},
		{"empty", "", 0, ErrStaleLock, "the file is empty), is stale (empty for"},
		{"garbage", "\x00\x17 half a rec", 0, ErrStaleLock, "(the file is not an owner record), is stale (not an owner record for"},
		{"no owner", `{"time":"2026-01-01T00:00:00Z"}`, 0, ErrStaleLock, "not an owner record"},
		{"live process, held long", fmt.Sprintf(`{"host":%q,"pid":%d,"time":%q}`, host, os.Getpid(), ago), 0, ErrLocked, "where a write holds it for less than a second (process %d runs on this host: a hung writer, or another process that took its id)"},
		{"another host", fmt.Sprintf(`{"host":"elsewhere","pid":1,"time":%q}`, now), 0, ErrLocked, "process 1 on elsewhere since"},
		{"another host, held long", fmt.Sprintf(`{"host":"elsewhere","pid":1,"time":%q}`, ago), 0, ErrLocked, "where a write holds it for less than a second (this host cannot tell whether process 1 still runs on elsewhere)"},
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
			l, err := lockOf(p)
			if err != nil || l == nil || l.Path != lock {
				t.Fatalf("LockOf: %+v, %v", l, err)
			}
			for what, err := range map[string]error{"WriteIf": WriteIf(ctx, p, []byte("x"), 0), "AwaitLock": AwaitLock(ctx, p)} {
				says := strings.ReplaceAll(tc.says, "%d", fmt.Sprint(os.Getpid()))
				if !errors.Is(err, tc.want) || errors.Is(err, ErrPrecondition) || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "remove it with: rm "+lock) {
					t.Errorf("%s past the lock: %v; want %v saying %q and naming rm %s", what, err, tc.want, says, lock)
				}
			}
			if _, err := os.Stat(p); err == nil {
				t.Error("WriteIf wrote past a lock")
			}
		})
	}
}

// TestLockReleasedWhileWaiting: a writer waits for the lock of a writer at
// work, and writes once it is released.
func TestLockReleasedWhileWaiting(t *testing.T) {
	shortLockWait(t, 5*time.Second)
	ctx := context.Background()
	for _, record := range []string{"", fmt.Sprintf(`{"host":"elsewhere","pid":1,"time":%q}`, time.Now().UTC().Format(time.RFC3339Nano))} {
		p := filepath.Join(t.TempDir(), "published.json")
		lock := p + ".lock"
		if err := os.WriteFile(lock, []byte(record), 0o644); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(100*time.Millisecond, func() { os.Remove(lock) })
		if err := AwaitLock(ctx, p); err != nil {
			t.Fatalf("lock %q: AwaitLock: %v", record, err)
		}
		if err := os.WriteFile(lock, []byte(record), 0o644); err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(100*time.Millisecond, func() { os.Remove(lock) })
		if err := WriteIf(ctx, p, []byte("x"), 0); err != nil {
			t.Fatalf("lock %q: WriteIf: %v", record, err)
		}
		if data, err := os.ReadFile(p); err != nil || string(data) != "x" {
			t.Fatalf("lock %q: wrote %q, %v", record, data, err)
		}
	}
}

// TestLockAndChange: an object that did change is ErrPrecondition whatever
// its lock, which the error names besides.
func TestLockAndChange(t *testing.T) {
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "published.json")
	if err := WriteIf(ctx, p, []byte("first"), 0); err != nil {
		t.Fatal(err)
	}
	lock := p + ".lock"
	if err := os.WriteFile(lock, fmt.Appendf(nil, `{"host":"h","pid":1,"time":%q}`, time.Now().Add(-time.Hour).Format(time.RFC3339)), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteIf(ctx, p, []byte("second"), 0)
	if !errors.Is(err, ErrPrecondition) || !errors.Is(err, ErrStaleLock) || !strings.Contains(err.Error(), "rm "+lock) {
		t.Fatalf("WriteIf from a stale generation past a stale lock: %v, want both", err)
	}
}

// TestLockRecordsItsOwner: while WriteIf holds the lock, the lock says
// which process holds it and since when; afterwards there is none.
func TestLockRecordsItsOwner(t *testing.T) {
	p := filepath.Join(t.TempDir(), "published.json")
	release, err := takeLock(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lockOf(p)
	host, _ := os.Hostname()
	if err != nil || l == nil || l.PID != os.Getpid() || l.Host != host || time.Since(l.Time) > time.Minute || l.Stale {
		t.Fatalf("lock while held: %+v, %v", l, err)
	}
	release()
	if l, err := lockOf(p); l != nil || err != nil {
		t.Fatalf("lock after release: %+v, %v", l, err)
	}
	if l, err := lockOf("gs://bucket/published.json"); l != nil || err != nil {
		t.Fatalf("a gs:// path has a lock: %+v, %v", l, err)
	}
}

// lockOf returns the lock of the conditional writes of path, nil when
// none is held. Only local paths have locks: Cloud Storage checks
// generations itself.
func lockOf(path string) (*Lock, error) {
	if IsRemote(path) {
		return nil, nil
	}
	return readLock(path+".lock", time.Now())
}
