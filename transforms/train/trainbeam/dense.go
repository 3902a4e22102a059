package trainbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/global"

	// Dense learners register themselves with learners.NewDense by name.
	_ "github.com/bowline/bowline/learners/euclidean"
	_ "github.com/bowline/bowline/learners/itq"
	_ "github.com/bowline/bowline/learners/mglp"
	_ "github.com/bowline/bowline/learners/omdml"
	_ "github.com/bowline/bowline/learners/ssml"
)

func init() {
	for _, t := range []any{
		(*DenseRow)(nil), (*global.Moments)(nil), (*global.Scaler)(nil), (*rowSample)(nil),
		(*concatFn)(nil), (*momentsFn)(nil), (*scaleFn)(nil), (*sampleFn)(nil), (*batchFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(tensorRowsFn)
}

// DenseRow is one image's global features as the dense learners see them:
// the modalities concatenated in the order of global.Dims and scaled by
// the collection's global.Scaler.
type DenseRow struct {
	ImageID, Label string
	Tags           []string
	X              []float32
}

// DenseRows turns described images (PCollection<formats.Features>) into
// PCollection<DenseRow>. Images without global features (a run without
// them, or a modality of the wrong length) are dropped and counted. The
// scaler is computed over every remaining image by a combine of
// per-dimension moments, O(d) per worker, and reaches the scaling ParDo as
// a side input.
func DenseRows(s beam.Scope, features beam.PCollection) beam.PCollection {
	s = s.Scope("train.DenseRows")
	raw := beam.ParDo(s, &concatFn{}, features)
	moments := beam.Combine(s, &momentsFn{}, raw)
	return beam.ParDo(s, &scaleFn{Dims: global.Dims}, raw, beam.SideInput{Input: moments})
}

type concatFn struct{ missing beam.Counter }

func (f *concatFn) Setup() { f.missing = beam.NewCounter("train", "images_without_global_features") }

func (f *concatFn) ProcessElement(ctx context.Context, ft formats.Features, emit func(DenseRow)) {
	x, err := global.Concat(nil, ft.Colour, ft.Edge, ft.Gabor, ft.LBP, ft.GIST)
	if err != nil {
		f.missing.Inc(ctx, 1)
		if len(ft.Colour)+len(ft.GIST) > 0 { // a run without global features is not worth a line per image
			log.Warnf(ctx, "train: image %s: %v; left out of the dense learners", ft.ImageID, err)
		}
		return
	}
	emit(DenseRow{ImageID: ft.ImageID, Label: ft.Label, Tags: ft.Tags, X: x})
}

type momentsFn struct{}

func (momentsFn) CreateAccumulator() global.Moments { return global.Moments{} }
func (momentsFn) AddInput(m global.Moments, r DenseRow) global.Moments {
	m.Add(r.X)
	return m
}
func (momentsFn) MergeAccumulators(a, b global.Moments) global.Moments {
	a.Merge(b)
	return a
}
func (momentsFn) ExtractOutput(m global.Moments) global.Moments { return m }

type scaleFn struct {
	Dims []int

	// scaler is derived from the side input on the first element; the
	// side input is the one global-window value of this stage, so an
	// instance reused across bundles may keep it.
	scaler *global.Scaler
}

func (f *scaleFn) ProcessElement(r DenseRow, moments func(*global.Moments) bool, emit func(DenseRow)) error {
	if f.scaler == nil {
		var m global.Moments
		moments(&m)
		sc, err := global.NewScaler(m, f.Dims)
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
		f.scaler = &sc
	}
	r.X = f.scaler.Apply(nil, r.X)
	emit(r)
	return nil
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
		return fmt.Errorf("train: a batch learner needs at least 2 images, got MaxImages %d", o.MaxImages)
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

// rowSample is a bottom-k sample of rows by priority.
type rowSample struct {
	Prio []uint64
	Rows []DenseRow
}

type sampleFn struct {
	Max  int
	Seed uint64
}

func (f *sampleFn) CreateAccumulator() rowSample { return rowSample{} }

func (f *sampleFn) AddInput(a rowSample, r DenseRow) rowSample {
	if r.Label == "" && len(r.Tags) == 0 {
		return a
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", f.Seed, r.ImageID)
	a.Prio = append(a.Prio, h.Sum64())
	a.Rows = append(a.Rows, r)
	if len(a.Rows) >= 2*f.Max {
		a = a.trim(f.Max)
	}
	return a
}

func (f *sampleFn) MergeAccumulators(a, b rowSample) rowSample {
	a.Prio = append(a.Prio, b.Prio...)
	a.Rows = append(a.Rows, b.Rows...)
	return a.trim(f.Max)
}

func (f *sampleFn) ExtractOutput(a rowSample) rowSample { return a.trim(f.Max) }

// trim keeps the max rows of smallest priority, ordered by priority (ties,
// which need a 64-bit hash collision, by image id), so the sample does not
// depend on the order rows arrived in.
func (a rowSample) trim(max int) rowSample {
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
	out := rowSample{Prio: make([]uint64, len(idx)), Rows: make([]DenseRow, len(idx))}
	for i, k := range idx {
		out.Prio[i], out.Rows[i] = a.Prio[k], a.Rows[k]
	}
	return out
}

// Batch trains a batch learner of dense features on a bounded sample of
// rows (PCollection<DenseRow>) and returns a single-element
// PCollection<Model>. The text view Y of an image is its tags, or its label
// as its one tag when it has none, one-hot over the tags of the sample.
func Batch(s beam.Scope, rows beam.PCollection, opt BatchOptions) beam.PCollection {
	s = s.Scope("train.Batch." + opt.Learner)
	smp := beam.Combine(s, &sampleFn{Max: opt.MaxImages, Seed: opt.Seed}, rows)
	return beam.ParDo(s, &batchFn{Opt: opt}, smp)
}

type batchFn struct{ Opt BatchOptions }

func (f *batchFn) ProcessElement(ctx context.Context, smp rowSample) (Model, error) {
	rows := smp.Rows
	m, err := learners.NewDense(f.Opt.Learner, f.Opt.Dims, f.Opt.Params)
	if err != nil {
		return Model{}, fmt.Errorf("train: %w", err)
	}
	b, ok := m.(learners.DenseBatch)
	if !ok {
		return Model{}, fmt.Errorf("train: %s is not a batch learner", f.Opt.Learner)
	}
	X, Y, err := Matrices(rows)
	if err != nil {
		return Model{}, fmt.Errorf("train: %s: %w", f.Opt.Learner, err)
	}
	start := time.Now()
	if err := b.Fit(X, Y); err != nil {
		return Model{}, fmt.Errorf("train: %s on %d images: %w", f.Opt.Learner, len(rows), err)
	}
	params, err := json.Marshal(b.Params())
	if err != nil {
		return Model{}, fmt.Errorf("train: %w", err)
	}
	out := Model{
		Learner: b.Name(), Params: string(params), Dims: b.Dims(), State: b.State(),
		Seconds: time.Since(start).Seconds(),
	}
	log.Infof(ctx, "train: %s on %d images (%d text columns), %.2fs", out.Learner, len(rows), Y.RawMatrix().Cols, out.Seconds)
	return out, nil
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

// Restore returns the dense model m describes, made with its
// hyper-parameters (which fix the shapes of its state, e.g. the code
// length) and set to its state.
func Restore(m Model) (learners.DenseModel, error) {
	if m.Dims == nil {
		return nil, fmt.Errorf("train: %s is not a model of global features", m.Learner)
	}
	var params map[string]float64
	if m.Params != "" {
		if err := json.Unmarshal([]byte(m.Params), &params); err != nil {
			return nil, fmt.Errorf("train: %s params %q: %w", m.Learner, m.Params, err)
		}
	}
	// Sharded training records its layout with the learner's own params.
	delete(params, "shards")
	delete(params, "rounds")
	d, err := learners.NewDense(m.Learner, m.Dims, params)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if err := d.SetState(m.State); err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	return d, nil
}

// TensorRows flattens dense models (PCollection<Model> with Dims set) into
// their Parquet rows, one per state vector; bag-of-words models give none.
func TensorRows(s beam.Scope, models beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("train.TensorRows"), tensorRowsFn, models)
}

func tensorRowsFn(m Model, emit func(formats.ModelTensor)) {
	if m.Dims == nil {
		return
	}
	dims := make([]int64, len(m.Dims))
	for i, d := range m.Dims {
		dims[i] = int64(d)
	}
	for i, v := range m.State.Vectors {
		emit(formats.ModelTensor{Learner: m.Learner, Params: m.Params, Dims: dims, Steps: m.State.Steps, Index: int32(i), Values: v})
	}
}
