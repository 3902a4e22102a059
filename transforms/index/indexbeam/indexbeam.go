// Package indexbeam builds the inverted index of a learned similarity as a
// distributed transform: one posting list per visual word whose learned
// weight is not zero.
package indexbeam

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/train/trainbeam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*entry)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*emitFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*postingFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Posting)(nil)).Elem())
}

// Postings returns the inverted index (PCollection<formats.Posting>) of bows
// (PCollection<formats.BoW>) under the single-element model
// (PCollection<trainbeam.Model>). Words whose weight is zero get no posting list:
// the sparser the model, the smaller the index and the faster a query.
func Postings(s beam.Scope, bows, model beam.PCollection) beam.PCollection {
	s = s.Scope("index.Postings")
	entries := beam.ParDo(s, &emitFn{}, bows, beam.SideInput{Input: model})
	return beam.ParDo(s, &postingFn{}, beam.GroupByKey(s, entries), beam.SideInput{Input: model})
}

type entry struct {
	ImageID string
	Value   float32
}

type emitFn struct {
	w       []float32
	learner string
	loaded  bool
}

func (f *emitFn) load(model func(*trainbeam.Model) bool) error {
	if f.loaded {
		return nil
	}
	var m trainbeam.Model
	if !model(&m) {
		return fmt.Errorf("index: no model")
	}
	f.w, f.learner, f.loaded = m.Weights, m.Learner, true
	return nil
}

func (f *emitFn) ProcessElement(b formats.BoW, model func(*trainbeam.Model) bool, emit func(uint32, entry)) error {
	if err := f.load(model); err != nil {
		return err
	}
	for k, word := range b.WordIDs {
		if f.w != nil && (int(word) >= len(f.w) || f.w[word] == 0) {
			continue
		}
		emit(word, entry{ImageID: b.ImageID, Value: b.Weights[k]})
	}
	return nil
}

type postingFn struct{ emitFn }

func (f *postingFn) ProcessElement(word uint32, iter func(*entry) bool, model func(*trainbeam.Model) bool, emit func(formats.Posting)) error {
	if err := f.load(model); err != nil {
		return err
	}
	var es []entry
	var e entry
	for iter(&e) {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].ImageID < es[j].ImageID })
	p := formats.Posting{Learner: f.learner, WordID: word, Weight: 1, Images: make([]string, len(es)), Values: make([]float32, len(es))}
	if f.w != nil {
		p.Weight = f.w[word]
	}
	for i, e := range es {
		p.Images[i], p.Values[i] = e.ImageID, e.Value
	}
	emit(p)
	return nil
}
