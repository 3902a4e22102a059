package search

import (
	"context"
	"errors"
	"fmt"
	"image"

	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners/itq"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/sift"
	"github.com/bowline/bowline/transforms/spatial"
)

// settings are the run's settings a query image is described and
// quantised with (run.Settings), as the stages' options.
type settings struct {
	// describe are the options the run's describe stage decoded and
	// described its images with: SIFT, the pixel limit, DCT-scaled
	// decoding. Global is not recorded; a query asks for colour only
	// when its learner reads the global features (Index.decode).
	describe describe.Options
	soft     bow.SoftOptions
	tf       bow.TF
	// words is the search the vocabulary was trained and its words are
	// assigned through: exact, or for an approximate vocabulary (--akm) a
	// forest, and an IVF for its hard words if it was trained with one.
	words kmeans.AssignOptions
}

// settingsOf returns the stages' options of a run's settings, each
// checked by its Validate.
func settingsOf(r run.Settings) (settings, error) {
	s := settings{
		describe: describe.Options{SIFT: sift.Options(r.SIFT), MaxPixels: r.MaxPixels, DCTScale: r.DCTScale, DCTVersion: r.DCTVersion},
		soft:     bow.SoftOptions{R: r.Soft.Words, Sigma: r.Soft.Sigma},
		tf:       bow.TF(r.TF),
	}
	if f := r.Vocabulary.Forest; f != nil {
		s.words.Approx, s.words.Forest = true, nn.ForestOptions(*f)
		if err := s.words.Forest.Validate(); err != nil {
			return settings{}, fmt.Errorf("setting vocabulary.forest: %w", err)
		}
		if v := r.Vocabulary.IVF; v != nil {
			s.words.UseIVF, s.words.IVF = true, nn.IVFOptions{Lists: v.Lists, Probes: v.Probes, Seed: v.Seed}
		}
	}
	if err := s.describe.SIFT.Validate(); err != nil {
		return settings{}, err
	}
	if err := s.soft.Validate(); err != nil {
		return settings{}, err
	}
	if err := s.tf.Validate(); err != nil {
		return settings{}, fmt.Errorf("setting tf: %w", err)
	}
	return s, nil
}

// decode decodes the photo data as the run's describe stage decoded its
// images (describe.Options.Decode, with the run's pixel limit): for SIFT
// alone a JPEG's luma plane, DCT-domain scaled in a run described so;
// with colour, in colour at full size, as a run with global features
// decoded them, for a learner of binary codes of the global features. The
// luma plane is the colour decode's Y plane, which SIFT reads
// (ingest.Decoder.DecodeLuma), so either gives the run's keypoints; a run
// with global features was not DCT-scaled (describe.Options.Validate).
func (ix *Index) decode(data []byte, colour bool) (ingest.Luma, error) {
	opt := ix.set.describe
	opt.Global = colour
	l, err := opt.Decode(data)
	if errors.Is(err, ingest.ErrTooLarge) {
		// ingest's reason starts with ErrTooLarge's text: say it once.
		return ingest.Luma{}, classed{ErrTooLarge, err}
	}
	if err != nil {
		return ingest.Luma{}, fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	return l, nil
}

// classed is err, with err's text, that is also of the class class.
type classed struct{ class, err error }

func (c classed) Error() string   { return c.err.Error() }
func (c classed) Unwrap() []error { return []error{c.class, c.err} }

// bagOfWords returns the TF-IDF bag of words of a decoded photo, made as
// the job made the run's: SIFT on the gray image (as describe.Describer
// does), quantised, weighted with the run's term frequency. It gives up with ctx's error once ctx is
// done: a noise photo of 1600² pixels has about 80,000 keypoints, seconds
// of SIFT and as many of quantising. A photo without keypoints is
// ErrNoFeatures: it matches nothing. If geo is not nil, it receives the
// photo's keypoints at their hard words (photoGeometry).
func (ix *Index) bagOfWords(ctx context.Context, w *worker, photo ingest.Luma, geo *spatial.Geometry) (sparse.Vector, error) {
	if w.ex == nil {
		ex, err := sift.NewExtractor(ix.set.describe.SIFT)
		if err != nil {
			return sparse.Vector{}, err
		}
		q, err := ix.quantizer()
		if err != nil {
			return sparse.Vector{}, err
		}
		w.ex, w.q = ex, q
	}
	kps, desc, err := w.extract(ctx, photo)
	if err != nil {
		return sparse.Vector{}, err
	}
	if len(kps) == 0 {
		return sparse.Vector{}, fmt.Errorf("%w: SIFT finds no keypoint in the %dx%d photo (too small, or without texture)", ErrNoFeatures, photo.Width, photo.Height)
	}
	var words *[]uint32 // the hard words, for geo
	if geo != nil {
		w.words = w.words[:0]
		words = &w.words
	}
	counts, err := ix.quantize(ctx, w.q, desc, words)
	if err != nil {
		return sparse.Vector{}, err
	}
	if geo != nil {
		if err := ix.photoGeometry(w, photo.Width, photo.Height, kps, w.words, geo); err != nil {
			return sparse.Vector{}, err
		}
	}
	return bow.TFIDFWith(counts, ix.idf, ix.set.tf), nil
}

// extract returns the SIFT keypoints and descriptors of a decoded photo
// with w's extractor, as describe.Describer makes them.
func (w *worker) extract(ctx context.Context, photo ingest.Luma) ([]sift.Keypoint, []byte, error) {
	return w.ex.ExtractImage(ctx, photo.Image, photo.Width, photo.Height)
}

// quantize quantises desc in batches of about 2²⁰ descriptor-to-word
// distances (some tens of milliseconds), looking at ctx between them, and
// adds the batches' counts. Hard counts add up exactly; soft weights of a
// photo with more descriptors than one batch may differ from the job's in
// the last bit of float32, as each batch's sums are rounded once. With
// words not nil, it also appends each descriptor's hard word to *words
// (Quantizer.QuantizeWords: under hard assignment, from the same search).
func (ix *Index) quantize(ctx context.Context, q *bow.Quantizer, desc []byte, words *[]uint32) (sparse.Vector, error) {
	batch := 1024
	if ix.forest == nil {
		batch = max(16, (1<<20)/ix.vocab)
	}
	return quantizeBatches(ctx, q, desc, batch, words)
}

// quantizeBatches is quantize in batches of batch descriptors.
func quantizeBatches(ctx context.Context, q *bow.Quantizer, desc []byte, batch int, words *[]uint32) (sparse.Vector, error) {
	batch *= q.Dim()
	var sum sparse.Vector
	for lo := 0; lo < len(desc); lo += batch {
		if err := ctx.Err(); err != nil {
			return sparse.Vector{}, err
		}
		var v sparse.Vector
		if words != nil {
			v, *words = q.QuantizeWords(desc[lo:min(lo+batch, len(desc))], *words)
		} else {
			v = q.Quantize(desc[lo:min(lo+batch, len(desc))])
		}
		if lo == 0 {
			sum = v
		} else {
			sum = sparse.Add(sum, v)
		}
	}
	return sum, nil
}

// code returns the query code of a decoded photo under a learner of
// binary codes: its global features (package global), scaled by the
// run's scaler, embedded by the model's Query and packed.
func (ix *Index) code(w *worker, cs *codes, img image.Image) ([]uint64, error) {
	if w.glob == nil {
		w.glob = global.NewExtractor()
	}
	g, err := w.glob.Extract(img)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadImage, err)
	}
	x, err := global.Concat(nil, g[0], g[1], g[2], g[3], g[4])
	if err != nil {
		return nil, err
	}
	emb := cs.model.Query(nil, widen(nil, ix.scaler.Apply(nil, x)))
	return itq.Pack(emb, nil), nil
}

// quantizer returns a quantiser of the run's vocabulary as the job made
// it (bowbeam): with --akm, hard words through the run's IVF (or the forest,
// for a run trained with one) and soft ones through the forest; exhaustive
// otherwise; with the run's soft assignment.
func (ix *Index) quantizer() (*bow.Quantizer, error) {
	q, err := bow.NewQuantizerOf(ix.centroids, len(ix.centroids)/ix.vocab, ix.forest, ix.ivf)
	if err != nil {
		return nil, err
	}
	if err := q.SetSoft(ix.set.soft); err != nil {
		return nil, err
	}
	return q, nil
}
