package kmeansbeam

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

// state is the trainer's state between iterations: the centroids of
// iteration Iter (after Iter updates).
//
// The initial state of the one-step loop (loopFn) travels as parts of at
// most stateRows centroids (see maxChunk for why): part Lo holds the
// centroids from row Lo on, and every part repeats the other fields; the
// parts of a state cover its K rows once each. In the distributed loop a
// state's centroids are in files of the scratch directory instead, written
// a word shard at a time (emitInitial, shardFn, splitRowsFn), and the state
// travels as records of those files: each a head (a state without
// centroids) naming one file in Files. No worker holds all the centroids
// to write them (but the seeding's, which chose them), and the runner
// holds none.
type state struct {
	Iter   int
	K, Dim int
	Lo     int
	// Centroids are the rows of a part, or of the state readState
	// assembles.
	Centroids []float32
	// Files are the files of the centroids of a state in Lloyd's loop,
	// in stateDir(Iter): one in a record, all of them, word shards
	// ascending and the split rows last, in the head writeStateFn emits.
	Files []stateFile
	// Objective is J of Centroids once HaveObjective; Prev is J of the
	// previous iteration's centroids, if Iter > 0.
	Objective     float64
	HaveObjective bool
	Prev          float64
	Converged     bool
	// Reseeded is the number of empty clusters the last update split.
	Reseeded int
	Sampled  int
	Approx   bool
	Forest   nn.ForestOptions
	UseIVF   bool
	IVF      nn.IVFOptions
	// Start is when training started, in Unix nanoseconds.
	Start int64
}

// stateFile is a file of the centroids of a state (see stateDir): the rows
// [Lo, Lo+Rows) of a word shard or, if Split, rows that the splits of the
// update that made the state touched, which replace the shard files'.
type stateFile struct {
	Name     string
	Lo, Rows int
	Split    bool
}

// record returns the record of the file f of the state whose head is st.
func (st state) record(f stateFile) state {
	st.Lo, st.Centroids = 0, nil
	st.Files = []stateFile{f}
	return st
}

// stateOfFiles returns the head of the state whose records (state.record)
// iter yields, naming all its files, word shards ascending and the split
// rows last. It reports false if there are none, and an error unless the
// word shards' files cover the K rows once each.
func stateOfFiles(iter func(*state) bool) (state, bool, error) {
	var st, p state
	var files []stateFile
	n := 0
	for iter(&p) {
		if n == 0 {
			st = p
		}
		n++
		if err := st.sameAs(p); err != nil {
			return state{}, false, err
		}
		if len(p.Files) != 1 || len(p.Centroids) != 0 {
			return state{}, false, fmt.Errorf("vocabulary: iteration %d: a record of %d files and %d values, want one file", st.Iter, len(p.Files), len(p.Centroids))
		}
		files = append(files, p.Files[0])
	}
	if n == 0 {
		return state{}, false, nil
	}
	slices.SortFunc(files, func(a, b stateFile) int {
		if a.Split != b.Split {
			if a.Split {
				return 1
			}
			return -1
		}
		return a.Lo - b.Lo
	})
	rows := 0
	for i, f := range files {
		switch {
		case f.Split && i != len(files)-1:
			return state{}, false, fmt.Errorf("vocabulary: iteration %d: the state has more than one file of split rows", st.Iter)
		case !f.Split && (f.Lo != rows || f.Rows <= 0):
			return state{}, false, fmt.Errorf("vocabulary: iteration %d: the state's file of rows [%d, %d) after row %d", st.Iter, f.Lo, f.Lo+f.Rows, rows)
		case !f.Split:
			rows += f.Rows
		}
	}
	if rows != st.K {
		return state{}, false, fmt.Errorf("vocabulary: iteration %d: the state's files hold %d of its %d centroids", st.Iter, rows, st.K)
	}
	st.Files = files
	return st, true, nil
}

// stateRows is the number of centroids in a part of a state: 256 KB of
// float32 at D = 128.
const stateRows = 512

// parts cuts st into its parts, at most stateRows centroids each, which
// share st's centroids, and emits them.
func (st state) parts(emit func(state)) {
	n := len(st.Centroids) / st.Dim
	for r := 0; r < n; r += stateRows {
		p := st
		p.Lo = r
		p.Centroids = st.Centroids[r*st.Dim : min(r+stateRows, n)*st.Dim]
		emit(p)
	}
}

// readState assembles the state whose parts iter yields. It reports false
// if there are none.
func readState(iter func(*state) bool) (state, bool, error) {
	var st, p state
	var seen []bool
	n, rows := 0, 0
	for iter(&p) {
		if n == 0 {
			st = p
			st.Lo = 0
			st.Centroids = make([]float32, p.K*p.Dim)
			seen = make([]bool, p.K)
		}
		n++
		if err := st.sameAs(p); err != nil {
			return state{}, false, err
		}
		m := len(p.Centroids) / p.Dim
		if p.Lo < 0 || p.Lo+m > st.K || slices.Contains(seen[p.Lo:p.Lo+m], true) {
			return state{}, false, fmt.Errorf("vocabulary: iteration %d: the part of the state from row %d is repeated or malformed", st.Iter, p.Lo)
		}
		for r := p.Lo; r < p.Lo+m; r++ {
			seen[r] = true
		}
		copy(st.Centroids[p.Lo*p.Dim:], p.Centroids)
		rows += m
	}
	if n == 0 {
		return state{}, false, nil
	}
	if rows != st.K {
		return state{}, false, fmt.Errorf("vocabulary: iteration %d: the state has %d of its %d centroids", st.Iter, rows, st.K)
	}
	return st, true, nil
}

// sameAs reports an error unless the part p belongs to the state of st.
func (st state) sameAs(p state) error {
	switch {
	case p.Iter != st.Iter || p.K != st.K || p.Dim != st.Dim || p.Converged != st.Converged:
		return fmt.Errorf("vocabulary: parts of the states of iterations %d and %d mixed", st.Iter, p.Iter)
	case p.Dim <= 0 || len(p.Centroids)%p.Dim != 0 || p.K <= 0:
		return fmt.Errorf("vocabulary: iteration %d: the part of the state from row %d has %d values of dimension %d", st.Iter, p.Lo, len(p.Centroids), p.Dim)
	}
	return nil
}

// fingerprint is the FNV-1a hash of the values' bits.
func fingerprint(c []float32) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range c {
		b := math.Float32bits(v)
		for range 4 {
			h = (h ^ uint64(b&0xff)) * 1099511628211
			b >>= 8
		}
	}
	return h
}

// initFn chooses the initial centroids on the whole sample, on one worker,
// and emits them as emitInitial does with Dir and Words (initialWords).
type initFn struct {
	Opt   Options
	Dir   string
	Words int
}

func (f *initFn) ProcessElement(ctx context.Context, smp sample, emit func(state)) error {
	return initState(ctx, f.Opt, f.Dir, f.Words, smp, len(smp.Prio), emit)
}

// initState chooses the initial centroids on smp, on one worker, and emits
// them as the state of a training on sampled descriptors in chunks, as
// emitInitial does with dir and words.
func initState(ctx context.Context, o Options, dir string, words int, smp sample, sampled int, emit func(state)) error {
	const d = formats.DescriptorSize
	start := time.Now()
	data, err := floats(smp, o.K)
	if err != nil {
		return err
	}
	opt := o.kmeans()
	opt.Progress = logProgress(ctx, o.K, len(smp.Prio), start)
	cent, err := kmeans.Initialize(data, d, opt)
	if err != nil {
		return fmt.Errorf("vocabulary: %w", err)
	}
	log.Infof(ctx, "vocabulary: %d initial centroids from %d descriptors in %.1fs", o.K, len(smp.Prio), time.Since(start).Seconds())
	return emitInitial(ctx, dir, words, initialState(o, cent, sampled, start), emit)
}

// initialWords is the Words of the steps that choose the initial state
// (emitInitial): 0 for the one-step loop. It reads ShardWords and
// OneStepWork, which are json:"-" and so lost when a DoFn is serialised
// for the workers: those steps take it, worked out when the graph is
// built, as a field of their own (Words), not from their Opt.
func (o Options) initialWords() int {
	if o.oneStep() {
		return 0
	}
	return o.shardWords()
}

// emitInitial emits the initial state st of a training whose scratch
// directory is dir: with words 0, as parts for the one-step loop (loopFn),
// else as the records of its files by word shard of words words, written
// here, where the whole state is anyway, so that the runner holds none of
// its centroids.
func emitInitial(ctx context.Context, dir string, words int, st state, emit func(state)) error {
	if words == 0 {
		st.parts(emit)
		return nil
	}
	var buf []byte
	for lo := 0; lo < st.K; lo += words {
		hi := min(lo+words, st.K)
		var err error
		if buf, err = writeShard(ctx, dir, st, lo/words, lo, st.Centroids[lo*st.Dim:hi*st.Dim], buf, emit); err != nil {
			return err
		}
	}
	return nil
}

// maxChunk bounds the descriptors of a chunk: 1 MB of bytes, which an
// assigning bundle reads, converts to float32 and labels one at a time,
// one batch of an IVF's default search (its lists read once for the whole
// chunk).
const maxChunk = 8192

// chunkCount is the number of chunks writeChunksFn cuts a sample of n
// descriptors into when asked for chunks.
func chunkCount(chunks, n int) int {
	return max(min(chunks, n), (n+maxChunk-1)/maxChunk)
}

// cutChunks calls cut with each chunk's index and descriptor range
// [lo, hi) when a sample of n descriptors is cut into chunkCount(chunks,
// n) contiguous chunks of equal size (±1): the cutting Lloyd's iterations
// and the k-means‖ seeding share.
func cutChunks(chunks, n int, cut func(i, lo, hi int)) {
	c := chunkCount(chunks, n)
	for i := range c {
		cut(i, i*n/c, (i+1)*n/c)
	}
}

// partial holds the sufficient statistics of a set of descriptors for the
// clusters they fall in: for Words[j] (ascending), Count[j] descriptors
// summing to Sum[j*Dim:(j+1)*Dim]. SSE is the total squared distance in
// units of 2⁻⁸, N the number of descriptors and Changed the number whose
// label changed. The zero partial (Dim = 0) is the empty sum. It is the
// one-step loop's (loop.go); the distributed stages keep their sums in
// files (scratch.go).
type partial struct {
	Iter    int
	Dim     int
	N       int64
	Changed int64
	SSE     int64
	Words   []int32
	Count   []int64
	Sum     []int64
}

// sseScale is the fixed-point unit of partial.SSE. A squared distance
// between 128-byte descriptors is below 128·255² < 2²³, so a descriptor adds
// less than 2³¹ units and 2³² descriptors cannot overflow; rounding to 2⁻⁸
// changes J by at most 2⁻⁹, nothing against SIFT distances of 10⁴–10⁵.
const sseScale = 256

// merge returns the sum of a and b, which it may reuse. Descriptors are
// bytes, so the sums are integers and the merge exact: the result does not
// depend on the grouping.
func merge(a, b partial) partial {
	switch {
	case a.Dim == 0:
		return b
	case b.Dim == 0:
		return a
	case a.Iter != b.Iter || a.Dim != b.Dim:
		panic(fmt.Sprintf("vocabulary: merging sums of iteration %d, dim %d with iteration %d, dim %d", b.Iter, b.Dim, a.Iter, a.Dim))
	}
	d := a.Dim
	n := unionLen(a.Words, b.Words)
	out := partial{Iter: a.Iter, Dim: d, N: a.N + b.N, Changed: a.Changed + b.Changed, SSE: a.SSE + b.SSE,
		Words: make([]int32, 0, n), Count: make([]int64, 0, n), Sum: make([]int64, 0, n*d)}
	i, j := 0, 0
	for i < len(a.Words) || j < len(b.Words) {
		switch {
		case j == len(b.Words) || (i < len(a.Words) && a.Words[i] < b.Words[j]):
			out.Words = append(out.Words, a.Words[i])
			out.Count = append(out.Count, a.Count[i])
			out.Sum = append(out.Sum, a.Sum[i*d:(i+1)*d]...)
			i++
		case i == len(a.Words) || b.Words[j] < a.Words[i]:
			out.Words = append(out.Words, b.Words[j])
			out.Count = append(out.Count, b.Count[j])
			out.Sum = append(out.Sum, b.Sum[j*d:(j+1)*d]...)
			j++
		default:
			out.Words = append(out.Words, a.Words[i])
			out.Count = append(out.Count, a.Count[i]+b.Count[j])
			row := len(out.Sum)
			out.Sum = append(out.Sum, a.Sum[i*d:(i+1)*d]...)
			for k, v := range b.Sum[j*d : (j+1)*d] {
				out.Sum[row+k] += v
			}
			i++
			j++
		}
	}
	return out
}

// unionLen is the number of distinct words of the ascending a and b.
func unionLen(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case b[j] < a[i]:
			j++
		default:
			i++
			j++
		}
		n++
	}
	return n + len(a) - i + len(b) - j
}

// bundleSums accumulates the partial sums of a bundle sparsely: memory grows
// with the clusters the bundle touches, not with K. With a positive limit,
// add hands them to spill, which must empty them (flush, or write them as
// assignFn.writeSums does), before a new row would pass limit rows.
type bundleSums struct {
	dim   int
	slot  []int32 // slot[c] is the row of cluster c, or −1
	words []int32 // clusters touched, in order of first touch
	count []int64
	sum   []int64
	sse   int64
	n     int64
	moved int64
	limit int
	spill func() error
}

// add adds a descriptor of cluster label at squared distance dist.
func (b *bundleSums) add(desc []byte, label int32, dist float32) error {
	return b.move(desc, -1, label, dist)
}

// move adds a descriptor at squared distance dist that moved from
// cluster from (−1: none) to cluster to: to its new cluster and, taken
// away, to its old one, nothing if they are the same. Sums so made from
// every descriptor's move of an iteration are the change of the previous
// iteration's sums, exactly (they are integers), while N and the squared
// distances count every descriptor.
func (b *bundleSums) move(desc []byte, from, to int32, dist float32) error {
	if b.slot == nil {
		return nil
	}
	if from != to {
		r, err := b.rowOf(to)
		if err != nil {
			return err
		}
		b.count[r]++
		row := b.sum[int(r)*b.dim : int(r+1)*b.dim]
		for j, v := range desc[:len(row)] {
			row[j] += int64(v)
		}
		if from >= 0 {
			if r, err = b.rowOf(from); err != nil {
				return err
			}
			b.count[r]--
			row := b.sum[int(r)*b.dim : int(r+1)*b.dim]
			for j, v := range desc[:len(row)] {
				row[j] -= int64(v)
			}
		}
	}
	b.sse += int64(math.Round(float64(dist) * sseScale))
	b.n++
	return nil
}

// rowOf returns the row of cluster c, adding one, after handing the sums
// to spill if that would pass limit rows, if the bundle has none.
func (b *bundleSums) rowOf(c int32) (int32, error) {
	if r := b.slot[c]; r >= 0 {
		return r, nil
	}
	if b.limit > 0 && len(b.words) >= b.limit {
		if err := b.spill(); err != nil {
			return 0, err
		}
	}
	r := int32(len(b.words))
	b.slot[c] = r
	b.words = append(b.words, c)
	b.count = append(b.count, 0)
	b.sum = append(b.sum, make([]int64, b.dim)...)
	return r, nil
}

// sorted returns the rows of b in ascending order of their words.
func (b *bundleSums) sorted() []int32 {
	order := make([]int32, len(b.words))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return int(b.words[x]) - int(b.words[y]) })
	return order
}

// row returns the word, count and sums of row r.
func (b *bundleSums) row(r int32) (int32, int64, []int64) {
	return b.words[r], b.count[r], b.sum[int(r)*b.dim : int(r+1)*b.dim]
}

// reset empties b, keeping its storage.
func (b *bundleSums) reset() {
	for _, w := range b.words {
		b.slot[w] = -1
	}
	b.words, b.count, b.sum = b.words[:0], b.count[:0], b.sum[:0]
	b.sse, b.n, b.moved = 0, 0, 0
}

// flush returns the bundle's sums for iteration iter, words ascending, and
// empties b.
func (b *bundleSums) flush(iter int) partial {
	order := b.sorted()
	p := partial{Iter: iter, Dim: b.dim, N: b.n, Changed: b.moved, SSE: b.sse,
		Words: make([]int32, len(order)), Count: make([]int64, len(order)), Sum: make([]int64, len(order)*b.dim)}
	for i, r := range order {
		w, n, sum := b.row(r)
		p.Words[i], p.Count[i] = w, n
		copy(p.Sum[i*b.dim:], sum)
	}
	b.reset()
	return p
}

// indexSlot holds the search (a forest, an IVF or exact) of the latest
// iteration assigned in this process. One slot is enough — every bundle of
// an iteration needs the same index, and the previous iteration's is dead —
// and bounds a worker's memory to one index however many iterations the
// graph holds.
type indexSlot[O comparable, T any] struct {
	sync.Mutex
	key indexKey[O]
	v   *T
}

// indexKey identifies an index: the scratch directory of its training,
// unique to it, and the iteration name its centroids.
type indexKey[O comparable] struct {
	dir    string
	iter   int
	k, dim int
	opt    O
}

// get returns the index over st's centroids, those of iteration st.Iter of
// the training of scratch directory dir, building it with
// build(st.Centroids, st.Dim, opt for the iteration) if the slot holds
// another.
func (c *indexSlot[O, T]) get(dir string, st *state, opt O, forIter func(O, int) O, build func([]float32, int, O) (*T, error)) (*T, error) {
	key := indexKey[O]{dir, st.Iter, st.K, st.Dim, opt}
	c.Lock()
	defer c.Unlock()
	if c.v != nil && c.key == key {
		return c.v, nil
	}
	c.v = nil // let the old index go before building the new one
	v, err := build(st.Centroids, st.Dim, forIter(opt, st.Iter))
	if err != nil {
		return nil, err
	}
	c.key, c.v = key, v
	return v, nil
}

// drop lets go of the index if it is of iteration iter or an earlier one.
func (c *indexSlot[O, T]) drop(iter int) {
	c.Lock()
	defer c.Unlock()
	if c.v != nil && c.key.iter <= iter {
		c.v = nil
	}
}

var assignerSlot indexSlot[kmeans.AssignOptions, kmeans.Assigner]

// cachedAssigner returns the search over st's centroids, those of
// iteration st.Iter of the training of scratch directory dir.
func cachedAssigner(dir string, st *state, opt kmeans.AssignOptions) (*kmeans.Assigner, error) {
	return assignerSlot.get(dir, st, opt, kmeans.AssignOptions.ForIteration, kmeans.NewAssigner)
}

// stateSlot holds the state of the latest iteration assigned in this
// process, keyed by the training's scratch directory, named once per graph
// (Options.scratchDir), and the iteration: every bundle of an iteration
// reads the same state, which a worker process so reads once from the
// files writeStateFn's head names, not once per bundle, and holds one of
// at a time.
var stateSlot struct {
	sync.Mutex
	dir  string
	iter int
	st   *state
}

// assigningOver lets go of what this process keeps for the assigning of
// the training of scratch directory dir up to iteration iter, once that
// assigning is over: its state and index, 512·K bytes and the index's
// size (at 10⁶ words about 1.6 GB), which would otherwise stay until the
// next iteration's first bundle, beside that iteration's update. Both are
// caches, so letting go of another training's index costs at most its
// rebuilding.
func assigningOver(dir string, iter int) {
	stateSlot.Lock()
	if stateSlot.st != nil && stateSlot.dir == dir && stateSlot.iter <= iter {
		stateSlot.st = nil
	}
	stateSlot.Unlock()
	assignerSlot.drop(iter)
}

// cachedState returns the state of iteration head.Iter of the training of
// scratch directory dir — head with the centroids of the files it names —
// from stateSlot or read from its files.
func cachedState(ctx context.Context, dir string, head state) (state, error) {
	stateSlot.Lock()
	defer stateSlot.Unlock()
	if stateSlot.st != nil && stateSlot.dir == dir && stateSlot.iter == head.Iter {
		return *stateSlot.st, nil
	}
	stateSlot.st = nil // let the old state go before reading the new one
	cent, err := readStateCentroids(ctx, dir, head)
	if err != nil {
		return state{}, err
	}
	st := head
	st.Centroids = cent
	stateSlot.dir, stateSlot.iter, stateSlot.st = dir, head.Iter, &st
	return st, nil
}

// writeStateFn gathers the records of the files of the state of
// iteration Iter, whose centroids the update wrote to the scratch
// directory Dir, and emits its head naming them all (stateOfFiles), which
// every chunk of the iteration is paired with (onekeybeam.Pair): the
// assigning bundles, which run for seconds, so take the state without a
// side input (see onekeybeam), and a worker process reads it once
// (cachedState). It removes the previous iteration's centroids (unless
// they are this state's, converged) and sums (scratch.go), whose
// assigning and update are over: this state is made from them. It never
// holds a centroid.
type writeStateFn struct {
	Iter int
	Dir  string
}

func (f *writeStateFn) ProcessElement(ctx context.Context, _ []byte, stateSide func(*state) bool, emit func(state)) error {
	st, ok, err := stateOfFiles(stateSide)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("vocabulary: iteration %d has no centroids", f.Iter)
	}
	if st.Iter != f.Iter && !st.Converged {
		return fmt.Errorf("vocabulary: iteration %d received the centroids of iteration %d", f.Iter, st.Iter)
	}
	if f.Iter > 0 {
		if st.Iter != f.Iter-1 {
			if err := removeState(ctx, f.Dir, f.Iter-1); err != nil {
				return err
			}
		}
		if err := removeSums(ctx, f.Dir, f.Iter-1); err != nil {
			return err
		}
	}
	emit(st)
	return nil
}

// assignFn assigns chunks to the centroids of the state each is paired
// with — its head, whose centroids are in the scratch directory
// (writeStateFn) — writes each chunk's new labels for the next iteration
// (but in iteration Last, whose labels no one reads) and emits the chunk,
// and writes the bundle's sums to the scratch directory whenever they
// reach Rows rows and when it finishes, emitting a record of each file
// keyed by its word shard (writeSums).
type assignFn struct {
	Iter, Last int
	// Dir is the scratch directory of the chunks', states' and sums'
	// files.
	Dir    string
	Approx bool
	Forest nn.ForestOptions
	UseIVF bool
	IVF    nn.IVFOptions
	// Words is the size of a word shard (Options.ShardWords): a file of
	// sums holds one shard's words. Rows bounds the rows of a bundle's
	// sums (Options.SumsRows): the merge is exact, so when they leave
	// changes nothing.
	Words, Rows int

	// Per bundle, dropped in FinishBundle: the SDK harness caches the DoFn
	// with its bundle plan, one or more per unrolled iteration, for the
	// rest of the job.
	release  func() // gives back the bundle's slot (assignBundles)
	ready    bool   // the state has been read
	skip     bool   // training has converged
	assigner *kmeans.Assigner
	sums     bundleSums
	buf      []byte // a file of sums being written
	descs    beam.Counter
	work     chunkWork
}

// assignBundles is the most bundles of an iteration's assignment that a
// worker process runs at once. A bundle holds an index of 4·K bytes and
// up to Rows rows of sums: one is enough to keep the cores busy, as a
// chunk is assigned by GOMAXPROCS goroutines.
const assignBundles = 1

func (f *assignFn) ProcessElement(ctx context.Context, c chunk, head state, emitChunk func(chunk), emitSums func(int, sumsFile)) error {
	if f.release == nil {
		release, err := slots.Acquire(ctx, "vocabulary.assign", assignBundles)
		if err != nil {
			return fmt.Errorf("vocabulary: iteration %d: %w", f.Iter, err)
		}
		f.release = release
	}
	err := f.assign(ctx, c, head, emitChunk, emitSums)
	if err != nil {
		f.letGo()
	}
	return err
}

// letGo gives back the bundle's slot, if it holds one.
func (f *assignFn) letGo() {
	if f.release != nil {
		f.release()
		f.release = nil
	}
}

// assign is ProcessElement once the bundle holds its slot.
func (f *assignFn) assign(ctx context.Context, c chunk, head state, emitChunk func(chunk), emitSums func(int, sumsFile)) error {
	const d = formats.DescriptorSize
	if !f.ready {
		if head.Converged {
			f.ready, f.skip = true, true
			return nil
		}
		if head.Iter != f.Iter || head.Dim != d {
			return fmt.Errorf("vocabulary: iteration %d received the centroids of iteration %d, dimension %d", f.Iter, head.Iter, head.Dim)
		}
		st, err := cachedState(ctx, f.Dir, head)
		if err != nil {
			return err
		}
		f.ready = true
		a, err := cachedAssigner(f.Dir, &st, kmeans.AssignOptions{Approx: f.Approx, Forest: f.Forest, UseIVF: f.UseIVF, IVF: f.IVF})
		if err != nil {
			return fmt.Errorf("vocabulary: iteration %d: %w", f.Iter, err)
		}
		f.assigner = a
		f.sums = bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, st.K), limit: f.Rows}
		f.descs = beam.NewCounter("kmeans", "descriptors_assigned")
	}
	if f.skip {
		return nil
	}
	f.sums.spill = func() error { return f.writeSums(ctx, emitSums) }
	if err := f.work.assign(ctx, f.Dir, c, f.Iter, f.Last, f.assigner, &f.sums, runtime.GOMAXPROCS(0), nil); err != nil {
		return err
	}
	f.descs.Inc(ctx, int64(c.N))
	emitChunk(c)
	return nil
}

// writeSums writes the bundle's sums to the scratch directory, a file of
// each word shard they touch under a name of its own (scratch.go), emits
// a record of each keyed by its shard, the bundle's totals on the first,
// and empties them.
func (f *assignFn) writeSums(ctx context.Context, emit func(int, sumsFile)) error {
	b := &f.sums
	order := b.sorted()
	for i := 0; i < len(order); {
		shard := int(b.words[order[i]]) / f.Words
		j := i + 1
		for j < len(order) && int(b.words[order[j]])/f.Words == shard {
			j++
		}
		rows := order[i:j]
		f.buf = appendSums(f.buf[:0], f.Iter, shard, b.dim, len(rows), func(r int) (int32, int64, []int64) { return b.row(rows[r]) })
		rec := sumsFile{Iter: f.Iter, Name: bundleSumsName(shard), Rows: len(rows)}
		if i == 0 {
			rec.N, rec.Changed, rec.SSE = b.n, b.moved, b.sse
		}
		if err := writeSumsFile(ctx, f.Dir, f.Iter, rec.Name, f.buf); err != nil {
			return err
		}
		emit(shard, rec)
		i = j
	}
	b.reset()
	return nil
}

func (f *assignFn) FinishBundle(ctx context.Context, _ func(chunk), emitSums func(int, sumsFile)) error {
	var err error
	if f.sums.n > 0 {
		err = f.writeSums(ctx, emitSums)
	}
	f.letGo()
	// Drop the bundle's centroids, sums and scratch, so that a worker
	// keeps only the cached search between bundles.
	*f = assignFn{Iter: f.Iter, Last: f.Last, Dir: f.Dir, Approx: f.Approx, Forest: f.Forest, UseIVF: f.UseIVF, IVF: f.IVF, Words: f.Words, Rows: f.Rows}
	return err
}

// chunkWork holds the buffers of the assignment of one chunk at a time.
type chunkWork struct {
	scratch []kmeans.AssignScratch
	x       []float32
	labels  []int32
	prev    []int32
	dist    []float32
}

// assign assigns the descriptors of chunk c, read from the scratch
// directory dir, in iteration iter through a, with w goroutines: it reads
// the chunk's labels of the previous iteration (none at 0), adds the
// descriptors to sums, writes the new labels for the next iteration (but
// in iteration last, whose labels no one reads) and removes the labels
// of iteration iter−2, which iteration iter−1 has read. With held not
// nil the chunk's labels stay in *held from one iteration to the next
// instead, in the memory of a process that runs every iteration (loopFn),
// and assign adds to sums only how the descriptors moved
// (bundleSums.move): the caller keeps the previous iteration's sums.
func (cw *chunkWork) assign(ctx context.Context, dir string, c chunk, iter, last int, a *kmeans.Assigner, sums *bundleSums, w int, held *[]int32) error {
	const d = formats.DescriptorSize
	n := c.N
	desc, err := readDesc(ctx, dir, c)
	if err != nil {
		return err
	}
	cw.x = floatsInto(cw.x, desc)
	var labels []int32
	if held != nil {
		if iter == 0 {
			*held = slices.Repeat([]int32{-1}, n)
		}
		if len(*held) != n {
			panic(fmt.Sprintf("vocabulary: chunk %d of %d descriptors with %d labels held", c.Index, n, len(*held)))
		}
		labels = *held
		cw.prev = append(cw.prev[:0], labels...)
	} else {
		cw.labels = slices.Grow(cw.labels[:0], n)[:n]
		labels = cw.labels
		if iter > 0 {
			if err := readLabels(ctx, dir, c, iter-1, labels); err != nil {
				return err
			}
		} else {
			for i := range labels {
				labels[i] = -1
			}
		}
	}
	cw.dist = slices.Grow(cw.dist[:0], n)[:n]
	// Labels depend only on each descriptor and its previous label, so
	// the goroutines change nothing but the time.
	w = max(1, min(w, n))
	if len(cw.scratch) < w {
		cw.scratch = make([]kmeans.AssignScratch, w)
	}
	sums.moved += int64(a.AssignParallel(cw.x, labels, cw.dist, cw.scratch[:w]))
	for i, l := range labels {
		from := int32(-1)
		if held != nil {
			from = cw.prev[i]
		}
		if err := sums.move(desc[i*d:(i+1)*d], from, l, cw.dist[i]); err != nil {
			return err
		}
	}
	if held != nil {
		return nil
	}
	if iter < last {
		if err := writeLabels(ctx, dir, c.Index, iter, labels); err != nil {
			return fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
		}
	}
	if iter >= 2 {
		// Iteration iter−1, which read them, is over; a retry of this
		// assignment reads the labels of iter−1.
		if err := fileio.Remove(ctx, fileio.Join(dir, labelsName(c.Index, iter-2))); err != nil {
			return fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
		}
	}
	return nil
}

// codebookFn turns the final state, whose records name its files in the
// scratch directory Dir, into the codebook once training is done, writing
// its words to Output a shard of Words words at a time, and removes Dir.
type codebookFn struct {
	Dir, Output string
	Words       int
}

func (f *codebookFn) ProcessElement(ctx context.Context, _ []byte, stateSide func(*state) bool, chunks int) (Codebook, error) {
	st, ok, err := stateOfFiles(stateSide)
	if err != nil {
		return Codebook{}, err
	}
	if !ok {
		return Codebook{}, fmt.Errorf("vocabulary: no centroids")
	}
	return finish(ctx, f.Dir, f.Output, st, chunks, func(add func([]float32) error) error {
		block := make([]float32, min(f.Words, st.K)*st.Dim)
		for lo := 0; lo < st.K; lo += f.Words {
			hi := min(lo+f.Words, st.K)
			b := block[:(hi-lo)*st.Dim]
			if err := readStateRows(ctx, f.Dir, st, lo, hi, b); err != nil {
				return err
			}
			if err := add(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// finish writes the codebook of the final state st, trained on chunks
// chunks, to the directory out from blocks (Codebook.write), removes the
// training's scratch directory dir and returns the codebook.
func finish(ctx context.Context, dir, out string, st state, chunks int, blocks func(add func([]float32) error) error) (Codebook, error) {
	cb := Codebook{K: st.K, Dim: st.Dim, Objective: st.Objective, Iterations: st.Iter,
		Sampled: st.Sampled, Seconds: time.Since(time.Unix(0, st.Start)).Seconds(), Converged: st.Converged,
		Approx: st.Approx, Forest: st.Forest, UseIVF: st.UseIVF, IVF: st.IVF, Chunks: chunks}
	cb, err := cb.write(ctx, out, blocks)
	if err != nil {
		return Codebook{}, err
	}
	if err := fileio.RemoveAll(ctx, dir); err != nil {
		return Codebook{}, fmt.Errorf("vocabulary: %w", err)
	}
	return cb, nil
}
