package bowbeam

import (
	"slices"
	"sync"

	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/nn"
)

// searches is the read-only state that quantising against one vocabulary
// needs: its words and the forest and IVF it was trained with. Every
// Quantizer of a process shares it.
type searches struct {
	dim       int
	search    kmeans.AssignOptions
	centroids []float32
	forest    *nn.Forest
	ivf       *nn.IVF
}

// shared holds the searches of the vocabulary this process quantised
// against last. The SDK makes a DoFn instance for each bundle it runs at
// once and keeps them for the rest of the job, and Prism runs up to 8
// bundles of a stage side by side: were each instance to build its own,
// a worker would hold up to 8 copies of the words and their IVF (100 MB
// each at 100K words, 1 GB at 1M). Shared, a process holds one, whatever
// the number of parts and bundles; a job quantises against one vocabulary,
// and a new one replaces the old.
var shared struct {
	sync.Mutex
	last   *searches
	builds int // searches built, for the tests
}

// sharedSearches returns the process's searches of cb's vocabulary,
// building them unless the last ones built are of an equal vocabulary
// (the same words, dimension and search options), in which case cb's own
// copy of the words is left for the garbage collector. Building holds the
// lock, so instances that start together build once.
func sharedSearches(cb kmeansbeam.Codebook) (*searches, error) {
	shared.Lock()
	defer shared.Unlock()
	if s := shared.last; s != nil && s.dim == cb.Dim && s.search == cb.Search() && slices.Equal(s.centroids, cb.Centroids) {
		return s, nil
	}
	shared.last = nil // the old vocabulary's searches may go before the new ones are built
	forest, ivf, err := kmeans.QuantizerIndexes(cb.Centroids, cb.Dim, cb.Search())
	if err != nil {
		return nil, err
	}
	shared.last = &searches{dim: cb.Dim, search: cb.Search(), centroids: cb.Centroids, forest: forest, ivf: ivf}
	shared.builds++
	return shared.last, nil
}

// quantizers makes n quantizers of the codebook, one per worker goroutine,
// searching it as it was trained, over the process's shared searches
// (sharedSearches): each quantizer holds only its scratch.
func quantizers(cb kmeansbeam.Codebook, soft bow.SoftOptions, n int) ([]*bow.Quantizer, error) {
	s, err := sharedSearches(cb)
	if err != nil {
		return nil, err
	}
	qs := make([]*bow.Quantizer, n)
	for i := range qs {
		if qs[i], err = bow.NewQuantizerOf(s.centroids, s.dim, s.forest, s.ivf); err != nil {
			return nil, err
		}
		if err := qs[i].SetSoft(soft); err != nil {
			return nil, err
		}
	}
	return qs, nil
}
