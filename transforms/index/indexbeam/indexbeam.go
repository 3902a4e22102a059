// Package indexbeam is the Beam wrapper of package index: it builds the
// inverted index of a learned similarity as a distributed transform, one
// posting list per visual word whose learned weight is not zero, by the
// rules of index.Posts and index.PostingList.
package indexbeam

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/index"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*index.Entry)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*emitFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*postingFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Posting)(nil)).Elem())
}

// Postings returns the inverted index (PCollection<formats.Posting>) of bows
// (PCollection<formats.BoW>) under the single-element model
// (PCollection<learners.Model>): the postings of index.Build, written out
// by word. Words whose weight is zero get no posting list: the sparser the
// model, the smaller the index and the faster a query.
func Postings(s beam.Scope, bows, model beam.PCollection) beam.PCollection {
	s = s.Scope("index.Postings")
	entries := beam.ParDo(s, &emitFn{}, bows, beam.SideInput{Input: model})
	return beam.ParDo(s, &postingFn{}, beam.GroupByKey(s, entries), beam.SideInput{Input: model})
}

// emitFn keys every posting of an image by its word.
type emitFn struct {
	w       []float32
	learner string
	loaded  bool
}

func (f *emitFn) load(model func(*learners.Model) bool) error {
	if f.loaded {
		return nil
	}
	var m learners.Model
	if !model(&m) {
		return fmt.Errorf("index: no model")
	}
	w, err := m.Diagonal()
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	f.w, f.learner, f.loaded = w, m.Learner, true
	return nil
}

func (f *emitFn) ProcessElement(b formats.BoW, model func(*learners.Model) bool, emit func(uint32, index.Entry)) error {
	if err := f.load(model); err != nil {
		return err
	}
	for k, word := range b.WordIDs {
		if index.Posts(f.w, word, b.Weights[k]) {
			emit(word, index.Entry{ImageID: b.ImageID, Value: b.Weights[k]})
		}
	}
	return nil
}

// postingFn gathers a word's postings into its list.
type postingFn struct{ emitFn }

func (f *postingFn) ProcessElement(word uint32, iter func(*index.Entry) bool, model func(*learners.Model) bool, emit func(formats.Posting)) error {
	if err := f.load(model); err != nil {
		return err
	}
	var es []index.Entry
	var e index.Entry
	for iter(&e) {
		es = append(es, e)
	}
	emit(index.PostingList(f.learner, f.w, word, es))
	return nil
}
