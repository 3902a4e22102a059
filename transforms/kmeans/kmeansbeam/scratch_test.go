package kmeansbeam

import (
	"context"
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
	beam.ParDo0(s, &chunksFn{Want: 3}, VocabularyOfParts(s.Scope("whole"), in, whole))
	beam.ParDo0(s, &chunksFn{Want: 4}, VocabularyOfParts(s.Scope("parts"), in, parts))
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
		var parts []state
		st.parts(func(p state) { parts = append(parts, p) })
		side := func(p *state) bool {
			if len(parts) == 0 {
				return false
			}
			*p, parts = parts[0], parts[1:]
			return true
		}
		var sums partial
		f := &assignFn{Iter: iter, Last: 5, Dir: dir, Words: k}
		if err := f.ProcessElement(ctx, c, side, func(chunk) {}, func(_ int, p partial) { sums = merge(sums, p) }); err != nil {
			t.Fatal(err)
		}
		f.FinishBundle(side, func(chunk) {}, func(_ int, p partial) { sums = merge(sums, p) })
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
