package train

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/setting"
)

// DenseRow is one image's global features as the dense learners see them:
// the modalities concatenated in the order of global.Dims and scaled by
// the collection's global.Scaler.
type DenseRow struct {
	ImageID, Label string
	Tags           []string
	X              []float32
}

// BatchOptions configures the training of a batch learner of dense
// features.
type BatchOptions struct {
	// Learner names the algorithm (see learners.DenseNames); Params
	// overrides its defaults by name.
	Learner string
	Params  map[string]float64
	// Dims are the modality dimensions (global.Dims).
	Dims []int
	// MaxImages caps the training set: batch learners hold it in memory
	// and cost O(n d²) or more, so at a million images they learn from a
	// uniform sample. The sample is the labelled or tagged images with the
	// smallest hash of (Seed, image id), so every learner and every re-run
	// sees the same one.
	MaxImages int
	Seed      uint64
}

// Validate reports options Batch cannot run with.
func (o BatchOptions) Validate() error {
	if o.MaxImages < 2 {
		return setting.Errorf("train", "MaxImages", o.MaxImages, "2 or more: a batch learner needs at least 2 images")
	}
	m, err := learners.NewDense(o.Learner, o.Dims, o.Params)
	if err != nil {
		return err
	}
	if _, ok := m.(learners.DenseBatch); !ok {
		return fmt.Errorf("train: %s is not a batch learner", o.Learner)
	}
	return nil
}

// Sample is a bottom-k sample of rows by priority: the rows with the
// smallest hash of (seed, image id), so the sample depends on neither the
// order rows arrive in nor how they were split over workers.
type Sample struct {
	Prio []uint64
	Rows []DenseRow
}

// Add adds row r to the sample unless it has neither label nor tags (the
// batch learners need a text view), keeping at most 2·max rows between
// trims.
func (a Sample) Add(r DenseRow, max int, seed uint64) Sample {
	if r.Label == "" && len(r.Tags) == 0 {
		return a
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, r.ImageID)
	a.Prio = append(a.Prio, h.Sum64())
	a.Rows = append(a.Rows, r)
	if len(a.Rows) >= 2*max {
		a = a.Trim(max)
	}
	return a
}

// Merge merges two samples into one of at most max rows.
func (a Sample) Merge(b Sample, max int) Sample {
	a.Prio = append(a.Prio, b.Prio...)
	a.Rows = append(a.Rows, b.Rows...)
	return a.Trim(max)
}

// Trim keeps the max rows of smallest priority, ordered by priority (ties,
// which need a 64-bit hash collision, by image id), so the sample does not
// depend on the order rows arrived in.
func (a Sample) Trim(max int) Sample {
	idx := make([]int, len(a.Rows))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		pi, pj := a.Prio[idx[i]], a.Prio[idx[j]]
		if pi != pj {
			return pi < pj
		}
		return a.Rows[idx[i]].ImageID < a.Rows[idx[j]].ImageID
	})
	if len(idx) > max {
		idx = idx[:max]
	}
	out := Sample{Prio: make([]uint64, len(idx)), Rows: make([]DenseRow, len(idx))}
	for i, k := range idx {
		out.Prio[i], out.Rows[i] = a.Prio[k], a.Rows[k]
	}
	return out
}

// Fit trains the batch learner o names on rows and returns its model.
func Fit(o BatchOptions, rows []DenseRow) (learners.Model, error) {
	m, err := learners.NewDense(o.Learner, o.Dims, o.Params)
	if err != nil {
		return learners.Model{}, fmt.Errorf("train: %w", err)
	}
	b, ok := m.(learners.DenseBatch)
	if !ok {
		return learners.Model{}, fmt.Errorf("train: %s is not a batch learner", o.Learner)
	}
	X, Y, err := Matrices(rows)
	if err != nil {
		return learners.Model{}, fmt.Errorf("train: %s: %w", o.Learner, err)
	}
	start := time.Now()
	if err := b.Fit(X, Y); err != nil {
		return learners.Model{}, fmt.Errorf("train: %s on %d images: %w", o.Learner, len(rows), err)
	}
	params, err := json.Marshal(b.Params())
	if err != nil {
		return learners.Model{}, fmt.Errorf("train: %w", err)
	}
	return learners.Model{
		Learner: b.Name(), Params: string(params), Dims: b.Dims(), State: b.State(),
		Seconds: time.Since(start).Seconds(),
	}, nil
}

// Matrices stacks rows into the data matrix X (n×d) and the text matrix Y
// (n×t): Y's columns are the sorted distinct tags of the rows, an image
// without tags having its label as its one tag, and Y_ij = 1 when image i
// carries tag j.
func Matrices(rows []DenseRow) (X, Y *mat.Dense, err error) {
	if len(rows) == 0 {
		return nil, nil, fmt.Errorf("no images")
	}
	d := len(rows[0].X)
	tagsOf := func(r DenseRow) []string {
		if len(r.Tags) > 0 {
			return r.Tags
		}
		if r.Label != "" {
			return []string{r.Label}
		}
		return nil
	}
	col := map[string]int{}
	for _, r := range rows {
		for _, t := range tagsOf(r) {
			col[t] = 0
		}
	}
	names := make([]string, 0, len(col))
	for t := range col {
		names = append(names, t)
	}
	slices.Sort(names)
	for j, t := range names {
		col[t] = j
	}
	X = mat.NewDense(len(rows), d, nil)
	t := max(len(names), 1) // gonum has no empty matrices
	Y = mat.NewDense(len(rows), t, nil)
	for i, r := range rows {
		if len(r.X) != d {
			return nil, nil, fmt.Errorf("image %s has %d features, image %s has %d", r.ImageID, len(r.X), rows[0].ImageID, d)
		}
		for j, v := range r.X {
			X.Set(i, j, float64(v))
		}
		for _, tag := range tagsOf(r) {
			Y.Set(i, col[tag], 1)
		}
	}
	return X, Y, nil
}
