package kmeansbeam

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*loopFn)(nil)).Elem())
}

// A training whose iterations are small (Options.OneStepWork) runs all of
// them in one step of the graph, loopFn, rather than as the unrolled
// stages of the package documentation: on Prism those stages cost more
// than the work they carry (its scheduler took about half of the CPU of a
// 10⁴-word build from 5·10⁵ descriptors). The step runs the same pieces in
// the same order — the assignment of each chunk (chunkWork.assign, its
// labels in the scratch files), the exact integer sums, the plan
// (planFn.plan) and the update with its splits — so its codebook is the
// distributed stages' bit for bit. It keeps the integer sums from one
// iteration to the next and adds to them only the descriptors that
// changed cluster (few once the first iterations are over: about 0.2%
// of them from the 20th on at 10⁴ words), which it can because the sums
// are exact. It holds what one assigning worker and the update of all K
// words hold: the centroids and their index, the changes of up to K
// words' sums per goroutine (1,036 bytes a word each), the integer sums
// of the iteration (1,032 bytes a word), their float64 copy for the
// update, one chunk per goroutine and the sample's labels (4 bytes a
// descriptor, which the distributed stages pass in files); never the
// sample's descriptors, which stay in the chunks' files.

// DefaultOneStepWork is the default Options.OneStepWork: every vocabulary
// of up to kmeans.KMeansPPMaxK words from its default sample
// (DefaultSample: at most 10⁶ descriptors there) runs its iterations in
// one step; 10⁵ words from 5·10⁶ (5·10¹¹) are distributed. One step of
// 10⁴ words from 5·10⁵ descriptors costs about 1.5 CPU s an iteration
// (IVF, 4 probes: DefaultTrainProbes).
const DefaultOneStepWork = 20_000_000_000

// oneStep reports whether o's Lloyd iterations run in one step, loopFn.
func (o Options) oneStep() bool {
	w := o.OneStepWork
	if w == 0 {
		w = DefaultOneStepWork
	}
	return w > 0 && int64(o.K)*int64(o.sample()) <= w
}

// loopFn runs Lloyd's iterations from the initial state, in parts, over
// the chunks of the sample, their descriptors in the scratch directory Dir,
// on GOMAXPROCS goroutines that each assign whole chunks, writes the
// codebook's words to Output and returns the codebook; it removes Dir. The
// state's parts and the chunks' names come grouped under one key as its
// one element (onekeybeam.Group), not as side inputs, which Prism would
// spin a core on for the whole training (onekeybeam's package
// documentation).
type loopFn struct {
	MaxIter int
	Tol     float64
	Dir     string
	Output  string
	Approx  bool
	Forest  nn.ForestOptions
	UseIVF  bool
	IVF     nn.IVFOptions
}

func (f *loopFn) ProcessElement(ctx context.Context, _ int, parts func(*state) bool, names func(*chunk) bool) (Codebook, error) {
	st, ok, err := readState(parts)
	if err != nil {
		return Codebook{}, err
	}
	if !ok {
		return Codebook{}, fmt.Errorf("vocabulary: no initial centroids")
	}
	if st.Dim != formats.DescriptorSize {
		return Codebook{}, fmt.Errorf("vocabulary: initial centroids of dimension %d, want %d", st.Dim, formats.DescriptorSize)
	}
	var chunks []chunk
	var c chunk
	for names(&c) {
		chunks = append(chunks, c)
	}
	slices.SortFunc(chunks, func(a, b chunk) int { return a.Index - b.Index })
	descs := beam.NewCounter("kmeans", "descriptors_assigned")
	search := kmeans.AssignOptions{Approx: f.Approx, Forest: f.Forest, UseIVF: f.UseIVF, IVF: f.IVF}
	var sums partial // of the latest iteration
	labels := make([][]int32, len(chunks))
	for !st.Converged {
		a, err := kmeans.NewAssigner(st.Centroids, st.Dim, search.ForIteration(st.Iter))
		if err != nil {
			return Codebook{}, fmt.Errorf("vocabulary: iteration %d: %w", st.Iter, err)
		}
		moves, err := f.assignAll(ctx, st, a, chunks, labels)
		if err != nil {
			return Codebook{}, err
		}
		// The sums of this iteration are those of the previous one
		// changed by the descriptors that moved; its totals are the
		// moves' own, which count every descriptor.
		sums.Iter, sums.N, sums.Changed, sums.SSE = moves.Iter, 0, 0, 0
		sums = merge(sums, moves)
		descs.Inc(ctx, sums.N)
		pl, err := (&planFn{Iter: st.Iter, MaxIter: f.MaxIter, Tol: f.Tol}).plan(ctx, st, allCounts(sums, st.K))
		if err != nil {
			return Codebook{}, err
		}
		if pl.Update {
			updateAll(st.Centroids, sums, pl.Splits)
		}
		next := pl.Next
		next.Centroids = st.Centroids
		st = next
		if !pl.Update {
			break
		}
	}
	return finish(ctx, f.Dir, f.Output, st, len(chunks), wholeBlock(st.Centroids))
}

// assignAll assigns every chunk in iteration st.Iter through a, the chunks
// shared out among GOMAXPROCS goroutines, chunk i's labels kept in
// labels[i] from one iteration to the next, and returns how the descriptors
// moved (chunkWork.assign with labels held), words ascending: exact
// integers, so they do not depend on which goroutine took which chunk.
func (f *loopFn) assignAll(ctx context.Context, st state, a *kmeans.Assigner, chunks []chunk, labels [][]int32) (partial, error) {
	w := max(1, min(runtime.GOMAXPROCS(0), len(chunks)))
	parts := make([]partial, w)
	errs := make([]error, w)
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := range w {
		wg.Go(func() {
			var cw chunkWork
			sums := bundleSums{dim: st.Dim, slot: slices.Repeat([]int32{-1}, st.K)}
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) || ctx.Err() != nil {
					break
				}
				if err := cw.assign(ctx, f.Dir, chunks[i], st.Iter, f.MaxIter, a, &sums, 1, &labels[i]); err != nil {
					errs[g] = err
					next.Store(int64(len(chunks))) // the others stop after their chunk
					return
				}
			}
			parts[g] = sums.flush(st.Iter)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return partial{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return partial{}, fmt.Errorf("vocabulary: iteration %d: %w", st.Iter, err)
	}
	var total partial
	for _, p := range parts {
		total = merge(total, p)
	}
	return total, nil
}

// allCounts yields the counts of the sums p of all k words as the one
// shard a plan reads.
func allCounts(p partial, k int) func(*shardCounts) bool {
	done := false
	return func(c *shardCounts) bool {
		if done {
			return false
		}
		*c = shardCounts{Iter: p.Iter, Count: make([]int64, k), N: p.N, Changed: p.Changed, SSE: p.SSE}
		for j, w := range p.Words {
			c.Count[w] = p.Count[j]
		}
		done = true
		return true
	}
}

// updateAll sets the centroids cent of all K words to the means of their
// clusters' sums and applies the plan's splits: what shardFn and
// splitRowsFn do shard by shard.
func updateAll(cent []float32, sums partial, splits []kmeans.SplitPair) {
	d := sums.Dim
	k := len(cent) / d
	all := kmeans.NewSums(k, d)
	for j, w := range sums.Words {
		all.AddCluster(int(w), sums.Count[j], sums.Sum[j*d:(j+1)*d])
	}
	kmeans.Update(cent, all)
	kmeans.ApplySplits(splits, d, func(c int) []float32 { return cent[c*d : (c+1)*d] })
}
