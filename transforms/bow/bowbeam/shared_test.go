package bowbeam

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/nn"
)

// ivfCodebook returns an approximate vocabulary of k random words searched
// through an IVF, as --akm trains one.
func ivfCodebook(k int) kmeansbeam.Codebook {
	r := rand.New(rand.NewPCG(3, 4))
	c := make([]float32, k*formats.DescriptorSize)
	for i := range c {
		c[i] = float32(r.IntN(256))
	}
	return kmeansbeam.Codebook{K: k, Dim: formats.DescriptorSize, Centroids: c,
		Approx: true, Forest: nn.DefaultForestOptions(), UseIVF: true, IVF: nn.DefaultIVFOptions()}
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// The DoFn instances of a process that quantise against one vocabulary,
// each with its own decoded copy of the codebook, share one forest and IVF
// of its words: the second instance allocates only its quantizers'
// scratch, not another copy of the words (4 MB here), and quantises
// alike. The searches go once no instance holds them.
func TestQuantizersShareSearches(t *testing.T) {
	cb := ivfCodebook(8192)
	words := int64(len(cb.Centroids)) * 4
	var s1, s2 *searches
	var first, second []*bow.Quantizer
	var err error
	a := allocated(func() { s1, first, err = quantizers(cb, bow.SoftOptions{}, 2) })
	if err != nil {
		t.Fatal(err)
	}
	again := cb
	again.Centroids = slices.Clone(cb.Centroids) // as another instance decodes the side input
	runtime.GC()                                 // the first instance's searches survive while it holds them
	b := allocated(func() { s2, second, err = quantizers(again, bow.SoftOptions{}, 2) })
	if err != nil {
		t.Fatal(err)
	}
	if a < uint64(words) {
		t.Fatalf("the first quantizers allocated %d bytes, less than the %d bytes of an IVF's packed words", a, words)
	}
	if b > uint64(words)/8 {
		t.Errorf("quantizers of an equal codebook allocated %d bytes (the first %d): want the process's searches reused, not built again", b, a)
	}
	desc := make([]byte, 50*formats.DescriptorSize)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	if x, y := first[0].Quantize(desc), second[1].Quantize(desc); !slices.Equal(x.Idx, y.Idx) || !slices.Equal(x.Val, y.Val) {
		t.Errorf("shared searches quantise %v, the first %v", y, x)
	}
	if s1 != s2 {
		t.Errorf("two instances hold searches %p and %p of one vocabulary", s1, s2)
	}

	// Another vocabulary gets searches of its own.
	other := ivfCodebook(8192)
	other.Centroids[0]++
	if c := allocated(func() { _, _, err = quantizers(other, bow.SoftOptions{}, 2) }); err != nil || c < uint64(words) {
		t.Errorf("quantizers of another vocabulary allocated %d bytes (err %v): want its own searches built", c, err)
	}

	// Once no instance holds them, the process lets the searches go.
	runtime.GC()
	if shared.last.Value() != nil {
		t.Error("the process still holds searches that no instance holds")
	}
}

// A quantising bundle reads the codebook side input, a copy of the
// vocabulary, only once it holds one of the process's part slots, so that
// bundles waiting for a slot hold no vocabulary.
func TestCountPartReadsCodebookInItsSlot(t *testing.T) {
	const loads = 1
	ctx := context.Background()
	release, err := slots.Acquire(ctx, "bow.part", loads)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan struct{}, 2)
	codebook := func(cb *kmeansbeam.Codebook) bool {
		read <- struct{}{}
		return false // no codebook: the DoFn fails once it has read it
	}
	wait, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	none := func(formats.Part) {}
	fns := map[string]func(context.Context) error{
		"countPartFn": func(ctx context.Context) error {
			return (&countPartFn{Loads: loads}).ProcessElement(ctx, formats.Part{}, codebook, none, none, func(DF) {})
		},
		"carryCountPartFn": func(ctx context.Context) error {
			return (&carryCountPartFn{Loads: loads}).ProcessElement(ctx, formats.Part{}, codebook, false, none, none, func(DF) {})
		},
	}
	for name, fn := range fns {
		if err := fn(wait); err == nil {
			t.Errorf("%s: no error while every slot is held", name)
		}
		select {
		case <-read:
			t.Errorf("%s read the codebook while waiting for a slot", name)
		default:
		}
	}
	release()
	for name, fn := range fns {
		if err := fn(ctx); err == nil {
			t.Errorf("%s: no error without a codebook", name)
		}
		select {
		case <-read:
		default:
			t.Errorf("%s did not read the codebook once it had a slot", name)
		}
	}
}
