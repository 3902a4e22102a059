package kmeansbeam

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*chunksFn)(nil)).Elem())
}

// chunksFn fails unless the codebook reports Want chunks.
type chunksFn struct{ Want int }

func (f *chunksFn) ProcessElement(cb Codebook) error {
	if cb.Chunks != f.Want {
		return fmt.Errorf("codebook of %d descriptors: %d chunks, want %d", cb.Sampled, cb.Chunks, f.Want)
	}
	return nil
}

// The codebook says how many chunks its sample was cut into, the
// vocabulary's units of work in the report: as many as writeChunksFn made, and
// none on one worker.
func TestCodebookChunks(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	feats := features(6, rand.New(rand.NewPCG(3, 4)))
	opt := Options{K: 5, Sample: 40, MaxIter: 2, Seed: 1}
	n := len(localSample(feats, opt).Prio)
	if n < 3 {
		t.Fatalf("a sample of %d descriptors", n)
	}
	in := beam.CreateList(s, writeParts(t, feats, t.TempDir(), 2))
	for _, chunks := range []int{0, 3} {
		o := opt
		o.Chunks = chunks
		want := 0
		if chunks > 0 {
			want = chunkCount(chunks, n)
		}
		o.Output = t.TempDir()
		beam.ParDo0(s, &chunksFn{Want: want}, VocabularyOfParts(s, in, o))
		o.OneStepWork = -1 // the iterations as the graph's stages
		o.Output = t.TempDir()
		beam.ParDo0(s, &chunksFn{Want: want}, VocabularyOfParts(s, in, o))
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if chunkCount(3, n) != 3 {
		t.Errorf("chunkCount(3, %d) = %d", n, chunkCount(3, n))
	}
}
