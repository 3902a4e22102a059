package search

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/itq"
	"github.com/bowline/bowline/transforms/global"

	// The learners of global features register themselves with package
	// learners, which restores their models by name.
	_ "github.com/bowline/bowline/transforms/train"
)

// codes is a learner of binary codes (ITQ, CCA-ITQ, LSH, mGLP: a dense
// model of learners.Hamming metric) over the images' global features:
// every image's item code and query code, packed, computed at load from
// the run's features files and the saved model, as the job's evaluation
// computes them (evaluate.DenseRanking).
type codes struct {
	model learners.DenseModel
	words int      // uint64 words a code
	item  []uint64 // image d's item code is item[d*words:(d+1)*words]
	query []uint64 // and its query code
	has   []bool   // the image has global features (the others are not ranked)
	count int      // images with global features
}

func (c *codes) bytes() int64 {
	return 8*int64(cap(c.item)) + 8*int64(cap(c.query)) + int64(cap(c.has))
}

// globalColumns are the columns of a features file the codes need: the
// keypoints and descriptors are not decoded.
type globalColumns struct {
	ImageID string    `parquet:"image_id"`
	Colour  []float32 `parquet:"colour,list"`
	Edge    []float32 `parquet:"edge,list"`
	Gabor   []float32 `parquet:"gabor,list"`
	LBP     []float32 `parquet:"lbp,list"`
	GIST    []float32 `parquet:"gist,list"`
}

// loadModel restores the dense model saved in a learner's model files.
func loadModel(ctx context.Context, learner string, paths []string) (learners.DenseModel, error) {
	m := learners.Model{Learner: learner}
	var rows []formats.ModelTensor
	if err := readTable(ctx, paths, func(r *formats.ModelTensor) error {
		rows = append(rows, *r)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("an empty model")
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Index < rows[j].Index })
	for i, r := range rows {
		if r.Learner != learner || int(r.Index) != i {
			return nil, fmt.Errorf("state vector %d of learner %q at position %d", r.Index, r.Learner, i)
		}
		m.State.Vectors = append(m.State.Vectors, r.Values)
	}
	m.Params, m.State.Learner, m.State.Steps = rows[0].Params, learner, rows[0].Steps
	for _, d := range rows[0].Dims {
		m.Dims = append(m.Dims, int(d))
	}
	return learners.RestoreDense(m)
}

// loadCodes computes the codes of every indexed image under each model of
// models (by learner), from the features files: the moments of the global
// features over every image that has them, part by part as the job sums
// them (trainbeam.DenseMoments), then, in a second pass, each image's
// scaled features embedded and packed.
func (ix *Index) loadCodes(ctx context.Context, paths []string, models map[string]learners.DenseModel, ord map[string]uint32) error {
	var moments global.Moments
	var x []float32
	for _, p := range paths {
		var part global.Moments
		if err := readFile(ctx, p, func(c *globalColumns) error {
			var err error
			if x, err = global.Concat(x[:0], c.Colour, c.Edge, c.Gabor, c.LBP, c.GIST); err == nil {
				part.Add(x)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		moments.Merge(part)
	}
	sc, err := global.NewScaler(moments, global.Dims)
	if err != nil {
		return fmt.Errorf("global features: %w", err)
	}
	ix.scaler = &sc
	n := len(ix.ids)
	names := make([]string, 0, len(models))
	for l, m := range models {
		width := 0
		for _, d := range m.Dims() {
			width += d
		}
		if width != len(sc.Mean) {
			return fmt.Errorf("learner %s takes %d features, the run has %d", l, width, len(sc.Mean))
		}
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		ix.codes[l] = &codes{model: models[l], has: make([]bool, n)}
	}
	var scaled []float32
	var wide, emb []float64
	var code itq.Code
	return readTable(ctx, paths, func(c *globalColumns) error {
		d, ok := ord[c.ImageID]
		if !ok {
			return nil
		}
		if x, err = global.Concat(x[:0], c.Colour, c.Edge, c.Gabor, c.LBP, c.GIST); err != nil {
			return nil // no global features: not ranked, as in the evaluation
		}
		scaled = sc.Apply(scaled, x)
		wide = widen(wide, scaled)
		for _, l := range names {
			cs := ix.codes[l]
			emb = cs.model.Item(emb, wide)
			code = itq.Pack(emb, code)
			if cs.item == nil {
				cs.words = len(code)
				cs.item, cs.query = make([]uint64, n*cs.words), make([]uint64, n*cs.words)
			}
			copy(cs.item[int(d)*cs.words:], code)
			emb = cs.model.Query(emb, wide)
			code = itq.Pack(emb, code)
			copy(cs.query[int(d)*cs.words:], code)
			if !cs.has[d] {
				cs.has[d] = true
				cs.count++
			}
		}
		return nil
	})
}

func widen(dst []float64, x []float32) []float64 {
	dst = dst[:0]
	for _, v := range x {
		dst = append(dst, float64(v))
	}
	return dst
}

// hamming ranks the images with codes other than exclude (−1: none) by
// ascending Hamming distance from the query code q, ties by ordinal — the
// order of evaluate.Brute over images sorted by id — and returns the best
// k (k ≤ 0: all) with score −distance, as the evaluation's DenseRanking
// scores them. It is one pass of popcounts over the packed codes and a
// counting selection: O(n·words + k log k), whatever k.
func (w *worker) hamming(c *codes, q []uint64, k, exclude int) []rankHit {
	n := len(c.has)
	if cap(w.dist) < n {
		w.dist = make([]uint16, n)
	}
	dist := w.dist[:n]
	maxBits := 64 * c.words
	hist := make([]int, maxBits+2)
	if c.words == 1 {
		q0 := q[0]
		for d, code := range c.item[:n] {
			h := bits.OnesCount64(code ^ q0)
			dist[d] = uint16(h)
			hist[h]++
		}
	} else {
		for d := range n {
			code := c.item[d*c.words : (d+1)*c.words]
			h := 0
			for j, x := range code {
				h += bits.OnesCount64(x ^ q[j])
			}
			dist[d] = uint16(h)
			hist[h]++
		}
	}
	// The images without a code, and the query's own, are never ranked.
	drop := func(d int) {
		hist[dist[d]]--
		dist[d] = uint16(maxBits + 1)
	}
	candidates := n
	if c.count < n {
		for d, ok := range c.has {
			if !ok {
				drop(d)
				candidates--
			}
		}
	}
	if exclude >= 0 && c.has[exclude] {
		drop(exclude)
		candidates--
	}
	if k <= 0 || k > candidates {
		k = candidates
	}
	// The k-th best distance: every image nearer is ranked, and images at
	// exactly that distance by ordinal until k.
	cut, below := 0, 0
	for cut <= maxBits && below+hist[cut] < k {
		below += hist[cut]
		cut++
	}
	atCut := k - below
	hits := make([]rankHit, 0, k)
	for d, h := range dist {
		switch {
		case int(h) < cut:
			hits = append(hits, rankHit{doc: uint32(d), score: float64(-int(h))})
		case int(h) == cut && atCut > 0:
			hits = append(hits, rankHit{doc: uint32(d), score: float64(-int(h))})
			atCut--
		}
	}
	slices.SortStableFunc(hits, func(a, b rankHit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	return hits
}

// rankHit is one ranked image ordinal and its score.
type rankHit struct {
	doc   uint32
	score float64
}

// isDenseTable reports whether a table is the model of a learner of
// global features (one without an index), and names it.
func isDenseTable(files map[string][]string, table string) (string, bool) {
	l, ok := strings.CutPrefix(table, "model-")
	if !ok || len(files["index-"+l]) > 0 {
		return "", false
	}
	return l, learners.IsDense(l)
}
