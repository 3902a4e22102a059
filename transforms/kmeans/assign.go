package kmeans

import (
	"sync"

	"github.com/bowline/bowline/transforms/nn"
)

// AssignOptions choose the nearest-centroid search that assigns points to
// a set of centroids (a vocabulary's words): exact search (nn.Exact) for
// the zero value; with Approx an IVF configured by IVF when UseIVF is
// set (trained over the centroids by TrainIVF), a forest of randomised
// kd-trees configured by Forest otherwise. Train's assignment step, the
// distributed trainer's and a vocabulary's quantisation all choose
// through them, so a vocabulary is quantised as it was trained.
type AssignOptions struct {
	Approx bool
	Forest nn.ForestOptions
	UseIVF bool
	IVF    nn.IVFOptions
}

// ForIteration returns the options of Lloyd iteration iter: the forest's
// and the IVF's seeds of that iteration (nn.ForestOptions.ForIteration,
// nn.IVFOptions.ForIteration).
func (o AssignOptions) ForIteration(iter int) AssignOptions {
	o.Forest, o.IVF = o.Forest.ForIteration(iter), o.IVF.ForIteration(iter)
	return o
}

// Assigner assigns points to the nearest of a fixed set of centroids by
// the one search its AssignOptions choose. It is read-only once built:
// goroutines may share it, each with its own AssignScratch.
type Assigner struct {
	exact  *nn.Exact
	forest *nn.Forest
	ivf    *nn.IVF
}

// NewAssigner builds the search o chooses over centroids (len/dim
// centroids of dimension dim, row-major), which it keeps without copying:
// the caller must not modify them while the Assigner is in use.
func NewAssigner(centroids []float32, dim int, o AssignOptions) (*Assigner, error) {
	switch {
	case o.Approx && o.UseIVF:
		v, err := TrainIVF(centroids, dim, o.IVF)
		if err != nil {
			return nil, err
		}
		return &Assigner{ivf: v}, nil
	case o.Approx:
		f, err := nn.NewForest(centroids, dim, o.Forest)
		if err != nil {
			return nil, err
		}
		return &Assigner{forest: f}, nil
	}
	return &Assigner{exact: nn.NewExact(centroids, dim)}, nil
}

// AssignScratch holds one goroutine's buffers of Assigner.Assign.
type AssignScratch struct {
	search nn.Search
	exact  nn.ExactScratch
	ivf    nn.IVFScratch
}

// Assign sets labels[i] to the nearest centroid the search finds for
// point i of data and dist[i] to its squared distance, and returns how
// many labels changed (nn.Exact.Assign, nn.Forest.Assign, nn.IVF.Assign:
// an approximate search keeps a label already in range unless it finds a
// strictly nearer centroid; set the labels to −1 for a plain search).
func (a *Assigner) Assign(data []float32, labels []int32, dist []float32, s *AssignScratch) (changed int) {
	switch {
	case a.ivf != nil:
		return a.ivf.Assign(data, labels, dist, &s.ivf)
	case a.forest != nil:
		return a.forest.Assign(data, labels, dist, &s.search)
	}
	return a.exact.Assign(data, labels, dist, &s.exact)
}

// AssignParallel is Assign on len(scratch) goroutines, the calling one
// among them, each with its own scratch, and gives Assign's labels,
// distances and count: an IVF shares each batch of points among the
// goroutines (nn.IVF.AssignParallel), so that each list's words are read
// once for all the batch's points, and the other searches split the
// points into contiguous ranges, one a goroutine. Each point's label
// depends only on that point, its label on entry and the search. It
// panics if scratch is empty.
func (a *Assigner) AssignParallel(data []float32, labels []int32, dist []float32, scratch []AssignScratch) (changed int) {
	w := min(len(scratch), max(1, len(labels)))
	if w == 0 {
		panic("kmeans: Assigner.AssignParallel without a scratch")
	}
	if w == 1 {
		return a.Assign(data, labels, dist, &scratch[0])
	}
	if a.ivf != nil {
		ivf := make([]*nn.IVFScratch, w)
		for g := range ivf {
			ivf[g] = &scratch[g].ivf
		}
		return a.ivf.AssignParallel(data, labels, dist, ivf)
	}
	d := len(data) / max(1, len(labels))
	counts := make([]int, w)
	var wg sync.WaitGroup
	for g := range w {
		lo, hi := g*len(labels)/w, (g+1)*len(labels)/w
		wg.Go(func() { counts[g] = a.Assign(data[lo*d:hi*d], labels[lo:hi], dist[lo:hi], &scratch[g]) })
	}
	wg.Wait()
	for _, c := range counts {
		changed += c
	}
	return changed
}

// QuantizerIndexes builds the searches a quantiser of a vocabulary
// (centroids, as NewAssigner takes them) trained with o uses: for an
// approximate vocabulary the forest, which finds the k nearest words of
// soft assignment and, without an IVF, the hard words, and with UseIVF
// the IVF its hard words are assigned through; nil, nil for an exact
// vocabulary, which a quantiser searches exhaustively itself.
func QuantizerIndexes(centroids []float32, dim int, o AssignOptions) (*nn.Forest, *nn.IVF, error) {
	if !o.Approx {
		return nil, nil, nil
	}
	f, err := nn.NewForest(centroids, dim, o.Forest)
	if err != nil {
		return nil, nil, err
	}
	if !o.UseIVF {
		return f, nil, nil
	}
	v, err := TrainIVF(centroids, dim, o.IVF)
	if err != nil {
		return nil, nil, err
	}
	return f, v, nil
}
