package kmeansbeam

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/kmeans"
)

// partsReference is what a sample drawn in parts trains to: the seeding
// on the sample's first opt.seedSample() descriptors, then Lloyd's
// iterations of kmeans.TrainFrom on the whole sample.
func partsReference(t *testing.T, feats []formats.Features, opt Options) refBook {
	t.Helper()
	whole, seeding := opt, opt
	whole.Sample = opt.sample()
	seeding.Sample = opt.seedSample()
	smp, prefix := localSample(feats, whole), localSample(feats, seeding)
	if !slices.Equal(prefix.Prio, smp.Prio[:len(prefix.Prio)]) {
		t.Fatalf("the seeding sample of %d is not a prefix of the sample of %d", len(prefix.Prio), len(smp.Prio))
	}
	seed, err := floats(prefix, opt.K)
	if err != nil {
		t.Fatal(err)
	}
	data, err := floats(smp, opt.K)
	if err != nil {
		t.Fatal(err)
	}
	cent, err := kmeans.Initialize(seed, formats.DescriptorSize, opt.kmeans())
	if err != nil {
		t.Fatal(err)
	}
	res, err := kmeans.TrainFrom(data, formats.DescriptorSize, cent, opt.kmeans())
	if err != nil {
		t.Fatal(err)
	}
	return codebookOf(res, len(smp.Prio), opt)
}

// A sample larger than WholeSample is drawn part by part, chunks read from
// the parts, and trains to the codebook of its whole sample seeded on the
// sample's first max(K, WholeSample) descriptors — with more descriptors
// than the sample, with fewer, approximate or exact, chunks asked for or
// not — and gated off it trains nothing.
func TestVocabularySampleInParts(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	feats := features(80, r)
	all := 0
	for _, f := range feats {
		all += len(f.Descriptors)
	}
	p, s := beam.NewPipelineWithRoot()
	parts := beam.CreateList(s, writeParts(t, feats, t.TempDir(), 4))
	for i, opt := range []Options{
		{K: 20, Sample: 900, WholeSample: 100, MaxIter: 4, Seed: 3, Approx: true, Init: kmeans.InitRandom},
		{K: 30, Sample: 600, WholeSample: 10, MaxIter: 4, Seed: 4, Chunks: 5},
		{K: 20, Sample: 10 * all, WholeSample: 300, MaxIter: 3, Seed: 5, Approx: true},
	} {
		if !opt.inParts() || opt.seedSample() >= min(opt.Sample, all) {
			t.Fatalf("case %d: sample %d, seeding %d: not drawn in parts with a seeding prefix", i, opt.Sample, opt.seedSample())
		}
		want := partsReference(t, feats, opt)
		if want.Sampled != min(opt.Sample, all) {
			t.Fatalf("case %d: reference sampled %d of %d descriptors, want %d", i, want.Sampled, all, min(opt.Sample, all))
		}
		name := fmt.Sprintf("case %d", i)
		opt.Output = t.TempDir()
		cb := VocabularyOfParts(s.Scope(name), parts, opt)
		beam.ParDo0(s, &checkFn{Name: name, Want: want, ObjTol: 1e-6}, cb)
		// The iterations as the graph's stages rather than in one step.
		staged := opt
		staged.OneStepWork, staged.Output = -1, t.TempDir()
		cb = VocabularyOfParts(s.Scope(name+" staged"), parts, staged)
		beam.ParDo0(s, &checkFn{Name: name + " staged", Want: want, ObjTol: 1e-6}, cb)
		opt.Output = t.TempDir()
		gated := VocabularyOfPartsIf(s.Scope(name+" gated"), parts, opt, beam.Create(s, true))
		beam.ParDo0(s, &checkFn{Name: name + " gated", Want: want, ObjTol: 1e-6}, gated)
		opt.Output = t.TempDir()
		passert.Empty(s, VocabularyOfPartsIf(s.Scope(name+" off"), parts, opt, beam.Create(s, false)))
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// The threshold of merged priorities is the n-th smallest, whatever the
// grouping, and counts the ties at it; so is the seeding sample's.
func TestMergePrios(t *testing.T) {
	f := &mergePriosFn{Max: 4, Seed: 2}
	a := prios{P: []uint64{1, 5, 9}}
	b := prios{P: []uint64{2, 5, 5, 7}}
	c := prios{P: []uint64{3}}
	for _, acc := range []prios{
		f.MergeAccumulators(f.MergeAccumulators(a, b), c),
		f.MergeAccumulators(a, f.MergeAccumulators(c, b)),
		f.AddInput(f.AddInput(f.CreateAccumulator(), c), f.MergeAccumulators(b, a)),
	} {
		if got := f.ExtractOutput(acc); got != (threshold{Prio: 5, Count: 6, SeedPrio: 2}) {
			t.Errorf("threshold %+v, want the 4th smallest, 5, with the 6 at or under it, and the 2nd, 2", got)
		}
	}
	if got := (&mergePriosFn{Max: 10, Seed: 5}).ExtractOutput(prios{P: []uint64{4, 8}}); got != (threshold{Prio: 8, Count: 2, SeedPrio: 8}) {
		t.Errorf("fewer than Max: threshold %+v, want {8 2}", got)
	}
	if got := f.ExtractOutput(prios{}); got != (threshold{}) {
		t.Errorf("none: threshold %+v, want zero", got)
	}
}

// An assigning bundle's sums leave, as files of a word shard each, before
// they would pass Rows rows, so a bundle of many chunks never holds more,
// and the files add up to the sums of the same bundle unbounded, the
// totals counted once.
func TestAssignBoundsBundleSums(t *testing.T) {
	const k, d, words, rows = 60, formats.DescriptorSize, 7, 5
	ctx := context.Background()
	r := rand.New(rand.NewPCG(51, 52))
	st := state{K: k, Dim: d, Centroids: make([]float32, k*d), Sampled: 400}
	for i := range st.Centroids {
		st.Centroids[i] = float32(r.IntN(256))
	}
	dir := t.TempDir()
	head := writeTestState(t, dir, st)
	for c := range 20 {
		desc := make([]byte, 20*d)
		for i := range desc {
			desc[i] = byte(r.IntN(256))
		}
		if err := writeDesc(ctx, dir, c, desc); err != nil {
			t.Fatal(err)
		}
	}
	// assign assigns the 20 chunks in one bundle and returns the records
	// of its files by word shard.
	assign := func(words, rows int) map[int][]sumsFile {
		f := &assignFn{Words: words, Rows: rows, Dir: dir}
		recs := map[int][]sumsFile{}
		emitSums := func(shard int, rec sumsFile) {
			if rows > 0 && len(f.sums.words) > rows {
				t.Fatalf("the bundle held the sums of %d words, want at most %d", len(f.sums.words), rows)
			}
			recs[shard] = append(recs[shard], rec)
		}
		for c := range 20 {
			if err := f.ProcessElement(ctx, chunk{Index: c, N: 20}, head, func(chunk) {}, emitSums); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.FinishBundle(ctx, func(chunk) {}, emitSums); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	recs := assign(words, rows)
	files := 0
	for shard, rs := range recs {
		for _, rec := range rs {
			if rec.Rows < 1 || rec.Rows > rows || rec.Iter != 0 {
				t.Errorf("word shard %d: a file of %d rows of iteration %d, want 1 to %d of iteration 0", shard, rec.Rows, rec.Iter, rows)
			}
			files++
		}
	}
	got := filesSums(t, dir, 0, words, k, recs)
	want := filesSums(t, dir, 0, k, k, assign(k, 0))
	if files < 400/rows || got.N != 400 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d files summing %d descriptors over %d words (equal to the unbounded bundle's: %v), want more than %d summing 400 over %d",
			files, got.N, len(got.Words), reflect.DeepEqual(got, want), 400/rows, len(want.Words))
	}
}

// The parts of a sample drawn in parts hand the seeding its descriptors
// and no more: the bottom m of the sample between them, not each part's
// bottom m.
func TestPartsSeedOnlyTheSeedingSample(t *testing.T) {
	ctx := context.Background()
	feats := features(60, rand.New(rand.NewPCG(91, 92)))
	const n, m = 600, 50
	opt := Options{Sample: n, Seed: 9}
	smp := localSample(feats, opt)
	thr := threshold{Prio: smp.Prio[n-1], Count: n, SeedPrio: smp.Prio[m-1]}
	f := &partChunksFn{Hash: opt.Seed, Dir: t.TempDir()}
	var seed sample
	chunks := 0
	for _, p := range writeParts(t, feats, t.TempDir(), 3) {
		err := f.ProcessElement(ctx, p, thr, func(c chunk) { chunks += c.N }, func(s sample) {
			seed = (&sampleFn{Max: 1 << 30}).MergeAccumulators(seed, s)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := localSample(feats, Options{Sample: m, Seed: opt.Seed})
	if chunks != n || !slices.Equal(seed.Prio, want.Prio) || !slices.Equal(seed.Desc, want.Desc) {
		t.Errorf("the parts wrote %d descriptors in chunks and handed the seeding %d, want %d and the sample's first %d", chunks, len(seed.Prio), n, m)
	}
}

// A worker process assigns one bundle of an iteration at a time: a second
// bundle waits, holding no sums, until the first has finished, and a bundle
// that fails gives its turn back.
func TestAssignBundlesOneAtATime(t *testing.T) {
	const k, d, n = 8, formats.DescriptorSize, 16
	ctx := context.Background()
	r := rand.New(rand.NewPCG(61, 62))
	st := state{K: k, Dim: d, Centroids: make([]float32, k*d), Sampled: 2 * n}
	for i := range st.Centroids {
		st.Centroids[i] = float32(r.IntN(256))
	}
	dir := t.TempDir()
	head := writeTestState(t, dir, st)
	for c := range 2 {
		desc := make([]byte, n*d)
		for i := range desc {
			desc[i] = byte(r.IntN(256))
		}
		if err := writeDesc(ctx, dir, c, desc); err != nil {
			t.Fatal(err)
		}
	}
	noSums := func(int, sumsFile) {}
	first := &assignFn{Iter: 0, Last: 1, Dir: dir, Words: k, Rows: k}
	if err := first.ProcessElement(ctx, chunk{Index: 0, N: n}, head, func(chunk) {}, noSums); err != nil {
		t.Fatal(err)
	}
	second := &assignFn{Iter: 0, Last: 1, Dir: dir, Words: k, Rows: k}
	done := make(chan error, 1)
	go func() { done <- second.ProcessElement(ctx, chunk{Index: 1, N: n}, head, func(chunk) {}, noSums) }()
	select {
	case err := <-done:
		t.Fatalf("a second bundle assigned (err %v) while the first had not finished", err)
	case <-time.After(200 * time.Millisecond):
	}
	assigned := func(f *assignFn, what string) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal(what)
		}
		if err := f.FinishBundle(ctx, func(chunk) {}, noSums); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.FinishBundle(ctx, func(chunk) {}, noSums); err != nil {
		t.Fatal(err)
	}
	assigned(second, "the second bundle still waits after the first finished")

	failing := &assignFn{Iter: 0, Last: 1, Dir: dir, Words: k, Rows: k}
	if err := failing.ProcessElement(ctx, chunk{Index: 7, N: n}, head, func(chunk) {}, noSums); err == nil {
		t.Fatal("a chunk without its file assigned")
	}
	next := &assignFn{Iter: 0, Last: 1, Dir: dir, Words: k, Rows: k}
	go func() { done <- next.ProcessElement(ctx, chunk{Index: 0, N: n}, head, func(chunk) {}, noSums) }()
	assigned(next, "a bundle waits for one that failed")
}

// The first pass over a part draws from the rows' heads the priorities
// the descriptors have (priorities), and the second refuses a row whose
// descriptors are not one of DescriptorSize bytes a keypoint, naming it,
// rather than sampling other descriptors than the first pass counted.
func TestPartPriosFromHeads(t *testing.T) {
	ctx := context.Background()
	feats := features(40, rand.New(rand.NewPCG(93, 94)))
	for _, p := range writeParts(t, feats, t.TempDir(), 2) {
		got, err := (&partPriosFn{Max: 1 << 20, Hash: 5}).ProcessElement(ctx, p, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want []uint64
		for _, f := range feats {
			if formats.ShardOf(f.ImageID, 2) == p.Part {
				priorities(5, f, func(prio uint64, _ []byte) { want = append(want, prio) })
			}
		}
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(got.P, want) {
			t.Errorf("part %d: %d priorities from the heads, want the %d of the descriptors", p.Part, len(got.P), len(want))
		}
	}

	d := make([]byte, formats.DescriptorSize)
	for name, bad := range map[string]formats.Features{
		"short descriptor":  {ImageID: "bad", X: []float32{0, 0}, Descriptors: [][]byte{d, d[:5]}},
		"keypoint too many": {ImageID: "bad", X: []float32{0, 0, 0}, Descriptors: [][]byte{d, d}},
	} {
		path := t.TempDir() + "/features-00000-of-00001.parquet"
		if err := fileio.WriteFile(ctx, path, []formats.Features{bad}); err != nil {
			t.Fatal(err)
		}
		p := formats.Part{Name: "features", Parts: 1, Path: path, Rows: 1, Keypoints: 2}
		thr := threshold{Prio: math.MaxUint64, Count: 2}
		err := (&partChunksFn{Hash: 5, Dir: t.TempDir()}).ProcessElement(ctx, p, thr, func(chunk) {}, func(sample) {})
		if err == nil || !strings.Contains(err.Error(), "image bad") {
			t.Errorf("%s: %v, want an error naming image bad", name, err)
		}
	}
}
