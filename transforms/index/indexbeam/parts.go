package indexbeam

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/internal/slots"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*partFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
}

// PostingsOfParts writes the inverted index of the model (single-element
// PCollection<learners.Model>) over bags of words written part by part
// (PCollection<formats.Part>), document-partitioned: part p's postings
// (formats.Posting rows, one a word that has any, sorted by word) go to
// dir/<name>-p-of-P.parquet, the index of the images of bag-of-words part
// p. A search asks every part and merges their rankings (ties by image
// id), which is how a sharded search service answers at scale. It returns
// the parts written (PCollection<formats.Part>). A worker holds one part's
// postings a part it indexes, and indexes at most loads parts at once (0:
// no limit), whatever the runner runs side by side. With cosine, each
// image's values are its bag scaled to unit length in the model's metric
// (index.Normalize), so that the index ranks by the cosine in that metric;
// the evaluation must rank with the same setting (evaluate.Options.Cosine).
func PostingsOfParts(s beam.Scope, bowParts, model beam.PCollection, dir, name string, loads int, cosine bool) beam.PCollection {
	s = s.Scope("index.Postings")
	return beam.ParDo(s, &partFn{Dir: dir, Name: name, Loads: loads, Cosine: cosine}, bowParts, beam.SideInput{Input: model})
}

type partFn struct {
	Dir, Name string
	// Loads is the most parts a worker process indexes at once (slots).
	Loads int
	// Cosine scales each bag to unit length in the model's metric.
	Cosine bool
	emitFn
}

func (f *partFn) ProcessElement(ctx context.Context, p formats.Part, model func(*learners.Model) bool, emit func(formats.Part)) error {
	if err := f.load(model); err != nil {
		return err
	}
	release, err := slots.Acquire(ctx, "index.part", f.Loads)
	if err != nil {
		return err
	}
	defer release()
	start := time.Now()
	byWord := map[uint32][]index.Entry{}
	bags := int64(0)
	err = fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		bags++
		if f.Cosine {
			// The row is this callback's own (fileio.ReadEach).
			index.Normalize(f.w, sparse.Vector{Idx: b.WordIDs, Val: b.Weights})
		}
		for k, word := range b.WordIDs {
			if index.Posts(f.w, word, b.Weights[k]) {
				byWord[word] = append(byWord[word], index.Entry{ImageID: b.ImageID, Value: b.Weights[k]})
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: %w", err)
	}
	words := make([]uint32, 0, len(byWord))
	for w := range byWord {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool { return words[i] < words[j] })
	rows := make([]formats.Posting, len(words))
	for i, w := range words {
		rows[i] = index.PostingList(f.learner, f.w, w, byWord[w])
	}
	path := fileio.Join(f.Dir, formats.ShardName(f.Name, p.Part, p.Parts))
	if err := fileio.WriteFile(ctx, path, rows); err != nil {
		return fmt.Errorf("index: part %d: %w", p.Part, err)
	}
	emit(formats.Part{Name: f.Name, Part: p.Part, Parts: p.Parts, Path: path, Rows: int64(len(rows)), Inputs: bags}.Timed(start))
	return nil
}
