// Package slots bounds how many units of one kind of work a process runs at
// once. A runner decides how many bundles run side by side in one worker
// process — Prism runs every element of a stage at once — so a stage whose
// unit holds much memory (a training group's bags, a part's features)
// takes a slot before it loads and gives it back when done: the process
// then holds at most n units' memory, whatever the corpus.
package slots

import (
	"context"
	"sync"
)

// process holds the semaphores of this process, one per kind and limit:
// the limit travels with the work (a DoFn's field), and the DoFns of one
// job share the process, so the semaphore must be the process's.
var process struct {
	sync.Mutex
	m map[key]chan struct{}
}

type key struct {
	kind string
	n    int
}

// Acquire waits for one of the n slots of kind (n ≤ 0: no limit) or for
// ctx. The caller calls release when the unit's memory is gone, also after
// an error; a second call of release does nothing.
func Acquire(ctx context.Context, kind string, n int) (release func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	process.Lock()
	if process.m == nil {
		process.m = map[key]chan struct{}{}
	}
	k := key{kind, n}
	s, ok := process.m[k]
	if !ok {
		s = make(chan struct{}, n)
		process.m[k] = s
	}
	process.Unlock()
	select {
	case s <- struct{}{}:
		var once sync.Once
		return func() { once.Do(func() { <-s }) }, nil
	case <-ctx.Done():
		return func() {}, ctx.Err()
	}
}
