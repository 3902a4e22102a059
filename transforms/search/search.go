// Package search answers retrieval queries against a finished run of the
// job: it loads the run's inverted indexes, bags of words, vocabulary and
// IDF (local or gs://, through formats/blob) into compact arrays, and
// ranks the collection for an indexed image or for a new photo.
//
// A query gets exactly what the job's evaluation would compute for it. A
// photo is decoded as the run's describe stage decoded its images
// (describe.Options.Decode: a JPEG's luma alone unless its learner reads
// colour, with the run's pixel limit, DCT-scaled if the run was),
// described with the run's SIFT settings (package sift, as package
// describe does), quantised with the run's own quantiser — exhaustive, or
// the approximate k-means forest rebuilt from the codebook as the job
// rebuilt it, hard or soft — and weighted by the run's IDF (package bow);
// an indexed image queries with its bag of words from the run's bow
// files. Both are scored by transforms/index, which scores the
// evaluation, S_w(q, x) = Σ_i w_i q_i x_i in float64, and ranked the same
// way, ties by image id, so an id query ranks the collection exactly as
// the report's evaluation did.
//
// The learners of binary codes of the global features (ITQ, CCA-ITQ, LSH,
// mGLP) are served too: the job writes no per-image codes, so every
// image's item and query codes are computed at load from the features
// files and the saved model, scaled as the job scales them, and a query
// ranks every code by Hamming distance, a popcount of packed uint64 words
// (about 1.6 ms for a million 64-bit codes on one core: no multi-index
// hashing needed). A photo gets its global features (package global).
//
// # Memory
//
// Each learner's index is a transforms/index.Index made from its arrays
// (index.FromPostings), held compressed-sparse-row style: one array of
// 32-bit image ordinals and one of float32 values for all its postings
// (8 bytes a posting), the image ids shared by every learner, all of them
// substrings of one string (16 bytes an image and the ids' bytes). The
// bags of words are held once as well, image by image, for queries by id;
// the TF-IDF baseline is an index of its own over the same values. Files
// are read one at a time and their rows decoded a few at a time; every
// array is allocated once at its final size from the words' document
// frequencies (idf files), so loading never holds an index twice.
//
// # Re-ranking and query expansion
//
// A run whose job wrote geometry files (each image's keypoints at their
// hard words, formats.Geometry) can re-rank any learner's best hits by
// spatial verification and expand a query with its verified results
// (Refine; SearchIDRefined, SearchImageRefined). The keypoints are held as
// the files code them, 10 bytes a keypoint (word, 16-bit x and y, byte
// codes of scale and angle) in blocks of up to 16 MB that loading appends
// to, never copies, plus 20 bytes an image; Options.MaxKeypoints keeps the
// largest-scale keypoints of each image to bound them, and
// Options.NoGeometry leaves them out. A candidate's keypoints are decoded
// when it is verified: a few microseconds for hundreds of keypoints, against
// tens for the verification. With the geometry comes each image's
// near-copy sketch, its Options.NearCopyWords rarest words (8 bytes a
// word), whose best matches for a query Refine.NearCopies verifies too.
package search

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/sift"
	"github.com/bowline/bowline/transforms/spatial"
)

// Errors that the errors of SearchID and SearchImage wrap, so that a
// caller (the HTTP service) can tell a client's mistake from a failure.
var (
	// ErrUnknownImage reports an image id the run did not index.
	ErrUnknownImage = errors.New("unknown image")
	// ErrUnknownLearner reports a learner the run has no index of.
	ErrUnknownLearner = errors.New("unknown learner")
	// ErrBadImage reports bytes that are not an image the job can decode.
	ErrBadImage = errors.New("not a decodable image")
	// ErrTooLarge reports an image with more pixels than the limit.
	ErrTooLarge = errors.New("image too large")
	// ErrNoFeatures reports a photo in which no feature is found (no SIFT
	// keypoint: too small, or uniform), which therefore matches nothing.
	ErrNoFeatures = errors.New("no features found")
)

// TFIDF names the baseline: cosine similarity of the TF-IDF bags of words.
const TFIDF = string(learners.BaselineTFIDF)

// Hit is one ranked image.
type Hit struct {
	ImageID string
	// Score is the similarity S_w(query, image): higher is better.
	Score float64
	// Inliers is the number of the query's keypoints that spatial
	// verification found where one affine map of the query puts them in
	// this image, counted once a word and once a region
	// (spatial.Result.Support), if it was verified (Refine): 0 otherwise.
	Inliers int
	// Verified reports that the match passed spatial's acceptance: more
	// inliers than chance explains (spatial.Result.Verified).
	Verified bool
}

// Options configures Open.
type Options struct {
	// MaxPixels refuses query images whose header declares more pixels
	// (0: the run's own limit, --max_pixels). It can only lower the run's
	// limit: a photo the job would have refused is never described.
	MaxPixels int64
	// Learners, if set, loads only these learners' indexes ("tfidf" for
	// the baseline); by default every one the run has. The TF-IDF index
	// is as large as the bags of words: leave it out to halve the memory
	// when it is not served.
	Learners []string
	// NoGeometry leaves the run's keypoint geometry unloaded, and with it
	// re-ranking and query expansion (ErrNoGeometry): about 10 bytes a
	// keypoint kept (MaxKeypoints).
	NoGeometry bool
	// MaxKeypoints keeps at most this many keypoints of each image for
	// spatial verification, those of the largest scale (0: all of them):
	// it bounds the geometry's memory at 10 bytes a keypoint, and a
	// verification's time.
	MaxKeypoints int
	// NearCopyWords is the number of each image's rarest words its
	// near-copy sketch holds (Refine.NearCopies), loaded with the
	// geometry: 8 bytes a word an image (0: DefaultNearCopyWords).
	NearCopyWords int
}

// Index is a loaded run, ready for queries. It is read-only after Open and
// safe for concurrent use: each query borrows per-goroutine scratch from
// a pool.
type Index struct {
	run     string
	serving string // the learner published.json names, if any
	set     settings

	ids    []string // image ids, sorted, in one buffer: the ordinal of an image is its rank
	uris   arena    // by ordinal
	labels []uint32
	names  []string // labels[d] indexes names

	// The bags of words in the order they were read: image d's is
	// words[off[a]:off[a+1]] with a = arrival[d].
	arrival []uint32
	off     []int64
	words   []uint32
	vals    []float32

	vocab     int
	idf       []float32
	centroids []float32
	forest    *nn.Forest
	ivf       *nn.IVF     // hard words of an IVF-trained vocabulary
	geo       *geometries // keypoints for spatial verification, if loaded
	sketch    *scored     // each image's rarest words, with geo (nearcopy.go)

	bow      map[string]*scored // by learner, TF-IDF included
	codes    map[string]*codes  // learners of binary codes
	scaler   *global.Scaler     // of the global features, if codes
	learners []string

	pool sync.Pool // of *worker
}

// worker is one goroutine's scratch, each part made on first use: the
// distances of a Hamming ranking and, for image queries, a SIFT extractor
// and a quantiser, or a global features extractor. (The scratch of a
// search of bags of words is the learner's: see scored.)
type worker struct {
	dist []uint16
	ex   *sift.Extractor
	q    *bow.Quantizer
	glob *global.Extractor
	// Spatial verification: the matcher, the query's and a candidate's
	// keypoints, a photo's hard words and its packed keypoints.
	match  *spatial.Matcher
	qg, cg spatial.Geometry
	words  []uint32
	pk     packer
	// ones is a query's words at value 1, for the near-copy sketch.
	ones []float32
}

// Run returns the resolved run directory.
func (ix *Index) Run() string { return ix.run }

// Learners returns the learners that can be searched: the TF-IDF baseline
// ("tfidf") first, then the learners of bags of words by name, then those
// of binary codes of the global features (itq, cca-itq, lsh, mglp) by
// name. The other learners of global features (Euclidean or dot-product
// embeddings) are not served.
func (ix *Index) Learners() []string { return slices.Clone(ix.learners) }

// ServingLearner returns the learner to search by default: the one
// published.json names when the run was opened through it (and loaded),
// else solis-ada if loaded, else the first learned one, else TF-IDF.
func (ix *Index) ServingLearner() string {
	if _, _, err := ix.learner(ix.serving); err == nil {
		return ix.serving
	}
	if _, ok := ix.bow["solis-ada"]; ok {
		return "solis-ada"
	}
	for _, l := range ix.learners {
		if l != TFIDF {
			return l
		}
	}
	if len(ix.learners) > 0 {
		return ix.learners[0]
	}
	return ""
}

// Images returns the number of indexed images.
func (ix *Index) Images() int { return len(ix.ids) }

// ImageID returns the id of the d-th indexed image in id order, 0 ≤ d <
// Images(): a benchmark draws its queries from the run's own images by it,
// without a copy of every id.
func (ix *Index) ImageID(d int) string { return ix.ids[d] }

// Postings returns the number of postings of a learner's index (0 for a
// learner of binary codes or an unknown one).
func (ix *Index) Postings(learner string) int64 {
	if p, ok := ix.bow[learner]; ok {
		return int64(p.ix.NNZ())
	}
	return 0
}

// MemoryBytes returns the bytes held by the loaded index: ids, locations,
// labels, bags of words, every learner's postings, the geometry and the
// near-copy sketch, and the vocabulary (the approximate k-means forest's
// nodes excepted: a few bytes a word).
func (ix *Index) MemoryBytes() int64 {
	n := stringsBytes(ix.ids) + ix.uris.bytes() + 4*int64(cap(ix.labels)) + 4*int64(cap(ix.arrival)) +
		8*int64(cap(ix.off)) + 4*int64(cap(ix.words)) + 4*int64(cap(ix.vals)) +
		4*int64(cap(ix.idf)) + 4*int64(cap(ix.centroids))
	for _, p := range ix.bow {
		n += p.bytes
	}
	for _, c := range ix.codes {
		n += c.bytes()
	}
	if ix.geo != nil {
		n += ix.geo.bytes()
	}
	if ix.sketch != nil {
		n += ix.sketch.bytes
	}
	return n
}

// URI returns the location of an indexed image (local path or gs://), for
// thumbnails.
func (ix *Index) URI(imageID string) (string, bool) {
	d, ok := slices.BinarySearch(ix.ids, imageID)
	if !ok {
		return "", false
	}
	return ix.uris.get(d), true
}

// Label returns the label of an indexed image.
func (ix *Index) Label(imageID string) (string, bool) {
	d, ok := slices.BinarySearch(ix.ids, imageID)
	if !ok {
		return "", false
	}
	return ix.names[ix.labels[d]], true
}

// Result is a search's answer.
type Result struct {
	// Hits are the best of the matching images, best first: at most k.
	Hits []Hit
	// Matched is the number of images that match the query in all.
	// Under a learner of bags of words they are those of positive score:
	// an image sharing no weighted word with the query scores 0, and is
	// no result however many tie with it (in id order, the evaluation's
	// tie-break). Under a learner of binary codes every image with a code
	// matches, at its Hamming distance.
	Matched int
}

// SearchID returns the k images most similar to the indexed image imageID
// under learner, best first, the image itself left out: the matching head
// of the ranking the job's evaluation made for it as a query (RankID). k ≤
// 0 returns every match.
//
// A learner of binary codes ranks by ascending Hamming distance, ties by
// id, each hit scored minus its distance, among the images with global
// features; an image without has no code and is unknown to it.
func (ix *Index) SearchID(learner, imageID string, k int) (Result, error) {
	hits, matched, err := ix.rankID(learner, imageID, k)
	if err != nil {
		return Result{}, err
	}
	return Result{Hits: hits[:min(len(hits), matched)], Matched: matched}, nil
}

// RankID returns the ranking the job's evaluation made for the indexed
// image imageID as a query: every other image (with a code, for a learner
// of binary codes), those of score 0 or below included, ties by id. It is
// what average precision is computed from; a search service wants
// SearchID.
func (ix *Index) RankID(learner, imageID string) ([]Hit, error) {
	hits, _, err := ix.rankID(learner, imageID, 0)
	return hits, err
}

// rankID returns the first k of imageID's ranking (all if k ≤ 0) and the
// number of matching images; the matches come first.
func (ix *Index) rankID(learner, imageID string, k int) ([]Hit, int, error) {
	p, cs, err := ix.learner(learner)
	if err != nil {
		return nil, 0, err
	}
	d, ok := slices.BinarySearch(ix.ids, imageID)
	if !ok || (cs != nil && !cs.has[d]) {
		return nil, 0, fmt.Errorf("image %q: %w", imageID, ErrUnknownImage)
	}
	if cs != nil {
		w := ix.worker()
		defer ix.pool.Put(w)
		return ix.hits(w.hamming(cs, cs.query[d*cs.words:(d+1)*cs.words], k, d)), cs.count - 1, nil
	}
	a := ix.arrival[d]
	lo, hi := ix.off[a], ix.off[a+1]
	hits, matched := p.search(sparse.Vector{Idx: ix.words[lo:hi], Val: ix.vals[lo:hi]}, k, d)
	return named(hits), matched, nil
}

// SearchImage returns the k indexed images most similar to the photo data
// (JPEG, PNG, GIF or WebP bytes) under learner, best first: the photo is
// described, quantised and weighted as the job did the run's own images.
// Errors wrap ErrUnknownLearner, ErrBadImage (and the ingest package's
// reason), ErrTooLarge, ErrNoFeatures, or ctx's error, which description
// and quantisation look at as they go.
//
// Its Result holds the matches only, as SearchID's does.
func (ix *Index) SearchImage(ctx context.Context, learner string, data []byte, k int) (Result, error) {
	return ix.SearchImageRefined(ctx, learner, data, k, Refine{})
}

// SearchImageRefined is SearchImage, its hits re-ranked and its query
// expanded as r asks (see Refine). The photo's keypoints are verified at
// their hard words under the run's quantiser, whatever its soft
// assignment, as the run's geometry files hold every image's. Errors wrap
// those of SearchImage, ErrNoGeometry and ErrCannotExpand.
func (ix *Index) SearchImageRefined(ctx context.Context, learner string, data []byte, k int, r Refine) (res Result, err error) {
	p, cs, err := ix.learner(learner)
	if err != nil {
		return Result{}, err
	}
	refined := r != (Refine{})
	if refined {
		if err := ix.refinable(learner, cs != nil, r); err != nil {
			return Result{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	w := ix.worker()
	defer func() {
		if rec := recover(); rec != nil {
			// A decoder or extractor bug is this photo's failure; the
			// worker's buffers may be half written, so it is dropped.
			res, err = Result{}, fmt.Errorf("%w: panic while describing: %v", ErrBadImage, rec)
			return
		}
		ix.pool.Put(w)
	}()
	photo, err := ix.decode(data, cs != nil)
	if err != nil {
		return Result{}, err
	}
	defer photo.Release()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if cs != nil {
		q, err := ix.code(w, cs, photo.Image)
		if err != nil {
			return Result{}, err
		}
		if refined {
			if _, err := ix.bagOfWords(ctx, w, photo, &w.qg); err != nil {
				return Result{}, err
			}
			return ix.searchImageRefined(w, nil, cs, q, sparse.Vector{}, k, r)
		}
		return Result{Hits: ix.hits(w.hamming(cs, q, k, -1)), Matched: cs.count}, nil
	}
	var geo *spatial.Geometry // the photo's keypoints, if verified
	if refined {
		geo = &w.qg
	}
	q, err := ix.bagOfWords(ctx, w, photo, geo)
	if err != nil {
		return Result{}, err
	}
	if refined {
		return ix.searchImageRefined(w, p, nil, nil, q, k, r)
	}
	hits, matched := p.search(q, k, -1)
	return Result{Hits: named(hits[:min(len(hits), matched)]), Matched: matched}, nil
}

// learner returns learner's index, or its codes.
func (ix *Index) learner(learner string) (*scored, *codes, error) {
	if p, ok := ix.bow[learner]; ok {
		return p, nil, nil
	}
	if c, ok := ix.codes[learner]; ok {
		return nil, c, nil
	}
	return nil, nil, fmt.Errorf("learner %q (the run has %v): %w", learner, ix.learners, ErrUnknownLearner)
}

// worker borrows a worker from the pool.
func (ix *Index) worker() *worker {
	if w, ok := ix.pool.Get().(*worker); ok {
		return w
	}
	return &worker{}
}

// hits names the ranked ordinals.
func (ix *Index) hits(r []rankHit) []Hit {
	out := make([]Hit, len(r))
	for i, h := range r {
		out[i] = Hit{ImageID: ix.ids[h.doc], Score: h.score}
	}
	return out
}

// named returns the hits of a search of an index of bags of words.
func named(r []index.Hit) []Hit {
	out := make([]Hit, len(r))
	for i, h := range r {
		out[i] = Hit{ImageID: h.ID, Score: h.Score}
	}
	return out
}
