// Package trainbeam is the Beam wrapper of the similarity learners in
// learners/: it joins triplet ids with bags of words (Features) or with
// dense global features (DenseFeatures) into per-triplet features and
// trains an online learner over them in triplet order, sharded with
// periodic parameter averaging (Sharded); batch learners of global
// features train on a bounded sample of images (Batch).
package trainbeam

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	for _, t := range []any{
		(*sparse.Vector)(nil), (*vec)(nil), (*partial)(nil), (*fillFn)(nil), (*finishFn)(nil), (*renameFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(keyBoWFn)
	beam.RegisterFunction(keyDenseFn)
	beam.RegisterFunction(keyQueryFn)
	beam.RegisterFunction(modelRowsFn)
}

// vec is an image's representation in the join: a bag of words or dense
// features.
type vec struct {
	S sparse.Vector
	D []float32
}

// partial is a triplet on its way through the join: X and P are filled as
// the query's and the positive's representations are met.
type partial struct {
	T    formats.Triplet
	X, P vec
}

// Features joins triplets (PCollection<formats.Triplet>) with bags of words
// (PCollection<formats.BoW>) and returns PCollection<train.Feature>. The join is
// three co-groupings by image id — query, then positive, then negative — so
// no worker ever holds more than one image's bag and the triplets that name
// it. Triplets that name an image without a bag are dropped and counted.
func Features(s beam.Scope, triplets, bows beam.PCollection) beam.PCollection {
	s = s.Scope("train.Features")
	return join(s, triplets, beam.ParDo(s, keyBoWFn, bows))
}

// DenseFeatures joins triplets (PCollection<formats.Triplet>) with dense
// global features (PCollection<train.DenseRow>) as Features does with bags of
// words, and returns PCollection<train.Feature> with X, P and N set.
func DenseFeatures(s beam.Scope, triplets, rows beam.PCollection) beam.PCollection {
	s = s.Scope("train.DenseFeatures")
	return join(s, triplets, beam.ParDo(s, keyDenseFn, rows))
}

func join(s beam.Scope, triplets, keyed beam.PCollection) beam.PCollection {
	p := beam.ParDo(s, keyQueryFn, triplets)
	for _, role := range []string{"query", "positive"} {
		rs := s.Scope(role)
		p = beam.ParDo(rs, &fillFn{Role: role}, beam.CoGroupByKey(rs, keyed, p))
	}
	ns := s.Scope("negative")
	return beam.ParDo(ns, &finishFn{}, beam.CoGroupByKey(ns, keyed, p))
}

func keyBoWFn(b formats.BoW) (string, vec) {
	return b.ImageID, vec{S: sparse.Vector{Idx: b.WordIDs, Val: b.Weights}}
}

func keyDenseFn(r train.DenseRow) (string, vec) { return r.ImageID, vec{D: r.X} }

func keyQueryFn(t formats.Triplet) (string, partial) { return t.Query, partial{T: t} }

// fillFn fills the query's or the positive's bag of words into each triplet
// keyed by that image, and re-keys the triplet by the image of the next
// role.
type fillFn struct {
	Role string

	missing beam.Counter
}

func (f *fillFn) Setup() { f.missing = beam.NewCounter("train", "triplets_without_bow") }

func (f *fillFn) ProcessElement(ctx context.Context, id string, bows func(*vec) bool, parts func(*partial) bool, emit func(string, partial)) {
	var v vec
	found := bows(&v)
	var p partial
	for parts(&p) {
		if !found {
			drop(ctx, f.missing, p.T, f.Role, id)
		} else if f.Role == "query" {
			p.X = v
			emit(p.T.Positive, p)
		} else {
			p.P = v
			emit(p.T.Negative, p)
		}
		p = partial{}
	}
}

// finishFn meets each triplet with its negative's representation and
// emits the finished train.Feature.
type finishFn struct {
	u       sparse.Vector
	missing beam.Counter
}

func (f *finishFn) Setup() { f.missing = beam.NewCounter("train", "triplets_without_bow") }

func (f *finishFn) ProcessElement(ctx context.Context, id string, bows func(*vec) bool, parts func(*partial) bool, emit func(train.Feature)) {
	var v vec
	found := bows(&v)
	var p partial
	for parts(&p) {
		if !found {
			drop(ctx, f.missing, p.T, "negative", id)
			continue
		}
		if v.D != nil {
			emit(train.Feature{Seq: p.T.Seq, X: p.X.D, P: p.P.D, N: v.D})
			p = partial{}
			continue
		}
		f.u = sparse.TripletFeature(f.u, p.X.S, p.P.S, v.S)
		emit(train.Feature{Seq: p.T.Seq, U: sparse.Vector{
			Idx: append([]uint32(nil), f.u.Idx...),
			Val: append([]float32(nil), f.u.Val...),
		}})
		p = partial{}
	}
}

func drop(ctx context.Context, c beam.Counter, t formats.Triplet, role, id string) {
	c.Inc(ctx, 1)
	log.Warnf(ctx, "train: triplet %d: %s %s has no bag of words or global features; dropped", t.Seq, role, id)
}

// ModelRows flattens models (PCollection<learners.Model>) into their Parquet rows,
// one per non-zero weight.
func ModelRows(s beam.Scope, models beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("train.ModelRows"), modelRowsFn, models)
}

func modelRowsFn(m learners.Model, emit func(formats.ModelWeight)) {
	for i, w := range m.Weights {
		if w != 0 {
			emit(formats.ModelWeight{Learner: m.Learner, Params: m.Params, WordID: uint32(i), Weight: w})
		}
	}
}

// Rename gives the models (PCollection<learners.Model>) another name, for
// a learner trained more than once with other settings (a sweep): the
// name the report, the model file and the index show.
func Rename(s beam.Scope, models beam.PCollection, name string) beam.PCollection {
	return beam.ParDo(s.Scope("train.Rename"), &renameFn{Name: name}, models)
}

type renameFn struct{ Name string }

func (f *renameFn) ProcessElement(m learners.Model) learners.Model {
	m.Learner = f.Name
	return m
}
