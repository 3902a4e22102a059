package bowbeam

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/nn"
)

// ivfCodebook returns an approximate vocabulary of k random words searched
// through an IVF, as --akm trains one.
func ivfCodebook(k int) book {
	r := rand.New(rand.NewPCG(3, 4))
	c := make([]float32, k*formats.DescriptorSize)
	for i := range c {
		c[i] = float32(r.IntN(256))
	}
	return book{Codebook: kmeansbeam.Codebook{K: k, Dim: formats.DescriptorSize,
		Approx: true, Forest: nn.DefaultForestOptions(), UseIVF: true, IVF: nn.DefaultIVFOptions()}, Centroids: c}
}

// codebookFileOf writes cb's words to a codebook file under a fresh
// directory and returns its codebookFile.
func codebookFileOf(t *testing.T, cb book) codebookFile {
	t.Helper()
	f, err := fileOf(cb.file(t), false)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The DoFn instances of a process that quantise against one vocabulary
// share one copy of its words, forest and IVF, read from the codebook
// file once: the second instance reads no file (the file is gone by then)
// and allocates only its quantizers' scratch, not another copy of the
// words (4 MB here), and quantises alike. The searches go once no
// instance holds them.
func TestQuantizersShareSearches(t *testing.T) {
	ctx := context.Background()
	cb := ivfCodebook(8192)
	f := codebookFileOf(t, cb)
	words := int64(len(cb.Centroids)) * 4
	var s1, s2 *searches
	var first, second []*bow.Quantizer
	var err error
	a := allocated(func() { s1, first, err = loadQuantizers(ctx, f, bow.SoftOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s1.centroids, cb.Centroids) {
		t.Fatal("the words read from the codebook file are not the codebook's")
	}
	if err := os.Remove(f.CB.Paths[0]); err != nil {
		t.Fatal(err)
	}
	runtime.GC() // the first instance's searches survive while it holds them
	b := allocated(func() { s2, second, err = loadQuantizers(ctx, f, bow.SoftOptions{}) })
	if err != nil {
		t.Fatalf("a second instance read the codebook file again: %v", err)
	}
	if a < uint64(words) {
		t.Fatalf("the first quantizers allocated %d bytes, less than the %d bytes of an IVF's packed words", a, words)
	}
	if b > uint64(words)/8 {
		t.Errorf("quantizers of the same codebook allocated %d bytes (the first %d): want the process's searches reused, not built again", b, a)
	}
	desc := make([]byte, 50*formats.DescriptorSize)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	if x, y := first[0].Quantize(desc), second[len(second)-1].Quantize(desc); !slices.Equal(x.Idx, y.Idx) || !slices.Equal(x.Val, y.Val) {
		t.Errorf("shared searches quantise %v, the first %v", y, x)
	}
	if s1 != s2 {
		t.Errorf("two instances hold searches %p and %p of one vocabulary", s1, s2)
	}

	// Another vocabulary gets searches of its own.
	other := ivfCodebook(8192)
	other.Centroids[0]++
	g := codebookFileOf(t, other)
	if c := allocated(func() { _, _, err = loadQuantizers(ctx, g, bow.SoftOptions{}) }); err != nil || c < uint64(words) {
		t.Errorf("quantizers of another vocabulary allocated %d bytes (err %v): want its own searches built", c, err)
	}

	// Once no instance holds them, the process lets the searches go.
	runtime.GC()
	if shared.last.Value() != nil {
		t.Error("the process still holds searches that no instance holds")
	}
}

// A codebook file whose words are not those the job trained, or that
// lacks a word, fails the read, naming the file.
func TestCodebookFileRefusesOtherWords(t *testing.T) {
	ctx := context.Background()
	_, cb := planted(rand.New(rand.NewPCG(7, 8)))
	f := codebookFileOf(t, cb)
	if got, err := f.CB.ReadCentroids(ctx); err != nil || !slices.Equal(got, cb.Centroids) {
		t.Fatalf("read() = %d values, %v; want the codebook's %d", len(got), err, len(cb.Centroids))
	}
	changed := cb
	changed.Centroids = slices.Clone(cb.Centroids)
	changed.Centroids[5]++
	other := f
	other.CB.Paths = codebookFileOf(t, changed).CB.Paths
	if _, err := other.CB.ReadCentroids(ctx); err == nil || !strings.Contains(err.Error(), other.CB.Paths[0]) || !strings.Contains(err.Error(), "not the job's") {
		t.Errorf("words of another content: error %v, want one naming %s", err, other.CB.Paths[0])
	}
	bigger := f
	bigger.CB.K++
	if _, err := bigger.CB.ReadCentroids(ctx); err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), f.CB.Paths[0]) {
		t.Errorf("a word short: error %v, want one naming the file and the missing word", err)
	}
}

// The quantising steps take the codebook, and the decision to carry
// counts, with each part rather than as side inputs (package onekeybeam:
// Prism spins about a core beside each of their long bundles).
func TestQuantisingStepsTakeNoSideInputs(t *testing.T) {
	feats, cb := planted(rand.New(rand.NewPCG(1, 2)))
	for _, tc := range []struct {
		fn    any
		build func(s beam.Scope, parts, codebook beam.PCollection)
	}{
		{(*countPartFn)(nil), func(s beam.Scope, parts, codebook beam.PCollection) {
			BoWOfParts(s, parts, codebook, Options{}, t.TempDir())
		}},
		{(*carryCountPartFn)(nil), func(s beam.Scope, parts, codebook beam.PCollection) {
			BoWOfPartsCarrying(s, parts, codebook, Options{}, t.TempDir(), Previous{}, beam.Create(s, true))
		}},
	} {
		p, s := beam.NewPipelineWithRoot()
		tc.build(s, beam.CreateList(s, featureParts(t, feats, 2)), beam.Create(s, cb.file(t)))
		if got := testkitbeam.SideInputs(t, p, tc.fn); !slices.Equal(got, []int{0}) {
			t.Errorf("%T has %v side inputs, want [0]", tc.fn, got)
		}
	}
}

// A quantising bundle reads the codebook file, a copy of the vocabulary,
// only once it holds one of the process's part slots, so that bundles
// waiting for a slot hold no vocabulary.
func TestCountPartReadsCodebookInItsSlot(t *testing.T) {
	const loads = 1
	ctx := context.Background()
	release, err := slots.Acquire(ctx, "bow.part", loads)
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), formats.ShardName("codebook", 0, 1))
	cf := codebookFile{CB: kmeansbeam.Codebook{Paths: []string{missing}, Content: "sha256:none", K: 1, Dim: formats.DescriptorSize}}
	wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	none := func(formats.Part) {}
	fns := map[string]func(context.Context) error{
		"countPartFn": func(ctx context.Context) error {
			return (&countPartFn{Loads: loads}).ProcessElement(ctx, formats.Part{}, cf, none, none, func(DF) {})
		},
		"carryCountPartFn": func(ctx context.Context) error {
			return (&carryCountPartFn{Loads: loads}).ProcessElement(ctx, formats.Part{Rows: 1}, cf, none, none, func(DF) {})
		},
	}
	for name, fn := range fns {
		if err := fn(wait); err == nil || strings.Contains(err.Error(), missing) {
			t.Errorf("%s: error %v while every slot is held, want one that is not about the codebook file", name, err)
		}
	}
	release()
	for name, fn := range fns {
		if err := fn(ctx); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("%s: error %v once it has a slot, want one naming the missing codebook file", name, err)
		}
	}
}
