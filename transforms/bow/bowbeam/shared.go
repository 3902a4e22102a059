package bowbeam

import (
	"slices"
	"sync"
	"weak"

	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/nn"
)

// searches is the read-only state that quantising against one vocabulary
// needs: its words and the forest and IVF it was trained with. The
// quantizers of every DoFn instance of a process share it.
type searches struct {
	dim       int
	search    kmeans.AssignOptions
	centroids []float32
	forest    *nn.Forest
	ivf       *nn.IVF
}

// shared points, weakly, at the searches of the vocabulary this process
// quantised against last. The SDK makes a DoFn instance for each bundle it
// runs at once and keeps them for the rest of the job, and Prism runs up
// to 8 bundles of a stage side by side: were each instance to build its
// own, a worker would hold up to 8 copies of the words and their IVF
// (about 110 MB each at 100K words, 1.1 GB at 1M). Shared, a process holds
// one whatever the number of parts and bundles, for as long as an instance
// holds it: the pointer is weak, so the searches go when the job's
// instances do, and a new vocabulary's replace them.
var shared struct {
	sync.Mutex
	last weak.Pointer[searches]
}

// sharedSearches returns the process's searches of cb's vocabulary,
// building them unless those it holds are of an equal vocabulary (the
// same words, dimension and search options), in which case cb's own copy
// of the words is left for the garbage collector. The caller keeps the
// searches for as long as it uses quantizers of them. Building holds the
// lock, so instances that start together build once.
func sharedSearches(cb kmeansbeam.Codebook) (*searches, error) {
	shared.Lock()
	defer shared.Unlock()
	if s := shared.last.Value(); s != nil && s.dim == cb.Dim && s.search == cb.Search() && slices.Equal(s.centroids, cb.Centroids) {
		return s, nil
	}
	forest, ivf, err := kmeans.QuantizerIndexes(cb.Centroids, cb.Dim, cb.Search())
	if err != nil {
		return nil, err
	}
	s := &searches{dim: cb.Dim, search: cb.Search(), centroids: cb.Centroids, forest: forest, ivf: ivf}
	shared.last = weak.Make(s)
	return s, nil
}

// quantizers returns the process's searches of the codebook and n
// quantizers of them, one per worker goroutine, searching the vocabulary
// as it was trained: each quantizer holds only its scratch. The caller
// keeps the searches with the quantizers (see sharedSearches).
func quantizers(cb kmeansbeam.Codebook, soft bow.SoftOptions, n int) (*searches, []*bow.Quantizer, error) {
	s, err := sharedSearches(cb)
	if err != nil {
		return nil, nil, err
	}
	qs := make([]*bow.Quantizer, n)
	for i := range qs {
		if qs[i], err = bow.NewQuantizerOf(s.centroids, s.dim, s.forest, s.ivf); err != nil {
			return nil, nil, err
		}
		if err := qs[i].SetSoft(soft); err != nil {
			return nil, nil, err
		}
	}
	return s, qs, nil
}
