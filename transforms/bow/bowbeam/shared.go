package bowbeam

import (
	"context"
	"fmt"
	"sync"
	"weak"

	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/nn"
)

// codebookFile is what a quantising step takes with each features part
// (onekeybeam.Pair) instead of the codebook's words: the codebook CB,
// which names the files the job wrote them to (formats.Word rows, on a
// filesystem every worker reads) and their content, so that a process
// reads the words once, from the files, and knows them for those the job
// trained. A side input would keep Prism planning empty bundles for as
// long as a part is quantised (package onekeybeam).
type codebookFile struct {
	CB kmeansbeam.Codebook
	// Carry is BoWOfPartsCarrying's decision that the images the parts
	// list as carried keep the previous run's counts and geometry.
	Carry bool
}

// fileOf returns the file of codebook cb, and carry.
func fileOf(cb kmeansbeam.Codebook, carry bool) (codebookFile, error) {
	if len(cb.Paths) == 0 {
		return codebookFile{}, fmt.Errorf("bow: the codebook was written to no file")
	}
	if cb.K <= 0 || cb.Dim <= 0 {
		return codebookFile{}, fmt.Errorf("bow: a codebook of %d words of %d", cb.K, cb.Dim)
	}
	return codebookFile{CB: cb, Carry: carry}, nil
}

// searches is the read-only state that quantising against one vocabulary
// needs: its words and the forest and IVF it was trained with. The
// quantizers of every DoFn instance of a process share it.
type searches struct {
	content   string
	dim       int
	search    kmeans.AssignOptions
	centroids []float32
	forest    *nn.Forest
	ivf       *nn.IVF
}

// of reports whether s are searches of f's vocabulary: s is not nil and
// of the same content, dimension and search options.
func (s *searches) of(f codebookFile) bool {
	return s != nil && s.content == f.CB.Content && s.dim == f.CB.Dim && s.search == f.CB.Search()
}

// newSearches indexes the words cent of dimension dim for search.
func newSearches(cent []float32, dim int, search kmeans.AssignOptions) (*searches, error) {
	forest, ivf, err := kmeans.QuantizerIndexes(cent, dim, search)
	if err != nil {
		return nil, err
	}
	return &searches{dim: dim, search: search, centroids: cent, forest: forest, ivf: ivf}, nil
}

// shared points, weakly, at the searches of the vocabulary this process
// quantised against last. The SDK makes a DoFn instance for each bundle it
// runs at once and keeps them for the rest of the job, and Prism runs up
// to 8 bundles of a stage side by side: were each instance to read and
// index the words, a worker would hold up to 8 copies of the words and
// their IVF (about 110 MB each at 100K words, 1.1 GB at 1M). Shared, a
// process holds one whatever the number of parts and bundles, for as long
// as an instance holds it: the pointer is weak, so the searches go when
// the job's instances do, and a new vocabulary's replace them.
var shared struct {
	sync.Mutex
	last weak.Pointer[searches]
}

// sharedSearches returns the process's searches of f's vocabulary,
// reading its words and indexing them unless those it holds are of the
// same content, dimension and search options. The caller keeps the
// searches for as long as it uses quantizers of them. Building holds the
// lock, so instances that start together read the file once.
func sharedSearches(ctx context.Context, f codebookFile) (*searches, error) {
	shared.Lock()
	defer shared.Unlock()
	if s := shared.last.Value(); s.of(f) {
		return s, nil
	}
	cent, err := f.CB.ReadCentroids(ctx)
	if err != nil {
		return nil, err
	}
	s, err := newSearches(cent, f.CB.Dim, f.CB.Search())
	if err != nil {
		return nil, err
	}
	s.content = f.CB.Content
	shared.last = weak.Make(s)
	return s, nil
}

// quantizers returns n quantizers of s, one per worker goroutine,
// searching the vocabulary as it was trained: each holds only its
// scratch. The caller keeps s with the quantizers (see sharedSearches).
func quantizers(s *searches, soft bow.SoftOptions, n int) ([]*bow.Quantizer, error) {
	qs := make([]*bow.Quantizer, n)
	for i := range qs {
		var err error
		if qs[i], err = bow.NewQuantizerOf(s.centroids, s.dim, s.forest, s.ivf); err != nil {
			return nil, err
		}
		if err := qs[i].SetSoft(soft); err != nil {
			return nil, err
		}
	}
	return qs, nil
}
