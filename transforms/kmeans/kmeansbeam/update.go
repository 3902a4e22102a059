package kmeansbeam

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/kmeans"
)

// The update of an iteration, sharded by word range: each shard's sums
// merged from the assigning's files on its own worker, a plan from the
// counts on one worker, each shard's means on its own worker, and the rows
// the splits of empty clusters touch applied on one worker.

// shardMarkFn keys the record with no file (sumsFile) that every word
// shard receives, so that every shard is merged and has a file of merged
// sums for its update, even one no descriptor fell in.
func shardMarkFn(shard int) (int, sumsFile) { return shard, sumsFile{} }

// shardCounts is what the plan of an iteration's update needs of the
// merged sums of a word shard: the counts of its words from Lo on, and
// the totals of the records the shard received (see sumsFile).
type shardCounts struct {
	Iter            int
	Lo              int
	Count           []int64
	N, Changed, SSE int64
}

// updateShards is the most word shards a worker process merges
// (mergeSumsFn) or updates (shardFn) at once: a runner may run every shard
// side by side (Prism does), and at 10⁶ words 16 shards' sums and
// centroids would take 2.4 GB where two keep both cores busy.
const updateShards = 2

// mergeSumsFn merges the files of sums of an iteration's word shard that
// its records name (never another: a failed bundle's files are named by
// no record), writes the shard's merged sums (mergedName) for its update
// (shardFn), and emits its counts and totals. It holds the shard's sums
// as exact integers, 1,032 bytes a word (68 MB for the default 65,536
// words), and one file at a time. The iteration's assigning is over when
// it runs, so it lets go of the assigning's state and index
// (assigningOver).
type mergeSumsFn struct {
	Iter, K, Words int
	Dir            string
}

func (f *mergeSumsFn) ProcessElement(ctx context.Context, shard int, files func(*sumsFile) bool, emit func(shardCounts)) error {
	const d = formats.DescriptorSize
	assigningOver(f.Dir, f.Iter)
	lo, hi, release, err := shardSlot(ctx, f.Iter, shard, f.Words, f.K)
	defer release()
	if err != nil {
		return err
	}
	out := shardCounts{Iter: f.Iter, Lo: lo, Count: make([]int64, hi-lo)}
	var sum []int64
	var rec sumsFile
	marks := 0
	for files(&rec) {
		if rec.Name == "" {
			marks++
			continue
		}
		if rec.Iter != f.Iter {
			return fmt.Errorf("vocabulary: iteration %d received the sums of iteration %d", f.Iter, rec.Iter)
		}
		out.N, out.Changed, out.SSE = out.N+rec.N, out.Changed+rec.Changed, out.SSE+rec.SSE
		if sum == nil {
			sum = make([]int64, (hi-lo)*d)
		}
		err := readSums(ctx, f.Dir, rec.Name, f.Iter, shard, d, rec.Rows, lo, hi, func(w int, n int64, s []int64) {
			out.Count[w-lo] += n
			row := sum[(w-lo)*d : (w-lo+1)*d]
			for j, v := range s {
				row[j] += v
			}
		})
		if err != nil {
			return err
		}
	}
	if marks != 1 {
		return fmt.Errorf("vocabulary: iteration %d: word shard %d marked %d times, want once", f.Iter, shard, marks)
	}
	var rows []int32
	for w, n := range out.Count {
		if n > 0 {
			rows = append(rows, int32(w))
		}
	}
	b := appendSums(nil, f.Iter, shard, d, len(rows), func(i int) (int32, int64, []int64) {
		w := rows[i]
		return int32(lo) + w, out.Count[w], sum[int(w)*d : int(w+1)*d]
	})
	if err := writeSumsFile(ctx, f.Dir, f.Iter, mergedName(shard), b); err != nil {
		return err
	}
	emit(out)
	return nil
}

// shardRange returns the words [lo, hi) of word shard shard, of words
// words each, of a vocabulary of k words, or an error if it has none.
func shardRange(iter, shard, words, k int) (int, int, error) {
	lo, hi := shard*words, min((shard+1)*words, k)
	if shard < 0 || lo >= hi {
		return 0, 0, fmt.Errorf("vocabulary: iteration %d: word shard %d of %d words is past the %d words", iter, shard, words, k)
	}
	return lo, hi, nil
}

// shardSlot returns the words [lo, hi) of a word shard once the process
// has one of its updateShards slots for merging or updating shards; the
// caller calls release, even after an error.
func shardSlot(ctx context.Context, iter, shard, words, k int) (lo, hi int, release func(), err error) {
	if lo, hi, err = shardRange(iter, shard, words, k); err != nil {
		return 0, 0, func() {}, err
	}
	release, err = slots.Acquire(ctx, "vocabulary.update", updateShards)
	if err != nil {
		return 0, 0, release, fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
	}
	return lo, hi, release, nil
}

// plan is what every word shard of an iteration's update needs to know:
// the state that follows, without centroids (Next), whether the centroids
// move (Update) and, if they do, the splits that re-seed the empty
// clusters (kmeans.PlanSplits, in order).
type plan struct {
	Next   state
	Update bool
	Splits []kmeans.SplitPair
}

// readOne returns the one element the side input iter yields, or an error
// naming what it should hold.
func readOne[T any](iter func(*T) bool, what string) (T, error) {
	v, err := onekeybeam.One(iter, what)
	if err != nil {
		return v, fmt.Errorf("vocabulary: %w", err)
	}
	return v, nil
}

// planFn decides an iteration's update on one worker from the head of the
// iteration's state (the one writeStateFn emits: no centroid) and the counts of
// the merged sums of every word shard (mergeSumsFn), 8 bytes a word: the objective and the
// stopping rule (kmeans.Options.Stop), and the splits of the empty clusters
// (kmeans.PlanSplits, which needs only the counts).
type planFn struct {
	Iter, MaxIter int
	Tol           float64
}

func (f *planFn) ProcessElement(ctx context.Context, _ []byte, headSide func(*state) bool, countsSide func(*shardCounts) bool, emit func(plan)) error {
	st, err := readOne(headSide, fmt.Sprintf("the head of the state of iteration %d", f.Iter))
	if err != nil {
		return err
	}
	next, err := f.plan(ctx, st, countsSide)
	if err != nil {
		return err
	}
	emit(next)
	return nil
}

func (f *planFn) plan(ctx context.Context, st state, countsSide func(*shardCounts) bool) (plan, error) {
	if st.Converged {
		return plan{Next: st}, nil
	}
	if st.Iter != f.Iter {
		return plan{}, fmt.Errorf("vocabulary: iteration %d received the centroids of iteration %d", f.Iter, st.Iter)
	}
	count := make([]int64, st.K)
	seen := make([]bool, st.K)
	var (
		p               shardCounts
		n, changed, sse int64
		words           int
	)
	for countsSide(&p) {
		if p.Iter != f.Iter {
			return plan{}, fmt.Errorf("vocabulary: iteration %d received the sums of iteration %d", f.Iter, p.Iter)
		}
		if p.Lo < 0 || p.Lo+len(p.Count) > st.K || slices.Contains(seen[p.Lo:p.Lo+len(p.Count)], true) {
			return plan{}, fmt.Errorf("vocabulary: iteration %d received the counts of words [%d, %d) twice or out of range", f.Iter, p.Lo, p.Lo+len(p.Count))
		}
		n, changed, sse = n+p.N, changed+p.Changed, sse+p.SSE
		copy(count[p.Lo:], p.Count)
		for w := range p.Count {
			seen[p.Lo+w] = true
		}
		words += len(p.Count)
	}
	if words != st.K {
		return plan{}, fmt.Errorf("vocabulary: iteration %d received the counts of %d of its %d words", f.Iter, words, st.K)
	}
	if int(n) != st.Sampled {
		return plan{}, fmt.Errorf("vocabulary: iteration %d assigned %d of %d descriptors", f.Iter, n, st.Sampled)
	}
	// The objective is that of kmeans.Train on the same labels but for the
	// fixed-point rounding of the squared distances (sseScale).
	obj := float64(sse) / sseScale / float64(n)
	st.Objective, st.HaveObjective = obj, true
	it := kmeans.Progress{Iteration: st.Iter, Changed: int(changed), Reseeded: st.Reseeded, Objective: obj}
	if stop, converged := (kmeans.Options{MaxIter: f.MaxIter, Tol: f.Tol}).Stop(it, st.Prev); stop {
		st.Converged = converged
		if converged {
			log.Infof(ctx, "vocabulary: converged after %d iterations, mean squared distance %.1f", st.Iter, obj)
		} else {
			log.Infof(ctx, "vocabulary: stopped after %d iterations, mean squared distance %.1f", st.Iter, obj)
		}
		return plan{Next: st}, nil
	}
	var empty []int
	for c, m := range count {
		if m == 0 {
			empty = append(empty, c)
		}
	}
	out := plan{Update: true, Splits: kmeans.PlanSplits(count, empty)}
	log.Infof(ctx, "vocabulary: iteration %d: mean squared distance %.1f, %d labels changed, %d empty clusters split", st.Iter, obj, changed, len(empty))
	st.Reseeded = len(empty)
	st.Prev = obj
	st.Iter++
	st.Files = nil // the update writes the next state's
	out.Next = st
	return out, nil
}

// shardsFn emits the word shards of a vocabulary of K words, Words each.
type shardsFn struct{ K, Words int }

func (f *shardsFn) ProcessElement(_ []byte, emit func(int)) {
	for i := 0; i*f.Words < f.K; i++ {
		emit(i)
	}
}

// splitRow is a centroid that an iteration's splits touch, after the
// update set it to its cluster's mean.
type splitRow struct {
	Row      int
	Centroid []float32
}

// writeShard writes the rows cent, from row lo on, of word shard shard of
// the state whose head is st to the shard's file in the scratch directory
// dir, and emits its record. It encodes the file into buf's storage (nil:
// a new buffer) and returns it, for a caller writing shard after shard to
// reuse rather than leave a file-sized buffer of garbage a shard.
func writeShard(ctx context.Context, dir string, st state, shard, lo int, cent []float32, buf []byte, emit func(state)) ([]byte, error) {
	name := stateShardName(shard)
	buf = appendCentroids(buf[:0], st.Iter, st.Dim, []int{lo}, [][]float32{cent})
	if err := writeStateFile(ctx, dir, st.Iter, name, buf); err != nil {
		return buf, err
	}
	emit(st.record(stateFile{Name: name, Lo: lo, Rows: len(cent) / st.Dim}))
	return buf, nil
}

// shardFn updates the centroids of one word shard, [Shard·Words,
// (Shard+1)·Words), as its plan says: each to the mean of its cluster
// (kmeans.Update on the shard's kmeans.Sums, read from the file of merged
// sums mergeSumsFn wrote to the scratch directory Dir, of the rows of the
// iteration's state, read from the files its head names: writeStateFn),
// writes them to the shard's file of the next state and emits its record;
// the rows the splits touch also go to splitRowsFn. It holds the shard's
// float64 sums and centroids, 1,548 bytes a word, and the bytes of one
// file; a process updates at most updateShards shards at once. A state
// that does not move keeps its files (splitRowsFn).
type shardFn struct {
	Iter, Words int
	Dir         string
}

func (f *shardFn) ProcessElement(ctx context.Context, shard int, headSide func(*state) bool, planSide func(*plan) bool, emit func(state), emitRow func(splitRow)) error {
	pl, err := readOne(planSide, fmt.Sprintf("the plan of iteration %d", f.Iter))
	if err != nil || !pl.Update {
		return err
	}
	st, err := readOne(headSide, fmt.Sprintf("the head of the state of iteration %d", f.Iter))
	if err != nil {
		return err
	}
	if st.Iter != f.Iter {
		return fmt.Errorf("vocabulary: iteration %d received the centroids of iteration %d", f.Iter, st.Iter)
	}
	next := pl.Next
	d := next.Dim
	lo, hi, release, err := shardSlot(ctx, f.Iter, shard, f.Words, next.K)
	defer release()
	if err != nil {
		return err
	}
	cent := make([]float32, (hi-lo)*d)
	if err := readStateRows(ctx, f.Dir, st, lo, hi, cent); err != nil {
		return err
	}
	sums := kmeans.NewRangeSums(next.K, d, lo, hi)
	err = readSums(ctx, f.Dir, mergedName(shard), f.Iter, shard, d, -1, lo, hi, func(w int, n int64, sum []int64) {
		sums.AddCluster(w, n, sum)
	})
	if err != nil {
		return err
	}
	kmeans.Update(cent, sums)
	// The rows the splits touch leave for splitRowsFn too, whose file of
	// them replaces their rows of the shard's file.
	for _, r := range kmeans.SplitRows(pl.Splits) {
		if r >= lo && r < hi {
			emitRow(splitRow{Row: r, Centroid: cent[(r-lo)*d : (r-lo+1)*d]})
		}
	}
	_, err = writeShard(ctx, f.Dir, next, shard, lo, cent, nil, emit)
	return err
}

// splitRowsFn applies the plan's splits (kmeans.ApplySplits) to the
// updated centroids they touch, on one worker, writes them to the next
// state's file of split rows in the scratch directory Dir and emits its
// record. A state that does not move keeps its files: it emits their
// records again.
type splitRowsFn struct {
	Iter int
	Dir  string
}

func (f *splitRowsFn) ProcessElement(ctx context.Context, _ []byte, planSide func(*plan) bool, rowsSide func(*splitRow) bool, emit func(state)) error {
	pl, err := readOne(planSide, fmt.Sprintf("the plan of iteration %d", f.Iter))
	if err != nil {
		return err
	}
	if !pl.Update {
		for _, file := range pl.Next.Files {
			emit(pl.Next.record(file))
		}
		return nil
	}
	pairs := pl.Splits
	if len(pairs) == 0 {
		return nil
	}
	d := pl.Next.Dim
	at := map[int][]float32{}
	var r splitRow
	for rowsSide(&r) {
		if _, dup := at[r.Row]; dup || len(r.Centroid) != d {
			return fmt.Errorf("vocabulary: iteration %d: split row %d repeated or of %d values", f.Iter, r.Row, len(r.Centroid))
		}
		at[r.Row] = slices.Clone(r.Centroid) // ApplySplits writes it
	}
	rows := kmeans.SplitRows(pairs)
	if len(at) != len(rows) {
		return fmt.Errorf("vocabulary: iteration %d: %d rows for the splits, want %d", f.Iter, len(at), len(rows))
	}
	for _, c := range rows {
		if at[c] == nil {
			return fmt.Errorf("vocabulary: iteration %d: no row %d for the splits", f.Iter, c)
		}
	}
	kmeans.ApplySplits(pairs, d, func(c int) []float32 { return at[c] })
	// Consecutive rows make one run of the file.
	var los []int
	var runs [][]float32
	for i := 0; i < len(rows); {
		j := i + 1
		for j < len(rows) && rows[j] == rows[j-1]+1 {
			j++
		}
		cent := make([]float32, 0, (j-i)*d)
		for _, c := range rows[i:j] {
			cent = append(cent, at[c]...)
		}
		los, runs = append(los, rows[i]), append(runs, cent)
		i = j
	}
	next := pl.Next
	if err := writeStateFile(ctx, f.Dir, next.Iter, splitRowsName, appendCentroids(nil, next.Iter, d, los, runs)); err != nil {
		return err
	}
	emit(next.record(stateFile{Name: splitRowsName, Split: true}))
	return nil
}
