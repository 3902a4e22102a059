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
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/internal/slots"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*carryCountPartFn)(nil)).Elem())
}

// Previous is the finished run whose word counts and geometry an
// incremental run carries over. The zero Previous is none.
type Previous struct {
	// Dir is the run's directory, local or gs://.
	Dir string
	// Parts is its part count, of which this run's is a multiple
	// (formats.PartsFrom).
	Parts int
	// Counts and Geometry list, ascending, the parts of which it wrote a
	// counts file and a geometry file: a run from before geometry files
	// has none, and its images are quantised again.
	Counts, Geometry []int
}

// files returns the paths of the previous run's counts and geometry files
// that hold the images of this run's part p, or "" unless it has both.
func (pr Previous) files(p int) (counts, geometry string) {
	if pr.Dir == "" || pr.Parts < 1 {
		return "", ""
	}
	q := p % pr.Parts
	_, okCounts := slices.BinarySearch(pr.Counts, q)
	_, okGeometry := slices.BinarySearch(pr.Geometry, q)
	if !okCounts || !okGeometry {
		return "", ""
	}
	return fileio.Join(pr.Dir, formats.ShardName(CountsName, q, pr.Parts)), fileio.Join(pr.Dir, formats.ShardName(GeometryName, q, pr.Parts))
}

// BoWOfPartsCarrying is BoWOfParts in an incremental run: when carry (a
// single-element PCollection<bool>, decided while the job runs: the
// codebook is the previous run's) is true, the word counts and geometry of
// the images a features part lists as carried (formats.Part.Carried) are
// taken from prev's counts and geometry files instead of quantising their
// descriptors again;
// when it is false, every image is quantised. The counts parts' Inputs,
// and the bow/descriptors_quantised counter, count the descriptors
// quantised. The soft-assignment options must be those prev quantised
// with; the caller checks.
func BoWOfPartsCarrying(s beam.Scope, features, codebook beam.PCollection, opt Options, dir string, prev Previous, carry beam.PCollection) (bows, counts, geometry, stats beam.PCollection) {
	s = s.Scope("bow.BoW")
	parts := onekeybeam.Pair(s, features, codebookFiles(s, codebook, carry), "the codebook file")
	counts, geometry, dfs := beam.ParDo3(s, &carryCountPartFn{Soft: opt.Soft, Dir: dir, Prev: prev, Loads: opt.PartLoads}, parts)
	bows, stats = weigh(s, counts, dfs, opt, dir)
	return bows, counts, geometry, stats
}

type carryCountPartFn struct {
	Soft  bow.SoftOptions
	Dir   string
	Prev  Previous
	Loads int

	searches       *searches
	qs             []*bow.Quantizer
	words, carried beam.Counter
}

func (f *carryCountPartFn) Setup() {
	f.words = beam.NewCounter("bow", "descriptors_quantised")
	f.carried = beam.NewCounter("bow", "images_carried")
}

func (f *carryCountPartFn) ProcessElement(ctx context.Context, p formats.Part, cf codebookFile, emit, emitGeometry func(formats.Part), emitDF func(DF)) error {
	release, err := slots.Acquire(ctx, "bow.part", f.Loads)
	defer release()
	if err != nil {
		return fmt.Errorf("bow: part %d: %w", p.Part, err)
	}
	known, err := f.Prev.known(ctx, p, cf.Carry)
	if err != nil {
		return err
	}
	// A part whose images all keep their counts quantises nothing: it
	// neither reads the vocabulary nor indexes it (512 MB of words and
	// their IVF at 10⁶ words).
	qs := []*bow.Quantizer(nil)
	if int64(len(known)) < p.Rows {
		if !f.searches.of(cf) {
			if f.searches, f.qs, err = loadQuantizers(ctx, cf, f.Soft); err != nil {
				return err
			}
		}
		qs = f.qs
	}
	part, geometry, df, err := countPart(ctx, f.Dir, p, qs, known)
	if err != nil {
		return err
	}
	f.words.Inc(ctx, part.Inputs)
	f.carried.Inc(ctx, int64(len(known)))
	emit(part)
	emitGeometry(geometry)
	emitDF(df)
	return nil
}

// known returns the counts and geometry that the previous run holds of
// the images features part p lists as carried, if carry: only images
// with both, so that an image's counts and geometry always come from one
// quantisation.
func (pr Previous) known(ctx context.Context, p formats.Part, carry bool) (map[string]carried, error) {
	countsPath, geometryPath := pr.files(p.Part)
	if !carry || countsPath == "" || len(p.Carried) == 0 {
		return nil, nil
	}
	counts := make(map[string]formats.BoW, len(p.Carried))
	err := fileio.ReadEach(ctx, countsPath, func(c *formats.BoW) error {
		if _, ok := slices.BinarySearch(p.Carried, c.ImageID); ok {
			counts[c.ImageID] = *c
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bow: part %d: the previous run's counts: %w", p.Part, err)
	}
	known := make(map[string]carried, len(counts))
	err = fileio.ReadEach(ctx, geometryPath, func(g *formats.Geometry) error {
		if c, ok := counts[g.ImageID]; ok {
			known[g.ImageID] = carried{counts: c, geometry: *g}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bow: part %d: the previous run's geometry: %w", p.Part, err)
	}
	return known, nil
}
