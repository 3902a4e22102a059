package kmeans

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/bowline/bowline/transforms/nn"
)

// TrainIVF builds an nn.IVF over the k = len(centroids)/dim words,
// row-major, training its coarse centroids: k-means over at most
// 64·Lists of the words drawn uniformly without replacement by opt.Seed
// (ten Lloyd iterations from random words, empty cells split), with
// Lists = nn.DefaultLists(k, Probes) when opt.Lists is 0, and at most k.
// Training costs about 10·64·Lists²·dim multiply-adds in nn.Exact's
// kernel. The same words, options and seed give the same IVF.
//
// The IVF keeps centroids without copying: the caller must not modify them
// while it is in use. It reports opt's errors and those of the centroids
// (nn.CheckIVF) before training.
func TrainIVF(centroids []float32, dim int, opt nn.IVFOptions) (*nn.IVF, error) {
	k, err := nn.CheckIVF(centroids, dim, opt)
	if err != nil {
		return nil, err
	}
	lists := opt.Lists
	if lists == 0 {
		lists = nn.DefaultLists(k, opt.Probes)
	}
	lists = min(lists, k)

	rng := rand.New(rand.NewPCG(opt.Seed, pcgStream))
	m := min(k, 64*lists)
	idx := distinctSample(k, m, rng)
	slices.Sort(idx)
	sample := make([]float32, 0, m*dim)
	for _, i := range idx {
		sample = append(sample, centroids[int(i)*dim:(int(i)+1)*dim]...)
	}
	res, err := Train(sample, dim, Options{K: lists, MaxIter: 10, Seed: opt.Seed, Init: InitRandom, Reseed: ReseedSplit})
	if err != nil {
		return nil, fmt.Errorf("kmeans: IVF coarse centroids: %w", err)
	}
	return nn.NewIVF(centroids, dim, res.Centroids, opt)
}
