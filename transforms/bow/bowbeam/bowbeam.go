// Package bowbeam is the Beam wrapper of package bow: it quantises every
// image's descriptors against the vocabulary, counts document frequencies
// and emits TF-IDF weighted, L2-normalised bags of words.
package bowbeam

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/setting"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*dfFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*DF)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.BoW)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.WordStat)(nil)).Elem())
	beam.RegisterFunction(statsFn)
	beam.RegisterType(reflect.TypeOf((*countPartFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*mergeDFFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*weightPartFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*codebookFile)(nil)).Elem())
	beam.RegisterFunction(codebookFileFn)
}

// DF holds document frequencies: DF[i] images of N contain word i.
type DF struct {
	N  int64
	DF []int64
}

// Options configures BoWOfParts. The zero value is hard
// assignment and raw term frequencies.
type Options struct {
	// Soft, with Soft.R > 0, assigns each descriptor to its Soft.R nearest
	// words with Gaussian weights of width Soft.Sigma (Philbin et al.,
	// "Lost in quantization", CVPR 2008; see package bow): term
	// frequencies become sums of weights, and a word counts once towards
	// the document frequency of every image that gives it any weight. R = 3
	// and Sigma = 0 (bow.DefaultSigma) are the paper's setting.
	Soft bow.SoftOptions
	// TF weights each term frequency before IDF (bow.TFIDFWith): "" and
	// bow.TFRaw as classic TF-IDF, bow.TFSqrt and bow.TFLog damping
	// bursts. It changes the bags of words, not the counts files: those
	// stay raw, so an incremental run may carry them across a change of TF
	// (omitted when empty, as incremental.json compares options without it).
	TF bow.TF `json:",omitempty"`
	// PartLoads is the most parts a worker process quantises at once (0:
	// no limit): a part holds a few images' descriptors at a time, its
	// counts and its geometry, and, in an incremental run, the previous
	// run's counts and geometry of its images. It changes no output, so it
	// is left out of the settings a run records.
	PartLoads int `json:"-"`
}

// Validate reports whether o is usable. BoWOfParts with invalid options fails
// when the pipeline runs; a caller that takes them from flags can call
// Validate first to fail at once.
func (o Options) Validate() error {
	if err := o.Soft.Validate(); err != nil {
		return fmt.Errorf("bowbeam: %w", err)
	}
	if err := o.TF.Validate(); err != nil {
		return fmt.Errorf("bowbeam: %w", err)
	}
	if o.PartLoads < 0 {
		return setting.Errorf("bowbeam", "PartLoads", o.PartLoads, "0 (no limit) or more")
	}
	return nil
}

// dfFn counts, for every word, the images that contain it: each word of a
// bag once, whatever its weight, so soft assignment's light second and third
// words count as much as the nearest.
type dfFn struct{}

func (dfFn) CreateAccumulator() DF { return DF{} }

func (dfFn) AddInput(a DF, b formats.BoW) DF {
	a.N++
	for _, w := range b.WordIDs {
		for int(w) >= len(a.DF) {
			a.DF = append(a.DF, 0)
		}
		a.DF[w]++
	}
	return a
}

// MergeAccumulators adds b to a, growing a to b's words: b, which may be
// an element (mergeDFFn.AddInput), is left as it is, and the sum is the
// same in whatever order the runner merges the parts.
func (dfFn) MergeAccumulators(a, b DF) DF {
	a.N += b.N
	if len(b.DF) > len(a.DF) {
		a.DF = append(a.DF, make([]int64, len(b.DF)-len(a.DF))...)
	}
	for i, c := range b.DF {
		a.DF[i] += c
	}
	return a
}

func (dfFn) ExtractOutput(a DF) DF { return a }

func statsFn(d DF, emit func(formats.WordStat)) {
	idf := bow.IDF(d.DF, d.N)
	for i, c := range d.DF {
		emit(formats.WordStat{WordID: uint32(i), DF: c, IDF: idf[i]})
	}
}

// Names of the outputs BoWOfParts writes part by part.
const (
	CountsName   = "counts"
	BoWName      = "bow"
	GeometryName = "geometry"
)

// BoWOfParts quantises the images' descriptors against the single-element
// codebook and weights the bags of words by TF-IDF, over features written
// part by part (PCollection<formats.Part>, package describebeam). The
// codebook names the files its words are in (kmeansbeam.Codebook), on a
// filesystem every worker reads (the run's output): the quantising DoFn
// takes with each part the files' names and the words' content, and a
// worker process reads the words from the files once (codebookFile), so
// the long quantising bundles have no side input. Images
// with no keypoints get an empty bag: they stay in the collection so that
// every image can be indexed and queried. It reads each part's
// features in one DoFn, quantises them on every core and writes the part's
// raw word counts to dir/counts-p-of-P.parquet and its images' keypoint
// geometry (formats.Geometry: each keypoint's hard word, position, scale
// and angle, for spatial verification) to dir/geometry-p-of-P.parquet,
// both sorted by image id and from the one search; once the document
// frequencies of all parts are summed, a second DoFn a part reads the
// counts back and writes the TF-IDF bags of words to dir/bow-p-of-P.parquet
// (formats.BoW rows sorted by image id). It returns the bag-of-words parts
// (PCollection<formats.Part>), the counts parts, the geometry parts and the
// word statistics (PCollection<formats.WordStat>). A worker process
// quantises at most opt.PartLoads parts at a time, and holds one copy of
// the vocabulary and of the forest and IVF it searches them with, however
// many bundles it runs (sharedSearches): its memory is bounded by K, the
// part size and PartLoads, not by the number of parts. Files whose words
// are not the codebook's fail the job, naming them.
func BoWOfParts(s beam.Scope, features, codebook beam.PCollection, opt Options, dir string) (bows, counts, geometry, stats beam.PCollection) {
	s = s.Scope("bow.BoW")
	parts := onekeybeam.Pair(s, features, codebookFiles(s, codebook, beam.Create(s, false)), "the codebook file")
	counts, geometry, dfs := beam.ParDo3(s, &countPartFn{Soft: opt.Soft, Dir: dir, Loads: opt.PartLoads}, parts)
	bows, stats = weigh(s, counts, dfs, opt, dir)
	return bows, counts, geometry, stats
}

// codebookFiles returns the file of the codebook (a single-element
// PCollection<kmeansbeam.Codebook>) with the decision carry
// (PCollection<bool>): a single-element PCollection<codebookFile>.
func codebookFiles(s beam.Scope, codebook, carry beam.PCollection) beam.PCollection {
	return beam.ParDo(s, codebookFileFn, onekeybeam.Group(s, codebook, carry))
}

func codebookFileFn(_ int, codebooks func(*kmeansbeam.Codebook) bool, carries func(*bool) bool) (codebookFile, error) {
	cb, err := onekeybeam.One(codebooks, "the codebook")
	if err != nil {
		return codebookFile{}, fmt.Errorf("bow: %w", err)
	}
	carry, err := onekeybeam.One(carries, "the decision to carry counts")
	if err != nil {
		return codebookFile{}, fmt.Errorf("bow: %w", err)
	}
	return fileOf(cb, carry)
}

// weigh sums the document frequencies of the quantised parts and weights
// their counts by TF-IDF.
func weigh(s beam.Scope, counts, dfs beam.PCollection, opt Options, dir string) (bows, stats beam.PCollection) {
	df := beam.Combine(s, &mergeDFFn{}, dfs)
	bows = beam.ParDo(s, &weightPartFn{Dir: dir, TF: opt.TF}, counts, beam.SideInput{Input: df})
	return bows, beam.ParDo(s, statsFn, df)
}

type countPartFn struct {
	Soft  bow.SoftOptions
	Dir   string
	Loads int

	searches *searches
	qs       []*bow.Quantizer
	words    beam.Counter
}

func (f *countPartFn) ProcessElement(ctx context.Context, p formats.Part, cf codebookFile, emit, emitGeometry func(formats.Part), emitDF func(DF)) error {
	release, err := slots.Acquire(ctx, "bow.part", f.Loads)
	defer release()
	if err != nil {
		return fmt.Errorf("bow: part %d: %w", p.Part, err)
	}
	if !f.searches.of(cf) {
		if f.searches, f.qs, err = loadQuantizers(ctx, cf, f.Soft); err != nil {
			return err
		}
		f.words = beam.NewCounter("bow", "descriptors_quantised")
	}
	part, geometry, df, err := countPart(ctx, f.Dir, p, f.qs, nil)
	if err != nil {
		return err
	}
	f.words.Inc(ctx, part.Inputs)
	emit(part)
	emitGeometry(geometry)
	emitDF(df)
	return nil
}

// carried is what an incremental run takes over of an image from the
// previous run instead of quantising its descriptors again.
type carried struct {
	counts   formats.BoW
	geometry formats.Geometry
}

// countPart quantises the features of part p with qs (one quantizer per
// goroutine) and writes the part's word counts and geometry under dir,
// except for the images of known, whose counts and geometry it takes as
// they are: with no quantizer, every image must be known. It returns the parts written — the counts', whose Inputs are
// the descriptors quantised, and the geometry's, whose Inputs are the
// keypoints located — and the part's document frequencies.
func countPart(ctx context.Context, dir string, p formats.Part, qs []*bow.Quantizer, known map[string]carried) (counts, geometry formats.Part, df DF, err error) {
	start := time.Now()
	// The features are streamed to the quantising goroutines a row at a
	// time: a worker holds a few images' descriptors (about 0.3 MB a photo
	// of 2,000 keypoints), the part's counts and its geometry (12 bytes a
	// keypoint), never the part's features.
	type job struct {
		i    int
		feat formats.Features
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := qs
	if len(workers) == 0 {
		workers = []*bow.Quantizer{nil} // takes the known images' counts
	}
	jobs := make(chan job, len(workers))
	var (
		mu        sync.Mutex
		out       []formats.BoW
		geo       []formats.Geometry
		quantised atomic.Int64
		wg        sync.WaitGroup
		errOnce   sync.Once
		firstErr  error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel()
	}
	put := func(i int, b formats.BoW, g formats.Geometry) {
		mu.Lock()
		defer mu.Unlock()
		for len(out) <= i {
			out = append(out, formats.BoW{})
			geo = append(geo, formats.Geometry{})
		}
		out[i], geo[i] = b, g
	}
	for _, q := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var flat []byte
			var words []uint32
			for j := range jobs {
				f := &j.feat
				if c, ok := known[f.ImageID]; ok {
					put(j.i, formats.BoW{ImageID: f.ImageID, Label: f.Label, WordIDs: c.counts.WordIDs, Weights: c.counts.Weights}, c.geometry)
					continue
				}
				if ctx.Err() != nil {
					continue
				}
				if q == nil {
					fail(fmt.Errorf("image %s: no vocabulary to quantise it with", f.ImageID))
					continue
				}
				quantised.Add(int64(len(f.Descriptors)))
				flat = flat[:0]
				for _, d := range f.Descriptors {
					flat = append(flat, d...)
				}
				var c sparse.Vector
				c, words = q.QuantizeWords(flat, words[:0])
				g, err := formats.GeometryOf(f, words)
				if err != nil {
					fail(err)
					continue
				}
				put(j.i, formats.BoW{ImageID: f.ImageID, Label: f.Label, WordIDs: c.Idx, Weights: c.Val}, g)
			}
		}()
	}
	n := 0
	rerr := fileio.ReadEach(ctx, p.Path, func(f *formats.Features) error {
		select {
		case jobs <- job{n, *f}:
			n++
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return formats.Part{}, formats.Part{}, DF{}, fmt.Errorf("bow: part %d: %w", p.Part, firstErr)
	}
	if rerr != nil {
		return formats.Part{}, formats.Part{}, DF{}, fmt.Errorf("bow: %w", rerr)
	}
	for _, b := range out {
		df = (dfFn{}).AddInput(df, b)
	}
	path := fileio.Join(dir, formats.ShardName(CountsName, p.Part, p.Parts))
	if err := fileio.WriteFile(ctx, path, out); err != nil {
		return formats.Part{}, formats.Part{}, DF{}, fmt.Errorf("bow: part %d: %w", p.Part, err)
	}
	counts = formats.Part{Name: CountsName, Part: p.Part, Parts: p.Parts, Path: path, Rows: int64(len(out)), Inputs: quantised.Load(), Carried: p.Carried}
	var keypoints int64
	for _, g := range geo {
		keypoints += int64(len(g.WordIDs))
	}
	out = nil
	geoPath := fileio.Join(dir, formats.ShardName(GeometryName, p.Part, p.Parts))
	if err := fileio.WriteFile(ctx, geoPath, geo); err != nil {
		return formats.Part{}, formats.Part{}, DF{}, fmt.Errorf("bow: part %d: %w", p.Part, err)
	}
	geometry = formats.Part{Name: GeometryName, Part: p.Part, Parts: p.Parts, Path: geoPath, Rows: int64(len(geo)), Keypoints: keypoints, Inputs: keypoints, Carried: p.Carried}
	return counts.Timed(start), geometry.Timed(start), df, nil
}

// mergeDFFn sums the document frequencies of parts.
type mergeDFFn struct{}

func (mergeDFFn) CreateAccumulator() DF        { return DF{} }
func (mergeDFFn) AddInput(a, b DF) DF          { return (dfFn{}).MergeAccumulators(a, b) }
func (mergeDFFn) MergeAccumulators(a, b DF) DF { return (dfFn{}).MergeAccumulators(a, b) }
func (mergeDFFn) ExtractOutput(a DF) DF        { return a }

type weightPartFn struct {
	Dir string
	TF  bow.TF

	idf []float32
}

func (f *weightPartFn) ProcessElement(ctx context.Context, p formats.Part, df func(*DF) bool, emit func(formats.Part)) error {
	if f.idf == nil {
		var d DF
		if !df(&d) {
			return fmt.Errorf("bow: no document frequencies")
		}
		f.idf = bow.IDF(d.DF, d.N)
	}
	start := time.Now()
	var out []formats.BoW
	var postings int64
	err := fileio.ReadEach(ctx, p.Path, func(c *formats.BoW) error {
		v := bow.TFIDFWith(sparse.Vector{Idx: c.WordIDs, Val: c.Weights}, f.idf, f.TF)
		out = append(out, formats.BoW{ImageID: c.ImageID, Label: c.Label, WordIDs: v.Idx, Weights: v.Val})
		postings += int64(len(v.Idx))
		return nil
	})
	if err != nil {
		return fmt.Errorf("bow: %w", err)
	}
	path := fileio.Join(f.Dir, formats.ShardName(BoWName, p.Part, p.Parts))
	if err := fileio.WriteFile(ctx, path, out); err != nil {
		return fmt.Errorf("bow: part %d: %w", p.Part, err)
	}
	emit(formats.Part{Name: BoWName, Part: p.Part, Parts: p.Parts, Path: path, Rows: int64(len(out)), Postings: postings, Inputs: int64(len(out)), Carried: p.Carried}.Timed(start))
	return nil
}

// loadQuantizers returns the process's searches of f's vocabulary
// (sharedSearches) and a quantiser of them for each of the process's
// threads, once per DoFn instance, which keeps both.
func loadQuantizers(ctx context.Context, f codebookFile, soft bow.SoftOptions) (*searches, []*bow.Quantizer, error) {
	s, err := sharedSearches(ctx, f)
	if err != nil {
		return nil, nil, fmt.Errorf("bow: %w", err)
	}
	qs, err := quantizers(s, soft, runtime.GOMAXPROCS(0))
	if err != nil {
		return nil, nil, fmt.Errorf("bow: %w", err)
	}
	return s, qs, nil
}
