package kmeansbeam

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
)

// The elements of the seeding and of Lloyd's loop name their chunk's
// descriptors, which stay in files: none holds bytes of them.
func TestLoopElementsCarryNoDescriptors(t *testing.T) {
	for _, v := range []any{chunk{}, seedChunk{}} {
		var walk func(reflect.Type, string)
		walk = func(ty reflect.Type, path string) {
			for i := range ty.NumField() {
				f := ty.Field(i)
				switch {
				case f.Type == reflect.TypeOf([]byte(nil)):
					t.Errorf("%s.%s holds bytes", path, f.Name)
				case f.Type.Kind() == reflect.Struct:
					walk(f.Type, path+"."+f.Name)
				}
			}
		}
		walk(reflect.TypeOf(v), reflect.TypeOf(v).Name())
	}
}

// Distributed training writes its chunks under Options.Scratch and leaves
// nothing there once the codebook is made — seeded over the chunks, or
// drawn in parts — and the codebook counts the chunks written: for a
// sample drawn in parts, each part's, its last short.
func TestScratchRemovedAfterJob(t *testing.T) {
	feats := features(600, rand.New(rand.NewPCG(61, 62)))
	base := filepath.Join(t.TempDir(), "scratch")
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, writeParts(t, feats, t.TempDir(), 2))
	// Two parts of about 6,000 descriptors each: two chunks each, where
	// the sample's ⌈n/4,096⌉ is 3.
	whole := Options{K: 5, Sample: 500, MaxIter: 2, Seed: 1, Chunks: 3, Scratch: base}
	parts := Options{K: 5, Sample: 1 << 20, WholeSample: 100, MaxIter: 2, Seed: 1, Scratch: base}
	all := len(localSample(feats, Options{Sample: 1 << 20, Seed: 1}).Prio)
	if chunkCount(1, all) != 3 {
		t.Fatalf("%d descriptors: %d chunks of the whole sample, want 3", all, chunkCount(1, all))
	}
	// Iterations as the graph's stages and in one step (loop.go).
	for _, work := range []int64{-1, 0} {
		whole.OneStepWork, parts.OneStepWork = work, work
		name := fmt.Sprintf(" %d", work)
		beam.ParDo0(s, &chunksFn{Want: 3}, VocabularyOfParts(s.Scope("whole"+name), in, whole))
		beam.ParDo0(s, &chunksFn{Want: 4}, VocabularyOfParts(s.Scope("parts"+name), in, parts))
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(base)
	if err != nil {
		t.Fatalf("no scratch directory was made: %v", err)
	}
	for _, e := range es {
		t.Errorf("left in the scratch directory: %s", e.Name())
	}
}

// An assigning of a chunk that is retried — after its labels were
// written, or after the next iteration's were — reads the same labels and
// writes and sums the same; an iteration's labels go once the one after
// the next has assigned the chunk.
func TestAssignRetrySameResult(t *testing.T) {
	const k, d, n = 7, formats.DescriptorSize, 50
	ctx := context.Background()
	r := rand.New(rand.NewPCG(71, 72))
	dir := t.TempDir()
	desc := make([]byte, n*d)
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	c := chunk{Index: 9, N: n}
	if err := writeDesc(ctx, dir, c.Index, desc); err != nil {
		t.Fatal(err)
	}
	assign := func(iter int) ([]byte, partial) {
		t.Helper()
		st := state{Iter: iter, K: k, Dim: d, Centroids: make([]float32, k*d), Sampled: n}
		for i := range st.Centroids {
			st.Centroids[i] = float32((i*(iter+3) + i/d) % 256)
		}
		head := writeTestState(t, dir, st)
		var sums partial
		f := &assignFn{Iter: iter, Last: 5, Dir: dir, Words: k}
		if err := f.ProcessElement(ctx, c, head, func(chunk) {}, func(_ int, p partial) { sums = merge(sums, p) }); err != nil {
			t.Fatal(err)
		}
		f.FinishBundle(func(chunk) {}, func(_ int, p partial) { sums = merge(sums, p) })
		b, err := os.ReadFile(filepath.Join(dir, labelsName(c.Index, iter)))
		if err != nil {
			t.Fatal(err)
		}
		return b, sums
	}
	for iter := range 3 {
		labels, sums := assign(iter)
		again, sumsAgain := assign(iter)
		if !slices.Equal(labels, again) || !reflect.DeepEqual(sums, sumsAgain) || sums.N != n {
			t.Errorf("iteration %d: a retried assigning wrote other labels or sums (%d descriptors)", iter, sums.N)
		}
	}
	for iter, want := range []bool{false, true, true} {
		if _, err := os.Stat(filepath.Join(dir, labelsName(c.Index, iter))); (err == nil) != want {
			t.Errorf("after iteration 2 the labels of iteration %d are there: %v, want %v", iter, err == nil, want)
		}
	}
}

// A worker process reads an iteration's state once, whatever the bundles
// that assign chunks with it: once read, its file is not read again;
// another iteration, or another training, reads its own.
func TestAssignReadsStateOncePerProcess(t *testing.T) {
	const k, d, n = 5, formats.DescriptorSize, 30
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	dirs := []string{t.TempDir(), t.TempDir()}
	desc := make([]byte, n*d)
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	for _, dir := range dirs {
		if err := writeDesc(ctx, dir, 0, desc); err != nil {
			t.Fatal(err)
		}
	}
	st := state{K: k, Dim: d, Centroids: make([]float32, k*d), Sampled: n}
	for i := range st.Centroids {
		st.Centroids[i] = float32(r.IntN(256))
	}
	for _, tc := range []struct {
		dir   string
		iter  int
		write bool // the state's file is there; else the bundle must not need it
	}{{dirs[0], 0, true}, {dirs[0], 0, false}, {dirs[0], 0, false}, {dirs[0], 1, true}, {dirs[0], 1, false}, {dirs[1], 1, true}} {
		s := st
		s.Iter = tc.iter
		head := s
		head.Centroids = nil
		if tc.write {
			head = writeTestState(t, tc.dir, s)
		}
		f := &assignFn{Iter: tc.iter, Last: tc.iter, Dir: tc.dir, Words: k}
		if tc.iter > 0 {
			if err := writeLabels(ctx, tc.dir, 0, tc.iter-1, make([]int32, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.ProcessElement(ctx, chunk{N: n}, head, func(chunk) {}, func(int, partial) {}); err != nil {
			t.Errorf("a bundle of iteration %d (its state's file there: %v): %v", tc.iter, tc.write, err)
		}
		f.FinishBundle(func(chunk) {}, func(int, partial) {})
		// The next bundle of the iteration finds the file gone.
		if err := os.Remove(filepath.Join(tc.dir, stateName(tc.iter))); tc.write && err != nil {
			t.Fatal(err)
		}
	}
}

// writeTestState writes the centroids of st for its iteration's
// assigning, as writeStateFn does, and returns its head.
func writeTestState(t *testing.T, dir string, st state) state {
	t.Helper()
	head, err := writeTestStateAs(dir, st.Iter, st)
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// writeTestStateAs runs writeStateFn of iteration iter on the parts of st.
func writeTestStateAs(dir string, iter int, st state) (state, error) {
	var parts []state
	st.parts(func(p state) { parts = append(parts, p) })
	side := func(p *state) bool {
		if len(parts) == 0 {
			return false
		}
		*p, parts = parts[0], parts[1:]
		return true
	}
	var head state
	f := &writeStateFn{Iter: iter, Dir: dir}
	err := f.ProcessElement(context.Background(), nil, side, func(h state) { head = h })
	return head, err
}

// The parts of a state go to every word shard they overlap and to no
// other, so that a shard's update reads its rows and only those.
func TestStateByShard(t *testing.T) {
	const d = 4
	for _, tc := range []struct{ k, words int }{{1500, 300}, {1500, 512}, {1024, 1 << 16}, {7, 2}} {
		st := state{K: tc.k, Dim: d, Centroids: make([]float32, tc.k*d)}
		got := map[int][]int{} // shard: rows
		f := &stateByShardFn{Words: tc.words}
		var err error
		st.parts(func(p state) {
			err = errors.Join(err, f.ProcessElement(p, func(sh int, q state) {
				for r := q.Lo; r < q.Lo+len(q.Centroids)/d; r++ {
					got[sh] = append(got[sh], r)
				}
			}))
		})
		if err != nil {
			t.Fatal(err)
		}
		for sh := 0; sh*tc.words < tc.k; sh++ {
			rows := got[sh]
			lo, hi := sh*tc.words, min((sh+1)*tc.words, tc.k)
			if len(rows) == 0 || rows[0] > lo || rows[len(rows)-1] < hi-1 || rows[0] <= lo-stateRows || rows[len(rows)-1] >= hi+stateRows-1 {
				t.Errorf("K=%d, shards of %d: shard %d gets rows %d to %d of some, want its [%d, %d) and at most the parts that overlap it", tc.k, tc.words, sh, rows[0], rows[len(rows)-1], lo, hi)
			}
			delete(got, sh)
		}
		if len(got) != 0 {
			t.Errorf("K=%d, shards of %d: parts keyed by shards past the words: %v", tc.k, tc.words, slices.Collect(maps.Keys(got)))
		}
	}
}

// An iteration's state leaves its centroids in the scratch directory, as
// its head says, and removes the previous iteration's, whose assigning is
// over; a converged state writes none.
func TestWriteStateKeepsTwoIterations(t *testing.T) {
	const k, d = 600, 3
	dir := t.TempDir()
	st := state{K: k, Dim: d, Centroids: make([]float32, k*d)}
	for i := range st.Centroids {
		st.Centroids[i] = float32(i) / 7
	}
	exists := func(iter int) bool {
		_, err := os.Stat(filepath.Join(dir, stateName(iter)))
		return err == nil
	}
	for iter := range 3 {
		st.Iter = iter
		head := writeTestState(t, dir, st)
		if head.Iter != iter || head.K != k || head.Centroids != nil {
			t.Errorf("iteration %d: head of iteration %d, %d words, %d values", iter, head.Iter, head.K, len(head.Centroids))
		}
		got, err := readCentroids(context.Background(), dir, iter, k*d)
		if err != nil || !slices.Equal(got, st.Centroids) {
			t.Errorf("iteration %d: the centroids read back differ (%v)", iter, err)
		}
		if iter > 0 && exists(iter-1) {
			t.Errorf("iteration %d left the centroids of iteration %d", iter, iter-1)
		}
	}
	st.Converged = true
	head, err := writeTestStateAs(dir, 3, st)
	if err != nil {
		t.Fatal(err)
	}
	if !head.Converged || exists(3) || exists(2) {
		t.Errorf("a converged state: head converged %v, centroids of iterations 2, 3 left: %v, %v", head.Converged, exists(2), exists(3))
	}
}
