package run

// Settings are the settings of a run that a reader needs to reproduce its
// vectors and rankings: how a photo is decoded and described, quantised
// against the vocabulary and weighted, how results are ranked, and what
// each learner trained with. They are recorded by meaning, not by the
// command line that set them: a renamed flag changes no file.
//
// The fields mirror the options of the stages that use them (sift.Options,
// nn.ForestOptions, nn.IVFOptions, bow.SoftOptions, bow.TF); JSON keys
// are snake_case.
type Settings struct {
	// SIFT are the options of the SIFT extractor (sift.Options).
	SIFT SIFT `json:"sift"`
	// MaxPixels refuses an image whose header declares more pixels,
	// before decoding it (0: no limit).
	MaxPixels int64 `json:"max_pixels"`
	// DCTScale decodes JPEGs of at least twice SIFT.MaxSide DCT-domain
	// scaled (describe.Options.DCTScale).
	DCTScale bool `json:"dct_scale,omitempty"`
	// DCTVersion is the reduced transforms DCTScale decoded through
	// (describe.Options.DCTVersion; 0 in a run that recorded none:
	// libjpeg's reduced IDCT).
	DCTVersion int `json:"dct_version,omitempty"`
	// Vocabulary is how a descriptor finds its words.
	Vocabulary Vocabulary `json:"vocabulary"`
	// Soft is the soft assignment of descriptors to words (bow.SoftOptions:
	// Words is R, 0 for hard assignment).
	Soft Soft `json:"soft"`
	// TF is the term frequency of the bags of words (bow.TF: "raw",
	// "sqrt", "log").
	TF string `json:"tf"`
	// Cosine ranks each learner's results by the cosine in its metric;
	// false ranks by the bilinear score.
	Cosine bool `json:"cosine"`
	// LabelColumn is the input's column the images' labels came from.
	LabelColumn string `json:"label_column"`
	// Seed is the job's seed.
	Seed uint64 `json:"seed"`
	// Learners are the hyper-parameters each learner trained with, by
	// learner and parameter name (tuned values where tuning chose them).
	Learners map[string]map[string]float64 `json:"learners,omitempty"`
}

// SIFT are the options of the SIFT extractor, as sift.Options.
type SIFT struct {
	ScalesPerOctave   int     `json:"scales_per_octave"`
	Sigma             float64 `json:"sigma"`
	ContrastThreshold float64 `json:"contrast_threshold"`
	EdgeThreshold     float64 `json:"edge_threshold"`
	DoubleImage       bool    `json:"double_image"`
	// DoubleBelow is 0 in a run that recorded none: it doubled every
	// image.
	DoubleBelow  int  `json:"double_below"`
	MaxKeypoints int  `json:"max_keypoints"`
	MaxSide      int  `json:"max_side"`
	RootSIFT     bool `json:"root_sift"`
}

// Vocabulary is how the run's descriptors found their words. Without
// Forest the search is exact; with it (an approximate vocabulary) soft
// words are searched through the forest, and hard words through the IVF
// if there is one, else through the forest.
type Vocabulary struct {
	// Words is the number of words.
	Words  int     `json:"words"`
	Forest *Forest `json:"forest,omitempty"`
	IVF    *IVF    `json:"ivf,omitempty"`
}

// Forest are the options of a randomised kd-forest, as nn.ForestOptions.
type Forest struct {
	Trees    int    `json:"trees"`
	LeafSize int    `json:"leaf_size"`
	Checks   int    `json:"checks"`
	Seed     uint64 `json:"seed"`
}

// IVF are the options an inverted file is trained with, as
// nn.IVFOptions (Lists 0: kmeans.TrainIVF's default for the vocabulary).
type IVF struct {
	Lists  int    `json:"lists"`
	Probes int    `json:"probes"`
	Seed   uint64 `json:"seed"`
}

// Soft is soft assignment, as bow.SoftOptions.
type Soft struct {
	Words int     `json:"words"`
	Sigma float64 `json:"sigma"`
}
