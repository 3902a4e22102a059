package kmeansbeam

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
	"github.com/bowline/bowline/transforms/kmeans"
)

// The steps whose bundles run for seconds — the one step of Lloyd's
// iterations, the seeding of a sample drawn in parts, the reading of the
// features parts — take what they need as their main input, grouped or
// paired (onekeybeam), and no side input: Prism spins about a core while a
// bundle of a stage with side inputs runs (see loopFn).
func TestLongStepsHaveNoSideInputs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"loopFn", (*loopFn).ProcessElement, func(*loopFn, context.Context, int, func(*state) bool, func(*chunk) bool) (Codebook, error) {
			return Codebook{}, nil
		}},
		{"initPartsFn", (*initPartsFn).ProcessElement, func(*initPartsFn, context.Context, int, func(*sample) bool, func(*threshold) bool, func(state)) error {
			return nil
		}},
		{"partPriosFn", (*partPriosFn).ProcessElement, func(*partPriosFn, context.Context, formats.Part, int64) (prios, error) { return prios{}, nil }},
		{"partChunksFn", (*partChunksFn).ProcessElement, func(*partChunksFn, context.Context, formats.Part, threshold, func(chunk), func(sample)) error {
			return nil
		}},
		{"samplePartFn", (*samplePartFn).ProcessElement, func(*samplePartFn, context.Context, formats.Part, int64) (sample, error) { return sample{}, nil }},
	} {
		if got, want := reflect.TypeOf(tc.got), reflect.TypeOf(tc.want); got != want {
			t.Errorf("%s.ProcessElement is %v, want %v", tc.name, got, want)
		}
	}
}

// Lloyd's iterations as the graph's stages assign each chunk paired with
// its iteration's state, whose centroids are in a file (writeStateFn): no
// assigning step takes a side input, for the same reason.
func TestAssignTakesNoSideInputs(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	VocabularyOfParts(s, beam.Create(s, formats.Part{}), Options{K: 30, Sample: 1000, MaxIter: 3, Chunks: 4, OneStepWork: -1, Approx: true, Output: t.TempDir()})
	got := testkitbeam.SideInputs(t, p, (*assignFn)(nil))
	if len(got) != 4 {
		t.Errorf("%d assigning steps, want 4 (iterations 0 to MaxIter)", len(got))
	}
	for i, n := range got {
		if n != 0 {
			t.Errorf("the assigning of iteration %d takes %d side inputs, want none", i, n)
		}
	}
}

// TestHeldLabelsAndMoves checks the one-step assignment (loopFn) against
// the graph's: keeping a chunk's labels in memory, it writes no labels to
// the scratch directory, and the moves it adds to the previous
// iteration's sums give, iteration after iteration, the sums and labels
// of assigning the chunk whole with its labels in files.
func TestHeldLabelsAndMoves(t *testing.T) {
	const k, d, n, last = 7, formats.DescriptorSize, 300, 5
	ctx := context.Background()
	r := rand.New(rand.NewPCG(81, 82))
	filesDir, heldDir := t.TempDir(), t.TempDir()
	desc := make([]byte, n*d)
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	c := chunk{Index: 3, N: n}
	for _, dir := range []string{filesDir, heldDir} {
		if err := writeDesc(ctx, dir, c.Index, desc); err != nil {
			t.Fatal(err)
		}
	}
	var files, held chunkWork
	var labels []int32
	var sums partial
	moved := 0
	for iter := range last {
		cent := make([]float32, k*d)
		for i := range cent {
			cent[i] = float32((i*(iter+3) + i/d*(7-iter)) % 256)
		}
		a, err := kmeans.NewAssigner(cent, d, kmeans.AssignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		whole := bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, k)}
		if err := files.assign(ctx, filesDir, c, iter, last, a, &whole, 2, nil); err != nil {
			t.Fatal(err)
		}
		want := whole.flush(iter)
		moves := bundleSums{dim: d, slot: slices.Repeat([]int32{-1}, k)}
		if err := held.assign(ctx, heldDir, c, iter, last, a, &moves, 2, &labels); err != nil {
			t.Fatal(err)
		}
		m := moves.flush(iter)
		if iter > 0 {
			moved += len(m.Words)
		}
		sums.Iter, sums.N, sums.Changed, sums.SSE = iter, 0, 0, 0
		sums = merge(sums, m)
		got := partial{Iter: iter, Dim: d, N: sums.N, Changed: sums.Changed, SSE: sums.SSE}
		for j, w := range sums.Words { // clusters emptied by the moves
			if sums.Count[j] != 0 {
				got.Words, got.Count = append(got.Words, w), append(got.Count, sums.Count[j])
				got.Sum = append(got.Sum, sums.Sum[j*d:(j+1)*d]...)
			} else if slices.ContainsFunc(sums.Sum[j*d:(j+1)*d], func(v int64) bool { return v != 0 }) {
				t.Fatalf("iteration %d: cluster %d left empty by the moves has sums", iter, w)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: the sums carried over plus the moves are not the whole sums", iter)
		}
		if iter < last-1 {
			b, err := os.ReadFile(filepath.Join(filesDir, labelsName(c.Index, iter)))
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range labels {
				if int32(binary.LittleEndian.Uint32(b[4*i:])) != l {
					t.Fatalf("iteration %d: held label %d is %d, the files' %d", iter, i, l, int32(binary.LittleEndian.Uint32(b[4*i:])))
				}
			}
		}
	}
	if moved == 0 {
		t.Fatal("no descriptor moved after the first iteration: the test checks nothing of the moves")
	}
	entries, err := os.ReadDir(heldDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != descName(c.Index) {
		t.Errorf("the scratch directory of held labels holds %d files, want only the chunk's descriptors", len(entries))
	}
}
