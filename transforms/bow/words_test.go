package bow

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

// QuantizeWords gives Quantize's counts and, for each descriptor in order,
// the word a hard quantiser of the same search gives it alone: exactly,
// through a forest, through an IVF, and under soft assignment (whose
// counts are soft and whose words stay hard).
func TestQuantizeWords(t *testing.T) {
	const k, dim, n = 50, 128, 200
	centroids, desc := randomWords(rand.New(rand.NewPCG(9, 10)), k, dim, n)
	forest, err := nn.NewForest(centroids, dim, nn.ForestOptions{Trees: 2, LeafSize: 4, Checks: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ivf, err := kmeans.TrainIVF(centroids, dim, nn.IVFOptions{Lists: 10, Probes: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// quantizer returns a quantiser of the named search, and with soft a soft
	// one.
	quantizer := func(search string, soft bool) *Quantizer {
		var q *Quantizer
		switch search {
		case "exact", "ivf":
			if q, err = NewQuantizer(centroids, dim); err != nil {
				t.Fatal(err)
			}
			if search == "ivf" {
				q.SetIVF(ivf)
			}
		case "forest":
			q = NewForestQuantizer(forest)
		}
		if soft {
			if err := q.SetSoft(SoftOptions{R: 3}); err != nil {
				t.Fatal(err)
			}
		}
		return q
	}
	for _, search := range []string{"exact", "forest", "ivf"} {
		for _, soft := range []bool{false, true} {
			hard := quantizer(search, false)
			want := quantizer(search, soft).Quantize(desc)
			prefix := []uint32{7, 7}
			counts, words := quantizer(search, soft).QuantizeWords(desc, prefix)
			if !reflect.DeepEqual(counts, want) {
				t.Errorf("%s soft=%v: counts %v, Quantize gives %v", search, soft, counts, want)
			}
			if len(words) != len(prefix)+n || words[0] != 7 || words[1] != 7 {
				t.Fatalf("%s soft=%v: %d words starting %v, want the 2 given and %d", search, soft, len(words), words[:2], n)
			}
			for i, w := range words[len(prefix):] {
				if one := hard.Quantize(desc[i*dim : (i+1)*dim]); one.Idx[0] != w {
					t.Errorf("%s soft=%v: descriptor %d has word %d, alone it has %d", search, soft, i, w, one.Idx[0])
				}
			}
		}
	}
}
