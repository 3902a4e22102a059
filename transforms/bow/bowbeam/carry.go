package bowbeam

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*carryCountPartFn)(nil)).Elem())
}

// Previous is the finished run whose word counts an incremental run
// carries over. The zero Previous is none.
type Previous struct {
	// Dir is the run's directory, local or gs://.
	Dir string
	// Parts is its part count, of which this run's is a multiple
	// (formats.PartsFrom).
	Parts int
	// Counts lists, ascending, the parts of which it wrote a counts file.
	Counts []int
}

// counts returns the path of the previous run's counts file that holds
// the images of this run's part p, or "".
func (pr Previous) counts(p int) string {
	if pr.Dir == "" || pr.Parts < 1 {
		return ""
	}
	q := p % pr.Parts
	if _, ok := slices.BinarySearch(pr.Counts, q); !ok {
		return ""
	}
	return fileio.Join(pr.Dir, formats.ShardName(CountsName, q, pr.Parts))
}

// BoWOfPartsCarrying is BoWOfParts in an incremental run: when carry (a
// single-element PCollection<bool>, decided while the job runs: the
// codebook is the previous run's) is true, the word counts of the images
// a features part lists as carried (formats.Part.Carried) are taken from
// prev's counts files instead of quantising their descriptors again;
// when it is false, every image is quantised. The counts parts' Inputs,
// and the bow/descriptors_quantised counter, count the descriptors
// quantised. The soft-assignment options must be those prev quantised
// with; the caller checks.
func BoWOfPartsCarrying(s beam.Scope, features, codebook beam.PCollection, opt Options, dir string, prev Previous, carry beam.PCollection) (bows, counts, stats beam.PCollection) {
	s = s.Scope("bow.BoW")
	counts, dfs := beam.ParDo2(s, &carryCountPartFn{Soft: opt.Soft, Dir: dir, Prev: prev}, beam.Reshuffle(s, features),
		beam.SideInput{Input: codebook}, beam.SideInput{Input: carry})
	df := beam.Combine(s, &mergeDFFn{}, dfs)
	bows = beam.ParDo(s, &weightPartFn{Dir: dir, TF: opt.TF}, counts, beam.SideInput{Input: df})
	return bows, counts, beam.ParDo(s, statsFn, df)
}

type carryCountPartFn struct {
	Soft bow.SoftOptions
	Dir  string
	Prev Previous

	qs             []*bow.Quantizer
	words, carried beam.Counter
}

func (f *carryCountPartFn) ProcessElement(ctx context.Context, p formats.Part, codebook func(*kmeansbeam.Codebook) bool, carry bool, emit func(formats.Part), emitDF func(DF)) error {
	if f.qs == nil {
		qs, err := sideQuantizers(codebook, f.Soft)
		if err != nil {
			return err
		}
		f.qs = qs
		f.words = beam.NewCounter("bow", "descriptors_quantised")
		f.carried = beam.NewCounter("bow", "images_carried")
	}
	var known map[string]formats.BoW
	if path := f.Prev.counts(p.Part); carry && path != "" && len(p.Carried) > 0 {
		known = make(map[string]formats.BoW, len(p.Carried))
		err := fileio.ReadEach(ctx, path, func(c *formats.BoW) error {
			if _, ok := slices.BinarySearch(p.Carried, c.ImageID); ok {
				known[c.ImageID] = *c
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("bow: part %d: the previous run's counts: %w", p.Part, err)
		}
	}
	part, df, err := countPart(ctx, f.Dir, p, f.qs, known)
	if err != nil {
		return err
	}
	f.words.Inc(ctx, part.Inputs)
	f.carried.Inc(ctx, int64(len(known)))
	emit(part)
	emitDF(df)
	return nil
}
