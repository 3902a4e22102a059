package kmeansbeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/kmeans"
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
	feats := features(1200, rand.New(rand.NewPCG(61, 62)))
	base := filepath.Join(t.TempDir(), "scratch")
	p, s := beam.NewPipelineWithRoot()
	in := beam.CreateList(s, writeParts(t, feats, t.TempDir(), 2))
	// Two parts of about 12,000 descriptors each: two chunks each, where
	// the sample's ⌈n/8,192⌉ is 3.
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
		whole.Output, parts.Output = t.TempDir(), t.TempDir()
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
		recs := map[int][]sumsFile{}
		emit := func(shard int, rec sumsFile) { recs[shard] = append(recs[shard], rec) }
		f := &assignFn{Iter: iter, Last: 5, Dir: dir, Words: 3, Rows: 2}
		if err := f.ProcessElement(ctx, c, head, func(chunk) {}, emit); err != nil {
			t.Fatal(err)
		}
		if err := f.FinishBundle(ctx, func(chunk) {}, emit); err != nil {
			t.Fatal(err)
		}
		sums := filesSums(t, dir, iter, 3, k, recs)
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
		f := &assignFn{Iter: tc.iter, Last: tc.iter, Dir: tc.dir, Words: k, Rows: k}
		if tc.iter > 0 {
			if err := writeLabels(ctx, tc.dir, 0, tc.iter-1, make([]int32, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.ProcessElement(ctx, chunk{N: n}, head, func(chunk) {}, func(int, sumsFile) {}); err != nil {
			t.Errorf("a bundle of iteration %d (its state's file there: %v): %v", tc.iter, tc.write, err)
		}
		if err := f.FinishBundle(ctx, func(chunk) {}, func(int, sumsFile) {}); err != nil {
			t.Fatal(err)
		}
		// The next bundle of the iteration finds the file gone.
		if err := os.RemoveAll(filepath.Join(tc.dir, stateDir(tc.iter))); tc.write && err != nil {
			t.Fatal(err)
		}
	}
}

// writeTestState writes the centroids of st for its iteration's
// assigning, as the update does, and returns the head writeStateFn emits.
func writeTestState(t *testing.T, dir string, st state) state {
	t.Helper()
	head, err := writeTestStateAs(dir, st.Iter, st)
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// writeTestStateAs writes the centroids of st to files of two word shards
// (emitInitial) and runs writeStateFn of iteration iter on their records.
func writeTestStateAs(dir string, iter int, st state) (state, error) {
	records, err := writeTestStateFiles(dir, st, (st.K+1)/2)
	if err != nil {
		return state{}, err
	}
	var head state
	f := &writeStateFn{Iter: iter, Dir: dir}
	err = f.ProcessElement(context.Background(), nil, iterOf(records), func(h state) { head = h })
	return head, err
}

// writeTestStateFiles writes the centroids of st to dir as the initial
// state of a distributed training with word shards of words words
// (emitInitial) and returns the records of the files.
func writeTestStateFiles(dir string, st state, words int) ([]state, error) {
	var records []state
	err := emitInitial(context.Background(), dir, words, st, func(r state) { records = append(records, r) })
	return records, err
}

// emitInitial writes word shard after word shard from one buffer: the
// bytes it allocates stay within a few shard files rather than one a
// shard (at 10⁶ words, 16 shards of 32 MB).
func TestEmitInitialReusesItsBuffer(t *testing.T) {
	const d, words, shards = formats.DescriptorSize, 256, 32
	st := state{K: words * shards, Dim: d, Centroids: make([]float32, words*shards*d)}
	for i := range st.Centroids {
		st.Centroids[i] = float32(i % 1000)
	}
	dir := t.TempDir()
	records := make([]state, 0, shards)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := emitInitial(context.Background(), dir, words, st, func(r state) { records = append(records, r) })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != shards {
		t.Fatalf("emitInitial emitted %d records of %d shards", len(records), shards)
	}
	file := words * d * 4
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(shards/4*file) {
		t.Errorf("emitInitial allocated %d bytes for %d shards of %d-byte files, more than %d files' worth", got, shards, file, shards/4)
	}
	head, ok, err := stateOfFiles(iterOf(records))
	if err != nil || !ok {
		t.Fatalf("the records of the files: %v (a state: %v)", err, ok)
	}
	got, err := readStateCentroids(context.Background(), dir, head)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, st.Centroids) {
		t.Error("the shards' files do not hold the state's centroids")
	}
}

// An iteration's state finds its centroids in the scratch directory, in
// the files its head names, and removes the previous iteration's centroids
// and sums (a retried bundle's orphans too), whose assigning and update
// are over; a converged state keeps its own.
func TestWriteStateKeepsTwoIterations(t *testing.T) {
	const k, d = 600, 3
	dir := t.TempDir()
	st := state{K: k, Dim: d, Centroids: make([]float32, k*d)}
	for i := range st.Centroids {
		st.Centroids[i] = float32(i) / 7
	}
	exists := func(iter int) bool {
		_, err := os.Stat(filepath.Join(dir, stateDir(iter)))
		return err == nil
	}
	sums := func(iter int) bool {
		_, err := os.Stat(filepath.Join(dir, sumsDir(iter)))
		return err == nil
	}
	for iter := range 3 {
		for _, name := range []string{bundleSumsName(0), bundleSumsName(1), mergedName(0)} {
			if err := writeSumsFile(context.Background(), dir, iter, name, []byte{1}); err != nil {
				t.Fatal(err)
			}
		}
		st.Iter = iter
		head := writeTestState(t, dir, st)
		if head.Iter != iter || head.K != k || head.Centroids != nil || len(head.Files) != 2 {
			t.Errorf("iteration %d: head of iteration %d, %d words, %d values, %d files", iter, head.Iter, head.K, len(head.Centroids), len(head.Files))
		}
		got, err := readStateCentroids(context.Background(), dir, head)
		if err != nil || !slices.Equal(got, st.Centroids) {
			t.Errorf("iteration %d: the centroids read back differ (%v)", iter, err)
		}
		if iter > 0 && (exists(iter-1) || sums(iter-1)) {
			t.Errorf("iteration %d left the centroids (%v) or sums (%v) of iteration %d", iter, exists(iter-1), sums(iter-1), iter-1)
		}
		if !sums(iter) {
			t.Errorf("iteration %d removed its own sums", iter)
		}
	}
	st.Converged = true
	head, err := writeTestStateAs(dir, 3, st)
	if err != nil {
		t.Fatal(err)
	}
	if !head.Converged || exists(3) || !exists(2) || sums(2) {
		t.Errorf("a converged state of iteration 2: head converged %v, centroids of iterations 2, 3 left: %v, %v, sums of 2 left: %v", head.Converged, exists(2), exists(3), sums(2))
	}
}

// filesSums reads the files of sums of iteration iter that recs name, by
// word shard of words words of k, and returns their total, words
// ascending, with the totals the records carry.
func filesSums(t *testing.T, dir string, iter, words, k int, recs map[int][]sumsFile) partial {
	t.Helper()
	const d = formats.DescriptorSize
	var total partial
	for shard, rs := range recs {
		lo, hi, err := shardRange(iter, shard, words, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range rs {
			p := partial{Iter: iter, Dim: d, N: rec.N, Changed: rec.Changed, SSE: rec.SSE}
			err := readSums(context.Background(), dir, rec.Name, iter, shard, d, rec.Rows, lo, hi, func(w int, n int64, sum []int64) {
				p.Words, p.Count, p.Sum = append(p.Words, int32(w)), append(p.Count, n), append(p.Sum, sum...)
			})
			if err != nil {
				t.Fatal(err)
			}
			total = merge(total, p)
		}
	}
	return total
}

// The sums an assigning writes by word shard, in files of at most a few
// rows, merged shard by shard (mergeSumsFn), are the sums of every
// descriptor at once: the merged files hold them, the counts and totals
// the plan reads agree, whatever the shards and the bound on a file.
func TestShardedSumsEqualUnsharded(t *testing.T) {
	const k, d, n, iter = 50, formats.DescriptorSize, 900, 4
	ctx := context.Background()
	r := rand.New(rand.NewPCG(101, 102))
	desc, labels, dist := labelled(r, n, k-3) // the last words stay empty
	whole := bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, k)}
	for i := range n {
		whole.add(desc[i*d:(i+1)*d], labels[i], dist[i])
	}
	whole.moved = 17
	want := whole.flush(iter)
	for _, tc := range []struct{ words, rows, bundles int }{{k, 0, 1}, {7, 3, 4}, {1, 1, 2}, {64, 1000, 3}, {16, 5, 1}} {
		name := fmt.Sprintf("words %d, rows %d, %d bundles", tc.words, tc.rows, tc.bundles)
		dir := t.TempDir()
		recs := map[int][]sumsFile{}
		emit := func(shard int, rec sumsFile) { recs[shard] = append(recs[shard], rec) }
		for b := range tc.bundles {
			f := &assignFn{Iter: iter, Dir: dir, Words: tc.words, Rows: tc.rows}
			f.sums = bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, k), limit: tc.rows}
			f.sums.spill = func() error { return f.writeSums(ctx, emit) }
			for i := b * n / tc.bundles; i < (b+1)*n/tc.bundles; i++ {
				if err := f.sums.add(desc[i*d:(i+1)*d], labels[i], dist[i]); err != nil {
					t.Fatal(err)
				}
			}
			if b == 0 {
				f.sums.moved = 17
			}
			if err := f.writeSums(ctx, emit); err != nil {
				t.Fatal(err)
			}
		}
		merged := map[int][]sumsFile{}
		count := make([]int64, k)
		var totals [3]int64
		for shard := 0; shard*tc.words < k; shard++ {
			files := append([]sumsFile{{}}, recs[shard]...)
			err := (&mergeSumsFn{Iter: iter, K: k, Words: tc.words, Dir: dir}).ProcessElement(ctx, shard, iterOf(files), func(c shardCounts) {
				if c.Iter != iter || c.Lo != shard*tc.words || c.Lo+len(c.Count) != min(k, (shard+1)*tc.words) {
					t.Errorf("%s: counts of iteration %d, words [%d, %d) for word shard %d", name, c.Iter, c.Lo, c.Lo+len(c.Count), shard)
				}
				copy(count[c.Lo:], c.Count)
				totals[0], totals[1], totals[2] = totals[0]+c.N, totals[1]+c.Changed, totals[2]+c.SSE
			})
			if err != nil {
				t.Fatal(err)
			}
			merged[shard] = []sumsFile{{Iter: iter, Name: mergedName(shard), Rows: -1}}
		}
		got := filesSums(t, dir, iter, tc.words, k, merged)
		got.N, got.Changed, got.SSE = totals[0], totals[1], totals[2]
		dense := make([]int64, k)
		for j, w := range want.Words {
			dense[w] = want.Count[j]
		}
		if !reflect.DeepEqual(got, want) || !slices.Equal(count, dense) {
			t.Errorf("%s: merged shards hold %d words, N=%d Changed=%d SSE=%d (equal: %v, counts equal: %v), want %d words N=%d Changed=%d SSE=%d",
				name, len(got.Words), got.N, got.Changed, got.SSE, reflect.DeepEqual(got, want), slices.Equal(count, dense), len(want.Words), want.N, want.Changed, want.SSE)
		}
		if tc.rows > 0 {
			for shard, rs := range recs {
				for _, rec := range rs {
					if rec.Rows > tc.rows {
						t.Errorf("%s: word shard %d: a file of %d rows", name, shard, rec.Rows)
					}
				}
			}
		}
	}
}

// iterOf yields vs as a grouped input does.
func iterOf[T any](vs []T) func(*T) bool {
	i := 0
	return func(v *T) bool {
		if i == len(vs) {
			return false
		}
		*v, i = vs[i], i+1
		return true
	}
}

// A merge reads only the files its records name: the files of a retried
// bundle that no record names, of the same shard and iteration, change
// nothing; a named file that is missing, or a shard not marked once, is
// an error.
func TestMergeIgnoresUnnamedFiles(t *testing.T) {
	const k, d, words, iter = 20, formats.DescriptorSize, 8, 1
	ctx := context.Background()
	r := rand.New(rand.NewPCG(111, 112))
	dir := t.TempDir()
	// write writes the sums of m random descriptors of word shard 1 as one
	// bundle and returns its records.
	write := func(m int) []sumsFile {
		var recs []sumsFile
		f := &assignFn{Iter: iter, Dir: dir, Words: words}
		f.sums = bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, k)}
		desc := make([]byte, d)
		for range m {
			for i := range desc {
				desc[i] = byte(r.IntN(256))
			}
			f.sums.add(desc, int32(words+r.IntN(words)), 1)
		}
		if err := f.writeSums(ctx, func(_ int, rec sumsFile) { recs = append(recs, rec) }); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	merge := func(recs []sumsFile) (shardCounts, []byte, error) {
		var out shardCounts
		err := (&mergeSumsFn{Iter: iter, K: k, Words: words, Dir: dir}).ProcessElement(ctx, 1, iterOf(recs), func(c shardCounts) { out = c })
		b, _ := os.ReadFile(filepath.Join(dir, sumsDir(iter), mergedName(1)))
		return out, b, err
	}
	named := append(write(30), sumsFile{})
	wantCounts, wantFile, err := merge(named)
	if err != nil {
		t.Fatal(err)
	}
	orphans := write(25) // a failed attempt's files, named by no record
	if len(orphans) != 1 {
		t.Fatalf("%d files for one shard", len(orphans))
	}
	gotCounts, gotFile, err := merge(named)
	if err != nil || !reflect.DeepEqual(gotCounts, wantCounts) || !slices.Equal(gotFile, wantFile) || gotCounts.N != 30 {
		t.Errorf("with a retried bundle's files beside them the merge gave other sums (err %v, N=%d)", err, gotCounts.N)
	}
	if err := os.Remove(filepath.Join(dir, sumsDir(iter), named[0].Name)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := merge(named); err == nil {
		t.Error("a merge whose named file is missing succeeded")
	}
	if _, _, err := merge(orphans); err == nil || !strings.Contains(err.Error(), "marked 0 times") {
		t.Errorf("a merge of an unmarked shard: %v, want an error", err)
	}
}

// No element an assigning emits carries sums, or anything else that grows
// with the words or the descriptors: its outputs are fixed-size records
// (chunk, sumsFile), and the sums are in files.
func TestAssignElementsCarryNoSums(t *testing.T) {
	fixed := func(ty reflect.Type) bool {
		var walk func(reflect.Type) bool
		walk = func(ty reflect.Type) bool {
			switch ty.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Array:
				return false
			case reflect.Struct:
				for i := range ty.NumField() {
					if !walk(ty.Field(i).Type) {
						return false
					}
				}
			}
			return true
		}
		return walk(ty)
	}
	for _, m := range []string{"ProcessElement", "FinishBundle"} {
		fn, ok := reflect.TypeOf(&assignFn{}).MethodByName(m)
		if !ok {
			t.Fatalf("assignFn has no %s", m)
		}
		emitters := 0
		for i := range fn.Type.NumIn() {
			in := fn.Type.In(i)
			if in.Kind() != reflect.Func {
				continue
			}
			emitters++
			for j := range in.NumIn() {
				if el := in.In(j); !fixed(el) {
					t.Errorf("assignFn.%s emits %s, which can grow with the sums", m, el)
				}
			}
		}
		if emitters != 2 {
			t.Errorf("assignFn.%s has %d emitters, want 2", m, emitters)
		}
	}
}

// The merge of an iteration's sums runs once its assigning is over, and
// lets go of the state and index this process kept for it (at 10⁶ words
// 1.6 GB, beside the update and the next state), but not of a later
// iteration's or another training's state.
func TestMergeLetsGoOfTheAssigning(t *testing.T) {
	const k, d = 9, formats.DescriptorSize
	ctx := context.Background()
	dir, other := t.TempDir(), t.TempDir()
	st := state{Iter: 2, K: k, Dim: d, Centroids: make([]float32, k*d)}
	for i := range st.Centroids {
		st.Centroids[i] = float32(i % 251)
	}
	load := func(dir string, iter int) {
		s := st
		s.Iter = iter
		head := writeTestState(t, dir, s)
		got, err := cachedState(ctx, dir, head)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cachedAssigner(dir, &got, kmeans.AssignOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	held := func() (bool, bool) {
		stateSlot.Lock()
		defer stateSlot.Unlock()
		assignerSlot.Lock()
		defer assignerSlot.Unlock()
		return stateSlot.st != nil, assignerSlot.v != nil
	}
	merge := func(iter int) {
		f := &mergeSumsFn{Iter: iter, K: k, Words: k, Dir: dir}
		if err := f.ProcessElement(ctx, 0, iterOf([]sumsFile{{}}), func(shardCounts) {}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		dir         string
		iter, merge int
		kept        bool
	}{{dir, 2, 2, false}, {dir, 1, 2, false}, {dir, 3, 2, true}, {other, 2, 2, true}} {
		load(tc.dir, tc.iter)
		merge(tc.merge)
		state, index := held()
		if want := tc.kept; state != want || (tc.dir == dir && index != want) {
			t.Errorf("state of iteration %d (own training %v) after the merge of iteration %d: state kept %v, index kept %v, want %v",
				tc.iter, tc.dir == dir, tc.merge, state, index, want)
		}
	}
}

// TestDecodeSumsRefusesCorruptFiles: a file of sums whose words would go
// back, repeat or leave the shard by wrapping, or whose header claims more
// rows than the shard has words, is an error naming the row, not rows
// added twice or a file read as empty.
func TestDecodeSumsRefusesCorruptFiles(t *testing.T) {
	const iter, shard, dim, lo, hi = 2, 0, 2, 0, 16
	head := func(rows uint64) []byte {
		var b []byte
		for _, v := range []uint64{iter, shard, dim, rows} {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	row := func(b []byte, step, n uint64, sum ...uint64) []byte {
		for _, v := range append([]uint64{step, n}, sum...) {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	good := row(row(head(2), 4, 1, 3, 4), 4, 2, 5, 6) // words 3 and 7
	var words []int
	if err := decodeSums(good, iter, shard, dim, -1, lo, hi, func(w int, _ int64, _ []int64) { words = append(words, w) }); err != nil || !slices.Equal(words, []int{3, 7}) {
		t.Fatalf("a good file: words %v, %v", words, err)
	}
	for name, b := range map[string][]byte{
		"a step that wraps back to word 3": row(row(row(head(3), 4, 1, 3, 4), 4, 2, 5, 6), 1<<64-4, 1, 1, 1),
		"a step past the shard":            row(head(1), 17, 1, 1, 1),
		"more rows than words":             head(1 << 63),
		"a sum past int64":                 row(head(1), 1, 1, 1<<63, 1),
		"bytes after the rows":             append(slices.Clone(good), 0),
	} {
		if err := decodeSums(b, iter, shard, dim, -1, lo, hi, func(int, int64, []int64) {}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Lloyd's loop carries its states as records of files, never as
// centroids: the initial state's shard files, each word shard's update and
// the split rows emit one name each, whatever K, and the state they make
// is the one-step update's (updateAll), splits across shards included.
func TestLoopStateTravelsAsFileNames(t *testing.T) {
	const k, words, d = 3*stateRows + 5, 600, formats.DescriptorSize
	ctx := context.Background()
	dir := t.TempDir()
	st := state{K: k, Dim: d, Centroids: make([]float32, k*d)}
	for i := range st.Centroids {
		st.Centroids[i] = float32(i%97) / 3
	}
	// A third of the words empty, the others 1 to 5 descriptors each.
	var sums partial
	sums.Dim = d
	for w := range k {
		if w%3 == 0 {
			continue
		}
		n := int64(1 + w%5)
		sums.Words, sums.Count = append(sums.Words, int32(w)), append(sums.Count, n)
		for j := range d {
			sums.Sum = append(sums.Sum, n*int64((w+j)%200))
		}
		sums.N += n
	}
	st.Sampled = int(sums.N)
	checkRecords := func(what string, recs []state) {
		t.Helper()
		for _, r := range recs {
			if len(r.Centroids) != 0 || len(r.Files) != 1 {
				t.Errorf("%s emitted a record of %d centroid values and %d files, want a file's name alone", what, len(r.Centroids), len(r.Files))
			}
		}
	}
	records, err := writeTestStateFiles(dir, st, words)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords("emitInitial", records)
	var head state
	if err := (&writeStateFn{Iter: 0, Dir: dir}).ProcessElement(ctx, nil, iterOf(records), func(h state) { head = h }); err != nil {
		t.Fatal(err)
	}
	var counts []shardCounts
	for sh := 0; sh*words < k; sh++ {
		lo, hi := sh*words, min((sh+1)*words, k)
		var rows []int
		for j, w := range sums.Words {
			if int(w) >= lo && int(w) < hi {
				rows = append(rows, j)
			}
		}
		b := appendSums(nil, 0, sh, d, len(rows), func(i int) (int32, int64, []int64) {
			j := rows[i]
			return sums.Words[j], sums.Count[j], sums.Sum[j*d : (j+1)*d]
		})
		rec := sumsFile{Name: bundleSumsName(sh), Rows: len(rows)}
		if sh == 0 {
			rec.N, rec.Changed, rec.SSE = sums.N, sums.N, 1000*sseScale
		}
		if err := writeSumsFile(ctx, dir, 0, rec.Name, b); err != nil {
			t.Fatal(err)
		}
		f := &mergeSumsFn{Iter: 0, K: k, Words: words, Dir: dir}
		if err := f.ProcessElement(ctx, sh, iterOf([]sumsFile{{}, rec}), func(c shardCounts) { counts = append(counts, c) }); err != nil {
			t.Fatal(err)
		}
	}
	pl, err := (&planFn{Iter: 0, MaxIter: 5}).plan(ctx, head, iterOf(counts))
	if err != nil {
		t.Fatal(err)
	}
	if !pl.Update || len(pl.Splits) == 0 {
		t.Fatalf("the plan updates %v with %d splits, want an update with splits", pl.Update, len(pl.Splits))
	}
	var next []state
	var split []splitRow
	for sh := 0; sh*words < k; sh++ {
		f := &shardFn{Iter: 0, Words: words, Dir: dir}
		err := f.ProcessElement(ctx, sh, iterOf([]state{head}), iterOf([]plan{pl}), func(r state) { next = append(next, r) }, func(r splitRow) { split = append(split, r) })
		if err != nil {
			t.Fatal(err)
		}
	}
	checkRecords("shardFn", next)
	var splitRecords []state
	if err := (&splitRowsFn{Iter: 0, Dir: dir}).ProcessElement(ctx, nil, iterOf([]plan{pl}), iterOf(split), func(r state) { splitRecords = append(splitRecords, r) }); err != nil {
		t.Fatal(err)
	}
	checkRecords("splitRowsFn", splitRecords)
	if len(splitRecords) != 1 {
		t.Fatalf("splitRowsFn emitted %d records, want 1", len(splitRecords))
	}
	nextHead, ok, err := stateOfFiles(iterOf(append(next, splitRecords...)))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	got, err := readStateCentroids(ctx, dir, nextHead)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(st.Centroids)
	updateAll(want, sums, pl.Splits)
	if nextHead.Iter != 1 || !slices.Equal(got, want) {
		t.Errorf("the next state (iteration %d) read from its files differs from the one-step update", nextHead.Iter)
	}
}

// A file of centroids that is truncated, names rows past the state or
// has bytes after its runs is an error, not rows read as zeros.
func TestDecodeCentroidsRefusesCorruptFiles(t *testing.T) {
	const iter, dim, k = 1, 2, 8
	good := appendCentroids(nil, iter, dim, []int{2, 6}, [][]float32{{1, 2, 3, 4}, {5, 6}})
	dst := make([]float32, k*dim)
	if n, err := decodeCentroids(good, iter, dim, k, 0, k, dst); err != nil || n != 3 || !slices.Equal(dst[4:14], []float32{1, 2, 3, 4, 0, 0, 0, 0, 5, 6}) {
		t.Fatalf("a good file: %d rows, %v, %v", n, dst, err)
	}
	if n, err := decodeCentroids(good, iter, dim, k, 3, 7, dst[:4*dim]); err != nil || n != 2 {
		t.Fatalf("rows [3, 7) of a good file: %d rows, %v", n, err)
	}
	for name, b := range map[string][]byte{
		"truncated":            good[:len(good)-1],
		"bytes after the runs": append(slices.Clone(good), 0),
		"rows past the state":  appendCentroids(nil, iter, dim, []int{7}, [][]float32{{1, 2, 3, 4}}),
		"another iteration":    appendCentroids(nil, iter+1, dim, []int{0}, [][]float32{{1, 2}}),
	} {
		if _, err := decodeCentroids(b, iter, dim, k, 0, k, make([]float32, k*dim)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
