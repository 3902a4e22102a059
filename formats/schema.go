package formats

// The row types below are both the Parquet schemas of the pipeline's files and
// the element types that flow between its Beam stages, so a stage's output can
// be written or read back without conversion. Field tags follow parquet-go:
// `list` gives the standard three-level LIST layout, which DuckDB and Spark
// read natively.

// Image is one row of the images manifest (images-*.parquet): an image the
// pipeline was asked to process.
type Image struct {
	// ImageID is unique within a run; it defaults to the file name without
	// its extension.
	ImageID string `parquet:"image_id"`
	// URI is the image's location: a local path or gs://bucket/object.
	URI string `parquet:"uri"`
	// Label is the class used to sample triplets and to judge relevance;
	// empty for unlabelled images.
	Label string `parquet:"label"`
	// Tags are free-text tags, for learners that use text.
	Tags []string `parquet:"tags,list"`
}

// DeadLetter is one row of dead-letters-*.parquet: an input that a stage
// refused, with the reason, so a bad image never fails the job silently or
// loudly.
type DeadLetter struct {
	ImageID string `parquet:"image_id" json:"image_id"`
	URI     string `parquet:"uri" json:"uri"`
	// Stage names the stage that refused the input (for example "decode" or
	// "sift").
	Stage  string `parquet:"stage" json:"stage"`
	Reason string `parquet:"reason" json:"reason"`
}

// DescriptorSize is the length of a SIFT descriptor in bytes.
const DescriptorSize = 128

// FeaturesHead is the head of a Features row: its image and the x of its
// keypoints, one a descriptor. Decoding it from a features file reads
// those two columns alone, about a thirtieth of the file's bytes, for a
// reader that needs only how many keypoints each image has.
type FeaturesHead struct {
	ImageID string    `parquet:"image_id"`
	X       []float32 `parquet:"x,list"`
}

// Features is one row of features-*.parquet: the SIFT keypoints and the
// global features of one image.
// The i-th keypoint is (X[i], Y[i], Scale[i], Angle[i]) with descriptor
// Descriptors[i] of DescriptorSize bytes.
type Features struct {
	ImageID string `parquet:"image_id"`
	Label   string `parquet:"label"`
	// Tags are the image's tags from the input (Image.Tags), carried along
	// for the learners that use text.
	Tags []string `parquet:"tags,list"`
	// Content identifies the bytes the features were computed from (see
	// ContentOf): an incremental run carries an image's features over
	// from the previous run when its id and content are unchanged, and
	// describes it again otherwise.
	Content string `parquet:"content"`
	// Width and Height are those of the image the keypoints were found in
	// (after any downscaling), in pixels.
	Width  int32 `parquet:"width"`
	Height int32 `parquet:"height"`
	// X and Y are pixel coordinates, origin at the top-left pixel's centre.
	X []float32 `parquet:"x,list"`
	Y []float32 `parquet:"y,list"`
	// Scale is the keypoint's σ in pixels of the input image.
	Scale []float32 `parquet:"scale,list"`
	// Angle is the dominant orientation in radians, in [0, 2π).
	Angle       []float32 `parquet:"angle,list"`
	Descriptors [][]byte  `parquet:"descriptors,list"`

	// The global features of the OMDML paper's section 5.3, one list per
	// modality (see package transforms/global for their definitions);
	// empty unless the run asked for them.
	Colour []float32 `parquet:"colour,list"` // 81: HSV histogram and colour moments
	Edge   []float32 `parquet:"edge,list"`   // 37: edge direction histogram
	Gabor  []float32 `parquet:"gabor,list"`  // 120: Gabor texture statistics
	LBP    []float32 `parquet:"lbp,list"`    // 59: uniform LBP(8,1) histogram
	GIST   []float32 `parquet:"gist,list"`   // 512: GIST
}

// Word is one row of codebook-*.parquet: a visual word's centroid in
// descriptor space.
type Word struct {
	WordID   uint32    `parquet:"word_id"`
	Centroid []float32 `parquet:"centroid,list"`
}

// WordStat is one row of idf-*.parquet: how many indexed images contain a
// word, and the inverse document frequency derived from it.
type WordStat struct {
	WordID uint32  `parquet:"word_id"`
	DF     int64   `parquet:"df"`
	IDF    float32 `parquet:"idf"`
}

// BoW is one row of bow-*.parquet: an image's TF-IDF weighted,
// L2-normalised bag of visual words. WordIDs is sorted ascending and
// Weights[i] belongs to WordIDs[i].
type BoW struct {
	ImageID string    `parquet:"image_id"`
	Label   string    `parquet:"label"`
	WordIDs []uint32  `parquet:"word_ids,list"`
	Weights []float32 `parquet:"weights,list"`
}

// Triplet is one row of triplets-*.parquet: Query is more similar to
// Positive than to Negative. Seq orders triplets for online learners, so a
// re-run feeds them in the same order.
type Triplet struct {
	Seq      int64  `parquet:"seq"`
	Query    string `parquet:"query"`
	Positive string `parquet:"positive"`
	Negative string `parquet:"negative"`
}

// ModelWeight is one row of model-*.parquet: a non-zero weight of a learned
// diagonal similarity. Words absent from the file have weight zero.
type ModelWeight struct {
	// Learner names the algorithm, e.g. "solis-ada".
	Learner string `parquet:"learner"`
	// Params is the learner's hyper-parameters as JSON, repeated on every
	// row so that each file describes itself.
	Params string  `parquet:"params"`
	WordID uint32  `parquet:"word_id"`
	Weight float32 `parquet:"weight"`
}

// ModelTensor is one row of model-*.parquet for a learner of dense
// global features (learners.DenseModel): one vector of the model's
// learners.State, whose layout the learner documents (for example
// LOMDML's θ and then each modality's W_i, row-major). The rows of one
// learner, in Index order, restore the model with SetState.
type ModelTensor struct {
	Learner string `parquet:"learner"`
	// Params is the learner's hyper-parameters as JSON.
	Params string `parquet:"params"`
	// Dims are the modality dimensions the model was built for.
	Dims []int64 `parquet:"dims,list"`
	// Steps is the state's step count (learners.State.Steps).
	Steps int64 `parquet:"steps"`
	// Index is the vector's position in State.Vectors.
	Index  int32     `parquet:"index"`
	Values []float64 `parquet:"values,list"`
}

// Posting is one row of index-*.parquet: the inverted list of one visual
// word. Images[i] holds the word with BoW weight Values[i] (with --cosine
// scaled per image to unit length in the learner's metric: doc.go); Weight
// is the learned weight the word's contributions are multiplied by.
type Posting struct {
	Learner string    `parquet:"learner"`
	WordID  uint32    `parquet:"word_id"`
	Weight  float32   `parquet:"weight"`
	Images  []string  `parquet:"images,list"`
	Values  []float32 `parquet:"values,list"`
}

// ReportRow is one row of report-*.parquet: the evaluation of one method
// (a learner, or the TF-IDF cosine baseline) on one relevance level.
type ReportRow struct {
	Method string `parquet:"method" json:"method"`
	// Input names the representation the method ranks: "bow" (bags of
	// visual words) or "global" (dense global features).
	Input string `parquet:"input" json:"input"`
	// Relevance names what counts as relevant, e.g. "label".
	Relevance string `parquet:"relevance" json:"relevance"`
	// Split names the queries: "held-out", images no learner trained on,
	// or "training", images the learners trained on (a sample beside the
	// held-out ones; every query in a run with none held out).
	Split         string  `parquet:"split" json:"split"`
	Queries       int64   `parquet:"queries" json:"queries"`
	MAP           float64 `parquet:"map" json:"map"`
	PrecisionAt10 float64 `parquet:"precision_at_10" json:"precision_at_10"`
	NDCGAt10      float64 `parquet:"ndcg_at_10" json:"ndcg_at_10"`
	// MAPLow … PrecisionAt10High bound the 95% bootstrap intervals of mAP
	// and P@10 over the queries: how much they owe to which queries were
	// drawn.
	MAPLow            float64 `parquet:"map_low" json:"map_low"`
	MAPHigh           float64 `parquet:"map_high" json:"map_high"`
	PrecisionAt10Low  float64 `parquet:"precision_at_10_low" json:"precision_at_10_low"`
	PrecisionAt10High float64 `parquet:"precision_at_10_high" json:"precision_at_10_high"`
	// Baseline names the method a learner is compared with on the same
	// queries ("" for a baseline): MAPDiff is the learner's mAP minus the
	// baseline's, MAPDiffLow and MAPDiffHigh its paired 95% bootstrap
	// interval, MAPDiffP the bootstrap p-value of no difference, and
	// Significant says the interval excludes 0.
	Baseline    string  `parquet:"baseline" json:"baseline"`
	MAPDiff     float64 `parquet:"map_diff" json:"map_diff"`
	MAPDiffLow  float64 `parquet:"map_diff_low" json:"map_diff_low"`
	MAPDiffHigh float64 `parquet:"map_diff_high" json:"map_diff_high"`
	MAPDiffP    float64 `parquet:"map_diff_p" json:"map_diff_p"`
	Significant bool    `parquet:"significant" json:"significant"`
	// Sparsity is the share of exactly-zero weights over the vocabulary.
	Sparsity   float64 `parquet:"sparsity" json:"sparsity"`
	Vocabulary int64   `parquet:"vocabulary" json:"vocabulary"`
	// IndexPostings counts the index's (word, image) entries; words with a
	// zero weight have none.
	IndexPostings int64 `parquet:"index_postings" json:"index_postings"`

	// The times are wall-clock measurements, different on every run: they
	// travel with the row to report.json, report.html and the terminal,
	// but stay out of report-*.parquet, which, like every Parquet file of
	// a run, is the same for the same input and seed.
	TrainSeconds float64 `parquet:"-" json:"train_seconds"`
	IndexSeconds float64 `parquet:"-" json:"index_seconds"`
	// QuerySeconds is the time to answer all Queries one after another:
	// the sum of per-query search times, whatever the number of cores.
	QuerySeconds float64 `parquet:"-" json:"query_seconds"`

	// PR is the mean interpolated precision at recall 0, 0.1, …, 1 (the
	// precision–recall curve), and LabelMAP[i] the mAP of the queries of
	// label Labels[i]: for the report's plots, not its Parquet table.
	PR       []float64 `parquet:"-" json:"precision_recall"`
	Labels   []string  `parquet:"-" json:"labels"`
	LabelMAP []float64 `parquet:"-" json:"label_map"`
}

// Geometry is one row of geometry-*.parquet: where an image's keypoints
// are, for spatial verification (do the words two images share agree on
// one transformation?), beside its bag of words and without its
// descriptors. Keypoint i has the hard (nearest) visual word WordIDs[i]
// (ascending, so that two images' keypoints of a word are found by
// merging; those of one word in the features' order) and the quantised
// position, scale and angle X[i], Y[i], LogScale[i], Angle[i]. Decode
// turns them back into pixels and radians; GeometryOf makes them, and the
// constants beside it bound their error. Every list is delta-encoded
// (DELTA_BINARY_PACKED), the smallest of the layouts DuckDB reads as lists
// (see formats/doc.go).
type Geometry struct {
	ImageID string `parquet:"image_id"`
	// Width and Height are the image's size in pixels (Features.Width and
	// Height): the frame the coordinates are fractions of.
	Width   int32    `parquet:"width"`
	Height  int32    `parquet:"height"`
	WordIDs []uint32 `parquet:"word_ids,list" parquet-element:",delta"`
	// X is round((x+0.5)·65535/Width) for the keypoint's x in pixels
	// (Features.X), clamped to [0, 65535], and Y likewise with Height.
	X []uint16 `parquet:"x,list" parquet-element:",delta"`
	Y []uint16 `parquet:"y,list" parquet-element:",delta"`
	// LogScale is round(16·(log₂σ + 4)) for the keypoint's σ in pixels
	// (Features.Scale), clamped to [0, 255]: 1/16-octave steps from σ =
	// 1/16. Angle is round(256·θ/2π) mod 256 for its orientation θ in
	// radians (Features.Angle). Both are byte codes held in 16 bits:
	// parquet-go writes a list of uint8 as empty lists.
	LogScale []uint16 `parquet:"log_scale,list" parquet-element:",delta"`
	Angle    []uint16 `parquet:"angle,list" parquet-element:",delta"`
}
