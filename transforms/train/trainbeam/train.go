// Package trainbeam is the Beam wrapper of the similarity learners in
// learners/: it joins triplet ids with bags of words (Features) or with
// dense global features (DenseFeatures) into per-triplet features and
// trains an online learner over them in triplet order, sharded with
// periodic parameter averaging (Sharded); batch learners of global
// features train on a bounded sample of images (Batch).
package trainbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

func init() {
	for _, t := range []any{
		(*sparse.Vector)(nil), (*vec)(nil), (*partial)(nil), (*Feature)(nil), (*Model)(nil), (*fillFn)(nil), (*finishFn)(nil),
	} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(keyBoWFn)
	beam.RegisterFunction(keyDenseFn)
	beam.RegisterFunction(keyQueryFn)
	beam.RegisterFunction(modelRowsFn)
}

// Feature is the learner's view of a triplet: u = x ⊙ (x+ − x−) for a
// bag-of-words learner (Features), or the three images' dense global
// features X, P (positive) and N (negative) for a dense one
// (DenseFeatures).
type Feature struct {
	Seq     int64
	U       sparse.Vector
	X, P, N []float32
}

// Model is a learned similarity. For a bag-of-words learner it is
// diagonal: Weights has one entry per visual word, and nil means every
// weight is one, which makes the similarity the plain TF-IDF cosine (the
// baseline the learners are compared with). For a learner of dense global
// features (learners.DenseModel) Dims is non-nil and State restores it.
type Model struct {
	Learner string
	// Params is the learner's hyper-parameters as JSON.
	Params   string
	Weights  []float32
	Dims     []int
	State    learners.State
	Triplets int64
	// MeanLoss is the mean hinge loss suffered over the pass; Violations
	// counts the triplets with a positive loss.
	MeanLoss   float64
	Violations int64
	Seconds    float64
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
// (PCollection<formats.BoW>) and returns PCollection<Feature>. The join is
// three co-groupings by image id — query, then positive, then negative — so
// no worker ever holds more than one image's bag and the triplets that name
// it. Triplets that name an image without a bag are dropped and counted.
func Features(s beam.Scope, triplets, bows beam.PCollection) beam.PCollection {
	s = s.Scope("train.Features")
	return join(s, triplets, beam.ParDo(s, keyBoWFn, bows))
}

// DenseFeatures joins triplets (PCollection<formats.Triplet>) with dense
// global features (PCollection<DenseRow>) as Features does with bags of
// words, and returns PCollection<Feature> with X, P and N set.
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

func keyDenseFn(r DenseRow) (string, vec) { return r.ImageID, vec{D: r.X} }

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
// emits the finished Feature.
type finishFn struct {
	u       sparse.Vector
	missing beam.Counter
}

func (f *finishFn) Setup() { f.missing = beam.NewCounter("train", "triplets_without_bow") }

func (f *finishFn) ProcessElement(ctx context.Context, id string, bows func(*vec) bool, parts func(*partial) bool, emit func(Feature)) {
	var v vec
	found := bows(&v)
	var p partial
	for parts(&p) {
		if !found {
			drop(ctx, f.missing, p.T, "negative", id)
			continue
		}
		if v.D != nil {
			emit(Feature{Seq: p.T.Seq, X: p.X.D, P: p.P.D, N: v.D})
			p = partial{}
			continue
		}
		f.u = sparse.TripletFeature(f.u, p.X.S, p.P.S, v.S)
		emit(Feature{Seq: p.T.Seq, U: sparse.Vector{
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

// Run feeds feats to l in order and returns the model it learned.
func Run(l learners.Online, feats []Feature) (Model, error) {
	params, err := json.Marshal(l.Params())
	if err != nil {
		return Model{}, fmt.Errorf("train: %s params: %w", l.Name(), err)
	}
	start := time.Now()
	var loss float64
	var viol int64
	for _, ft := range feats {
		if err := ft.U.Validate(l.Dim()); err != nil {
			return Model{}, fmt.Errorf("train: triplet %d: %w", ft.Seq, err)
		}
		if ls := l.Update(ft.U); ls > 0 {
			loss += ls
			viol++
		}
	}
	m := Model{
		Learner:    l.Name(),
		Params:     string(params),
		Weights:    l.Weights(nil),
		Triplets:   int64(len(feats)),
		Violations: viol,
		Seconds:    time.Since(start).Seconds(),
	}
	if len(feats) > 0 {
		m.MeanLoss = loss / float64(len(feats))
	}
	return m, nil
}

// ModelRows flattens models (PCollection<Model>) into their Parquet rows,
// one per non-zero weight.
func ModelRows(s beam.Scope, models beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("train.ModelRows"), modelRowsFn, models)
}

func modelRowsFn(m Model, emit func(formats.ModelWeight)) {
	for i, w := range m.Weights {
		if w != 0 {
			emit(formats.ModelWeight{Learner: m.Learner, Params: m.Params, WordID: uint32(i), Weight: w})
		}
	}
}
