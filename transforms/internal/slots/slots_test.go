package slots

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAcquire checks that no more than n holders are in at once, that
// every waiter gets in eventually, and that a cancelled wait gives up.
func TestAcquire(t *testing.T) {
	const n, workers = 2, 12
	var in, most atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := Acquire(context.Background(), "test", n)
			if err != nil {
				t.Error(err)
				return
			}
			cur := in.Add(1)
			for {
				m := most.Load()
				if cur <= m || most.CompareAndSwap(m, cur) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			in.Add(-1)
			release()
			release() // a second release is a no-op
		}()
	}
	wg.Wait()
	if most.Load() > n {
		t.Errorf("%d holders at once, want at most %d", most.Load(), n)
	}

	// Fill the slots, then a waiter must give up with its context.
	var releases []func()
	for range n {
		r, err := Acquire(context.Background(), "test", n)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, "test", n); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("acquire on full slots: %v, want %v", err, context.DeadlineExceeded)
	}
	for _, r := range releases {
		r()
	}
	if r, err := Acquire(context.Background(), "test", n); err != nil {
		t.Errorf("acquire after release: %v", err)
	} else {
		r()
	}
	// Another kind has slots of its own.
	if r, err := Acquire(context.Background(), "other", n); err != nil {
		t.Errorf("acquire of another kind: %v", err)
	} else {
		r()
	}
	// No limit never waits.
	if _, err := Acquire(ctx, "test", 0); err != nil {
		t.Errorf("acquire without a limit: %v", err)
	}
}
