// Package tripletsbeam is the Beam wrapper of package triplets: it gathers
// the labelled images into a pool and samples each query's triplets in
// parallel against it.
package tripletsbeam

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*poolFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*pool)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Triplet)(nil)).Elem())
	beam.RegisterFunction(checkPoolFn)
}

// Sample draws opt.PerQuery triplets for every labelled image of bows
// (PCollection<formats.BoW>) whose bag of words is not empty, and returns
// PCollection<formats.Triplet>. The triplets are a function of the seed and
// the set of images only. Images from which no triplet can be drawn (one
// label, no label with two images, no labels at all) fail the pipeline
// with the reason (triplets.Pool.Learnable). Negatives are random: mining
// them needs bags of words, which train.NewGroup has within a group.
func Sample(s beam.Scope, bows beam.PCollection, opt triplets.Options) beam.PCollection {
	s = s.Scope("triplets.Sample")
	p := beam.ParDo(s, checkPoolFn, beam.Combine(s, &poolFn{}, bows))
	return beam.ParDo(s, &sampleFn{Opt: opt}, bows, beam.SideInput{Input: p})
}

// checkPoolFn fails the pipeline, with the reason in a user's terms, when
// the pool yields no triplet: every learner would then "train" on nothing
// and the report would compare untrained models. Sampling waits for the
// checked pool, so it fails before any training starts.
func checkPoolFn(p pool) (pool, error) {
	if err := p.pool().Learnable(); err != nil {
		return pool{}, fmt.Errorf("triplets: %w", err)
	}
	return p, nil
}

// pool is the combine accumulator: the ids and labels of usable images.
type pool struct {
	IDs, Labels []string
}

// pool returns the sampling pool of the accumulated images.
func (a pool) pool() *triplets.Pool {
	items := make([]triplets.Item, len(a.IDs))
	for i := range items {
		items[i] = triplets.Item{ID: a.IDs[i], Label: a.Labels[i]}
	}
	return triplets.NewPool(items)
}

type poolFn struct{}

func (poolFn) CreateAccumulator() pool { return pool{} }

func (poolFn) AddInput(a pool, b formats.BoW) pool {
	if usable(b) {
		a.IDs = append(a.IDs, b.ImageID)
		a.Labels = append(a.Labels, b.Label)
	}
	return a
}

func (poolFn) MergeAccumulators(a, b pool) pool {
	a.IDs = append(a.IDs, b.IDs...)
	a.Labels = append(a.Labels, b.Labels...)
	return a
}

func (poolFn) ExtractOutput(a pool) pool { return a }

func usable(b formats.BoW) bool { return b.Label != "" && len(b.WordIDs) > 0 }

type sampleFn struct {
	Opt triplets.Options

	p       *triplets.Pool
	buf     []formats.Triplet
	sampled beam.Counter
}

func (f *sampleFn) Setup() error {
	if f.Opt.Mined() {
		// The pool holds ids and labels, not the corpus's bags of words:
		// negatives are mined within a training group (train.NewGroup).
		return fmt.Errorf("triplets: %s negatives are mined within training groups, not by tripletsbeam.Sample", f.Opt.Negatives)
	}
	return f.Opt.Validate()
}

func (f *sampleFn) ProcessElement(ctx context.Context, b formats.BoW, side func(*pool) bool, emit func(formats.Triplet)) error {
	if !usable(b) {
		return nil
	}
	if f.p == nil {
		var p pool
		if !side(&p) {
			return fmt.Errorf("triplets: no pool")
		}
		f.p = p.pool()
		f.sampled = beam.NewCounter("triplets", "sampled")
	}
	f.buf = f.p.ForQuery(f.buf[:0], triplets.Item{ID: b.ImageID, Label: b.Label}, f.Opt)
	for _, t := range f.buf {
		emit(t)
	}
	f.sampled.Inc(ctx, int64(len(f.buf)))
	return nil
}
