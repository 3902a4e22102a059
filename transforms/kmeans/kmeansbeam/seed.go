package kmeansbeam

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/progress"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*seedChunk)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedCands)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedPhi)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedCounts)(nil)).Elem())
	beam.RegisterFunction(seedStartFn)
	beam.RegisterType(reflect.TypeOf((*seedSampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedLowerFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedFarthestFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedPhiFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedCountFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedCountsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedPhiPassFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedCandsPassFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*seedFinishFn)(nil)).Elem())
}

// initialState returns the state of iteration 0 at the initial centroids
// cent, chosen from the sampled descriptors since start.
func initialState(opt Options, cent []float32, sampled int, start time.Time) state {
	st := state{K: opt.K, Dim: formats.DescriptorSize, Centroids: cent, Sampled: sampled, Approx: opt.Approx,
		Start: start.UnixNano()}
	if st.Approx {
		st.Forest = opt.forest()
	}
	if opt.useIVF() {
		st.UseIVF, st.IVF = true, opt.ivf()
	}
	return st
}

// initialCentroids returns the initial state of distributed training
// (PCollection<state>, in parts) by k-means‖ over the sample's chunks
// (PCollection<chunk>, their files in dir).
//
// k-means‖ (kmeans.InitParallel, which InitAuto may resolve to) runs
// kmeans.ParallelChunk's pieces where the sample's chunks are, one chunk
// of at most maxChunk descriptors at a time. With candidates_0 the first
// point:
//
//	candidates_r           = ParDo(sample_r)(chunks_r; side input: φ_r−1)
//	chunks_r+1, φ parts_r  = ParDo(lower_r)(chunks_r; side input: candidates_r)
//	φ_r                    = Combine(φ parts_r)
//
// for r = 0…rounds, then a top-up round of the farthest points if fewer
// than K candidates were drawn, a combined count of the points nearest to
// each candidate, and the weighted k-means++ over the gathered candidates
// (kmeans.ParallelFinish) on one worker, which makes the initial state;
// each round writes a progress line. A chunk's descriptors stay in its
// file, which the steps that need them read; a chunk carries D², label and the
// candidates it holds between the stages (12 bytes a descriptor at most);
// a round's candidates travel as each chunk's share of them, so no
// element outgrows a chunk, and each worker process that lowers D² reads
// a round's new candidates (128 bytes each, ℓ ≈ K of them) and builds one
// index over them, shared by its bundles. φ is an exact sum and every
// draw a hash of the descriptor's index in the sample, so the initial
// centroids are those of kmeans.Initialize on the whole sample, whatever
// the chunks and the runner; the last step holds the ~2K candidates and
// K centroids as float32.
func initialCentroids(s beam.Scope, sampleChunks beam.PCollection, opt Options, dir string, start beam.PCollection) beam.PCollection {
	s = s.Scope("seeding")
	rounds, ell := opt.kmeans().ParallelSeeding()
	chunks := beam.ParDo(s, seedStartFn, sampleChunks)
	phi := beam.ParDo(s, &seedPhiPassFn{}, start, beam.SideInput{Input: beam.Create(s, seedPhi{})})
	var all []beam.PCollection
	for r := 0; r <= rounds+1; r++ {
		rs := s.Scope(fmt.Sprintf("round%d", r))
		// Every side input of a stage over the chunks is re-emitted by a
		// stage over start, as Lloyd's iterations read their state: with
		// the side inputs read straight from the stage (or Combine) that
		// made them, Prism v2.77.0 ran some bundles of the next stage
		// with them empty on a loaded machine (2 of about 20 runs of
		// TestVocabularyDistributed, and 4 of 8 with the chunks behind a
		// Reshuffle; none of 10 re-emitted).
		var cands beam.PCollection
		if r <= rounds {
			cands = beam.ParDo(rs, &seedSampleFn{Round: r, Seed: opt.Seed, Ell: ell, Dir: dir}, chunks, beam.SideInput{Input: phi})
		} else {
			cands = beam.ParDo(rs, &seedFarthestFn{Round: r, K: opt.K, Dir: dir}, chunks)
		}
		cands = beam.ParDo(rs, &seedCandsPassFn{}, start, beam.SideInput{Input: cands})
		all = append(all, cands)
		next, parts := beam.ParDo2(rs, &seedLowerFn{Round: r, Seed: opt.Seed, K: opt.K, TopUp: r > rounds, Dir: dir}, chunks, beam.SideInput{Input: cands})
		phi = beam.ParDo(rs, &seedPhiPassFn{Round: r, Rounds: rounds, K: opt.K}, start, beam.SideInput{Input: beam.Combine(rs, &seedPhiFn{}, parts)})
		chunks = next
	}
	counts := beam.CombinePerKey(s, &seedCountsFn{}, beam.ParDo(s, &seedCountFn{}, chunks))
	return beam.ParDo(s, &seedFinishFn{Opt: opt, Rounds: rounds, Dir: dir, Words: opt.initialWords()}, start, beam.SideInput{Input: beam.Flatten(s, all...)}, beam.SideInput{Input: counts})
}

// seedChunk is a chunk of the sample during k-means‖ (C, whose first
// descriptor is descriptor C.Lo of the C.Total sampled) and
// kmeans.ParallelChunk's D², labels and candidates; Cands is the number
// of candidates drawn so far from the whole sample and Start the start of
// the seeding in Unix nanoseconds.
type seedChunk struct {
	C     chunk
	D2    []float32
	Label []int32
	Cand  []int32
	Cands int
	Start int64
}

// seedStartFn starts the seeding of a chunk.
func seedStartFn(c chunk) seedChunk { return seedChunk{C: c, Start: time.Now().UnixNano()} }

// parallel returns the kmeans.ParallelChunk of c, its descriptors read
// from dir into x (grown as needed), with copies of its D², labels and
// candidates: the input element is not ours to modify.
func (c seedChunk) parallel(ctx context.Context, dir string, x []float32) (*kmeans.ParallelChunk, error) {
	desc, err := readDesc(ctx, dir, c.C)
	if err != nil {
		return nil, err
	}
	x = floatsInto(x, desc)
	if c.D2 == nil {
		return kmeans.NewParallelChunk(x, formats.DescriptorSize, c.C.Lo), nil
	}
	return &kmeans.ParallelChunk{Data: x, Dim: formats.DescriptorSize, Offset: c.C.Lo,
		D2: slices.Clone(c.D2), Label: slices.Clone(c.Label), Cand: slices.Clone(c.Cand)}, nil
}

// view returns the kmeans.ParallelChunk of c without its points, sharing
// c's D², labels and candidates, for the steps that only read them (First,
// Sample, Farthest): only Lower needs the points and copies that it may
// write, which parallel makes.
func (c seedChunk) view() *kmeans.ParallelChunk {
	const d = formats.DescriptorSize
	pc := &kmeans.ParallelChunk{Dim: d, Offset: c.C.Lo, D2: c.D2, Label: c.Label, Cand: c.Cand}
	if pc.D2 == nil {
		// Before the first candidate, every D² is +∞ (NewParallelChunk).
		pc.D2 = slices.Repeat([]float32{float32(math.Inf(1))}, c.C.N)
	}
	return pc
}

// seedCands is a chunk's share of a round's new candidates, in ascending
// order of index, drawn after Base others; D2 holds their D² in the
// top-up round.
type seedCands struct {
	Round, Base int
	Index       []int32
	Desc        []byte
	D2          []float32
}

// roundCandidates returns the candidates of round r among shares, in
// ascending order of index with their descriptors, and the candidates
// drawn before them. In the top-up round, of the shares' farthest points
// it keeps the topUp farthest of all.
func roundCandidates(shares []seedCands, r, topUp int) (idx []int32, desc []byte, base int) {
	const d = formats.DescriptorSize
	var mine []seedCands
	for _, c := range shares {
		if c.Round == r {
			mine = append(mine, c)
		}
	}
	if len(mine) == 0 {
		return nil, nil, 0
	}
	rows := map[int32][]byte{}
	var far []kmeans.ParallelFar
	for _, c := range mine {
		for j, g := range c.Index {
			rows[g] = c.Desc[j*d : (j+1)*d]
			idx = append(idx, g)
			if topUp > 0 {
				far = append(far, kmeans.ParallelFar{Index: g, D2: c.D2[j]})
			}
		}
	}
	if topUp > 0 {
		idx = kmeans.TopFarthest(far, topUp)
	} else {
		slices.Sort(idx)
	}
	for _, g := range idx {
		desc = append(desc, rows[g]...)
	}
	return idx, desc, mine[0].Base
}

// seedSampleFn draws a chunk's share of the candidates of a round: the
// first point in round 0, else by D² with φ of the round before.
type seedSampleFn struct {
	Round int
	Seed  uint64
	Ell   float64
	Dir   string
}

func (f *seedSampleFn) ProcessElement(ctx context.Context, c seedChunk, phi seedPhi, emit func(seedCands)) error {
	pc := c.view()
	var idx []int32
	if f.Round == 0 {
		idx = pc.First(c.C.Total, f.Seed)
	} else if v := phi.Phi.Value(); v > 0 {
		idx = pc.Sample(f.Seed, f.Round, f.Ell/v)
	}
	if len(idx) == 0 {
		return nil
	}
	desc, err := shareDesc(ctx, f.Dir, c, idx)
	if err != nil {
		return err
	}
	emit(seedCands{Round: f.Round, Base: c.Cands, Index: idx, Desc: desc})
	return nil
}

// shareDesc returns the descriptors of c of global indices idx, read
// from dir.
func shareDesc(ctx context.Context, dir string, c seedChunk, idx []int32) ([]byte, error) {
	const d = formats.DescriptorSize
	all, err := readDesc(ctx, dir, c.C)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(idx)*d)
	for _, g := range idx {
		i := int(g) - c.C.Lo
		out = append(out, all[i*d:(i+1)*d]...)
	}
	return out, nil
}

// seedFarthestFn offers a chunk's farthest points for the top-up, when
// the rounds drew fewer than K candidates.
type seedFarthestFn struct {
	Round, K int
	Dir      string
}

func (f *seedFarthestFn) ProcessElement(ctx context.Context, c seedChunk, emit func(seedCands)) error {
	m := f.K - c.Cands
	if m <= 0 {
		return nil
	}
	far := c.view().Farthest(m)
	sc := seedCands{Round: f.Round, Base: c.Cands}
	for _, p := range far {
		sc.Index = append(sc.Index, p.Index)
		sc.D2 = append(sc.D2, p.D2)
	}
	desc, err := shareDesc(ctx, f.Dir, c, sc.Index)
	if err != nil {
		return err
	}
	sc.Desc = desc
	emit(sc)
	return nil
}

// candSlot holds the index over the latest round's candidates built in
// this process: every bundle of a round needs the same one.
var candSlot struct {
	sync.Mutex
	key   candKey
	cands *kmeans.ParallelCandidates
}

type candKey struct {
	round, base, n int
	seed, fp       uint64
}

// seedLowerFn lowers every chunk's D² to the round's new candidates and
// emits the chunk and its φ.
type seedLowerFn struct {
	Round int
	Seed  uint64
	K     int
	TopUp bool
	Dir   string

	// Per bundle.
	ready bool
	cands *kmeans.ParallelCandidates
	n     int
	base  int
	x     []float32 // a chunk's points, reused from chunk to chunk
}

func (f *seedLowerFn) ProcessElement(ctx context.Context, c seedChunk, side func(*seedCands) bool, emit func(seedChunk), emitPhi func(seedPhi)) error {
	if !f.ready {
		var shares []seedCands
		var sc seedCands
		for side(&sc) {
			shares = append(shares, sc)
		}
		topUp := 0
		if f.TopUp {
			topUp = max(f.K-c.Cands, 0)
		}
		idx, desc, base := roundCandidates(shares, f.Round, topUp)
		if len(idx) > 0 {
			f.cands = cachedCandidates(f.Round, desc, idx, base, f.Seed)
		}
		f.n, f.base, f.ready = len(idx), base, true
	}
	pc, err := c.parallel(ctx, f.Dir, f.x)
	if err != nil {
		return err
	}
	if f.n > 0 {
		if f.base != c.Cands {
			return fmt.Errorf("vocabulary: seeding round %d: candidates drawn after %d, the chunk has seen %d", f.Round, f.base, c.Cands)
		}
		pc.Lower(f.cands)
		c.Cands += f.n
	}
	f.x = pc.Data
	c.D2, c.Label, c.Cand = pc.D2, pc.Label, pc.Cand
	emitPhi(seedPhi{Phi: pc.Phi(), Cands: c.Cands, Start: c.Start})
	emit(c)
	return nil
}

func (f *seedLowerFn) FinishBundle(_ func(*seedCands) bool, _ func(seedChunk), _ func(seedPhi)) {
	*f = seedLowerFn{Round: f.Round, Seed: f.Seed, K: f.K, TopUp: f.TopUp, Dir: f.Dir}
}

// cachedCandidates returns the index over the candidates desc of round
// r (of global indices idx, drawn after base), from candSlot if it holds
// them.
func cachedCandidates(r int, desc []byte, idx []int32, base int, seed uint64) *kmeans.ParallelCandidates {
	x := byteFloats(desc)
	key := candKey{r, base, len(idx), seed, fingerprint(x)}
	candSlot.Lock()
	defer candSlot.Unlock()
	if candSlot.cands != nil && candSlot.key == key {
		return candSlot.cands
	}
	candSlot.cands = nil // let the old index go before building the new one
	candSlot.key, candSlot.cands = key, kmeans.NewParallelCandidates(x, formats.DescriptorSize, idx, base, seed)
	return candSlot.cands
}

// seedPhi is φ of a set of chunks after a round, exact, with the
// candidates drawn so far (the same in every chunk) and the start of the
// seeding.
type seedPhi struct {
	Phi   kmeans.ParallelPhi
	Cands int
	Start int64
}

// seedPhiFn merges φ.
type seedPhiFn struct{}

func (seedPhiFn) CreateAccumulator() seedPhi             { return seedPhi{} }
func (seedPhiFn) AddInput(a, b seedPhi) seedPhi          { return mergePhi(a, b) }
func (seedPhiFn) MergeAccumulators(a, b seedPhi) seedPhi { return mergePhi(a, b) }
func (seedPhiFn) ExtractOutput(a seedPhi) seedPhi        { return a }

func mergePhi(a, b seedPhi) seedPhi {
	a.Phi.Merge(b.Phi)
	a.Cands, a.Start = max(a.Cands, b.Cands), max(a.Start, b.Start)
	return a
}

// seedPhiPassFn passes φ of a round on and writes the round's progress
// line.
type seedPhiPassFn struct{ Round, Rounds, K int }

func (f *seedPhiPassFn) ProcessElement(ctx context.Context, _ []byte, phi seedPhi, emit func(seedPhi)) {
	emit(phi)
	if f.Round == 0 || f.Round > f.Rounds {
		return
	}
	lines := progressLines(progress.Default, f.K, time.Unix(0, phi.Start), time.Now, func(format string, a ...any) { log.Infof(ctx, format, a...) })
	lines(kmeans.Progress{Seeding: true, K: f.K, Round: f.Round, Rounds: f.Rounds, Candidates: phi.Cands})
}

// seedCandsPassFn passes a round's candidates on.
type seedCandsPassFn struct{}

func (seedCandsPassFn) ProcessElement(_ []byte, side func(*seedCands) bool, emit func(seedCands)) {
	var c seedCands
	for side(&c) {
		emit(c)
		c = seedCands{}
	}
}

// seedCounts counts the points nearest to the candidates of the block
// b, its key: Count[j] are nearest to candidate b·countBlock + j.
type seedCounts struct {
	Count []int64
	Start int64
}

// countBlock is the number of candidates whose counts share a key, so
// that an element of counts stays within about a quarter of a megabyte.
const countBlock = 32768

// seedCountFn counts a chunk's descriptors by nearest candidate, keyed by
// block of candidates.
type seedCountFn struct{}

func (seedCountFn) ProcessElement(c seedChunk, emit func(int, seedCounts)) {
	blocks := map[int]*seedCounts{}
	for _, l := range c.Label {
		b, j := int(l)/countBlock, int(l)%countBlock
		cur := blocks[b]
		if cur == nil {
			cur = &seedCounts{Start: c.Start}
			blocks[b] = cur
		}
		if j >= len(cur.Count) {
			cur.Count = append(cur.Count, make([]int64, j+1-len(cur.Count))...)
		}
		cur.Count[j]++
	}
	for b, cur := range blocks {
		emit(b, *cur)
	}
}

// seedCountsFn adds counts.
type seedCountsFn struct{}

func (seedCountsFn) CreateAccumulator() seedCounts                { return seedCounts{} }
func (seedCountsFn) AddInput(a, b seedCounts) seedCounts          { return addCounts(a, b) }
func (seedCountsFn) MergeAccumulators(a, b seedCounts) seedCounts { return addCounts(a, b) }
func (seedCountsFn) ExtractOutput(a seedCounts) seedCounts        { return a }

// addCounts adds the counts of one block, a and b.
func addCounts(a, b seedCounts) seedCounts {
	if len(a.Count) < len(b.Count) {
		a, b = b, a
	}
	out := seedCounts{Count: slices.Clone(a.Count), Start: max(a.Start, b.Start)}
	for j, n := range b.Count {
		out.Count[j] += n
	}
	return out
}

// seedFinishFn gathers the candidates of every round, in the order drawn,
// chooses the K initial centroids among them by the weighted k-means++
// and emits the initial state (emitInitial).
type seedFinishFn struct {
	Opt    Options
	Rounds int
	// Dir and Words are emitInitial's; Words is initialWords, as
	// initFn's.
	Dir   string
	Words int
}

func (f *seedFinishFn) ProcessElement(ctx context.Context, _ []byte, side func(*seedCands) bool, countSide func(*int, *seedCounts) bool, emit func(state)) error {
	const d = formats.DescriptorSize
	var shares []seedCands
	var sc seedCands
	for side(&sc) {
		shares = append(shares, sc)
	}
	var desc []byte
	n := 0
	for r := 0; r <= f.Rounds+1; r++ {
		topUp := 0
		if r > f.Rounds {
			topUp = max(f.Opt.K-n, 0)
		}
		idx, dr, base := roundCandidates(shares, r, topUp)
		if len(idx) > 0 && base != n {
			return fmt.Errorf("vocabulary: seeding round %d: candidates drawn after %d, %d gathered", r, base, n)
		}
		n += len(idx)
		desc = append(desc, dr...)
	}
	if n < f.Opt.K {
		return fmt.Errorf("vocabulary: seeding gathered %d candidates for %d words", n, f.Opt.K)
	}
	weight := make([]float64, n)
	var (
		key     int
		counts  seedCounts
		sampled int64
		started int64
	)
	for countSide(&key, &counts) {
		for j, c := range counts.Count {
			if c == 0 {
				continue
			}
			g := key*countBlock + j
			if g >= n {
				return fmt.Errorf("vocabulary: seeding counted descriptors nearest to candidate %d of %d", g, n)
			}
			weight[g] += float64(c)
			sampled += c
		}
		started = max(started, counts.Start)
	}
	pts := byteFloats(desc)
	start := time.Unix(0, started)
	lines := progressLines(progress.Default, f.Opt.K, start, time.Now, func(format string, a ...any) { log.Infof(ctx, format, a...) })
	cent := kmeans.ParallelFinish(pts, d, f.Opt.K, weight, f.Opt.Seed, func(j int) { lines(kmeans.Progress{Seeding: true, Seeded: j, K: f.Opt.K}) })
	log.Infof(ctx, "vocabulary: %d initial centroids from %d descriptors (%d candidates) in %.1fs", f.Opt.K, sampled, n, time.Since(start).Seconds())
	return emitInitial(ctx, f.Dir, f.Words, initialState(f.Opt, cent, int(sampled), start), emit)
}
