package trainbeam

import (
	"context"
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	for _, t := range []any{(*train.Sample)(nil), (*partSampleFn)(nil), (*mergeSamplesFn)(nil), (*batchFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// BatchParts trains a batch learner of dense features on a bounded sample
// of the images' dense rows, the images held out by the split left out,
// and returns a single-element PCollection<learners.Model>. The text view
// Y of an image is its tags, or its label as its one tag when it has none,
// one-hot over the tags of the sample.
//
// It reads the rows from the features parts (featParts,
// PCollection<formats.Part> of the features-p-of-P files) rather than from
// a corpus-sized PCollection<train.DenseRow>: each part's DoFn makes its
// images' dense rows (concatenated and scaled by the scaler of moments,
// the single-element PCollection<global.Moments> of DenseMoments,
// ReadDense), leaves out those held out by cut (single-element
// PCollection<split.Cut>) and keeps its own bounded sample (train.Sample,
// at most 2·opt.MaxImages rows at a time); only these samples travel, and
// they are merged into one of opt.MaxImages rows before the fit. A worker
// holds one part's sample, never the corpus. It returns a single-element
// PCollection<learners.Model>.
//
// The sample is the opt.MaxImages training rows with label or tags of
// smallest hash of (opt.Seed, image id): the union of the parts' bottom-k
// samples holds the global bottom k, so the merged sample, and with it the
// model, is the one drawn over every training row at once, but for
// Seconds.
func BatchParts(s beam.Scope, featParts, moments, cut beam.PCollection, opt train.BatchOptions) beam.PCollection {
	s = s.Scope("train.BatchParts." + opt.Learner)
	samples := beam.ParDo(s, &partSampleFn{Max: opt.MaxImages, Seed: opt.Seed}, featParts,
		beam.SideInput{Input: moments}, beam.SideInput{Input: cut})
	smp := beam.Combine(s, &mergeSamplesFn{Max: opt.MaxImages}, samples)
	return beam.ParDo(s, &batchFn{Opt: opt}, smp)
}

// partSampleFn samples the training rows of one features part.
type partSampleFn struct {
	Max  int
	Seed uint64

	// scaler is derived from the moments side input on the first element,
	// as scaleFn's.
	scaler *global.Scaler
}

func (f *partSampleFn) ProcessElement(ctx context.Context, p formats.Part, moments func(*global.Moments) bool, cut split.Cut) (train.Sample, error) {
	if f.scaler == nil {
		var err error
		if f.scaler, err = ScalerOf(moments); err != nil {
			return train.Sample{}, fmt.Errorf("train: features part %d: %w", p.Part, err)
		}
	}
	var smp train.Sample
	// A held-out image is not trained on.
	_, err := ReadDense(ctx, p.Path, f.scaler, func(r train.DenseRow) error {
		if !cut.IsQuery(r.ImageID, r.Label) {
			smp = smp.Add(r, f.Max, f.Seed)
		}
		return nil
	})
	if err != nil {
		return train.Sample{}, fmt.Errorf("train: features part %d: %w", p.Part, err)
	}
	return smp.Trim(f.Max), nil
}

// mergeSamplesFn merges the parts' samples into one of at most Max rows.
type mergeSamplesFn struct{ Max int }

func (f *mergeSamplesFn) CreateAccumulator() train.Sample { return train.Sample{} }
func (f *mergeSamplesFn) AddInput(a, b train.Sample) train.Sample {
	return a.Merge(b, f.Max)
}
func (f *mergeSamplesFn) MergeAccumulators(a, b train.Sample) train.Sample { return a.Merge(b, f.Max) }
func (f *mergeSamplesFn) ExtractOutput(a train.Sample) train.Sample        { return a.Trim(f.Max) }

// batchFn fits a batch learner on the merged sample (BatchParts).
type batchFn struct{ Opt train.BatchOptions }

func (f *batchFn) ProcessElement(ctx context.Context, smp train.Sample) (learners.Model, error) {
	m, err := train.Fit(f.Opt, smp.Rows)
	if err != nil {
		return learners.Model{}, err
	}
	log.Infof(ctx, "train: %s on %d images, %.2fs", m.Learner, len(smp.Rows), m.Seconds)
	return m, nil
}
