// Package synthetic is a corpus of labelled images that exist only as
// their SIFT-like descriptors, generated from each image's id, so that the
// job can be run end to end at any size — a million images on one machine —
// without a million photos. It stands in for decoding and SIFT only: every
// later stage (vocabulary, bags of words, triplets, learners, index,
// evaluation) is the real one.
//
// # The generative model
//
// A corpus is Spec{N, Labels, Descriptors, Seed}. Image i has the id
// ID(i) and the label i mod Labels. From Seed alone come three kinds of
// prototype descriptors, each 128 bytes drawn uniformly from [0, 255]:
// Common ones that turn up in most images, a large pool of Clutter ones
// that turn up in few, and PerLabel ones of each label. An image draws n
// descriptors, n uniform in [Descriptors/2, 3·Descriptors/2]; each is, with
// probability LabelShare, one of its label's prototypes, with probability
// ClutterShare one of the clutter pool's, and otherwise a common one — plus
// Gaussian noise of standard deviation Noise per coordinate, rounded and
// clipped to [0, 255] as real SIFT bytes are. Keypoints lie uniformly in a
// 640×480 frame with random scale and angle. Every draw comes from a random
// stream seeded by (Seed, id), so an image's descriptors do not depend on
// which worker makes them or in what order.
//
// An image's label words are thus a minority among clutter words that are
// about as rare (so TF-IDF weighs them alike) and common words that every
// label shares: TF-IDF ranks by all of them, a learned diagonal similarity
// can learn to weigh the label words up and the rest down — the structure
// of the project's shapes test set, at any scale.
package synthetic

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"

	"github.com/bowline/bowline/formats"
)

// Scheme starts an input that names a synthetic corpus:
// "synthetic:N" or "synthetic:N?labels=L&descriptors=D&seed=S".
const Scheme = "synthetic:"

// The model's fixed shape.
const (
	Common       = 32   // prototypes that turn up in most images
	Clutter      = 4096 // prototypes that turn up in few images, whatever their label
	PerLabel     = 16   // prototypes of each label
	LabelShare   = 0.03 // probability a descriptor is one of its label's prototypes
	ClutterShare = 0.6  // probability a descriptor is a clutter prototype
	Noise        = 16.0 // standard deviation of the per-coordinate noise
	width        = 640
	height       = 480
)

// Spec is a synthetic corpus.
type Spec struct {
	// N is the number of images, Labels the number of labels.
	N, Labels int
	// Descriptors is the mean number of descriptors per image.
	Descriptors int
	Seed        uint64
}

// IsInput reports whether input names a synthetic corpus.
func IsInput(input string) bool { return strings.HasPrefix(input, Scheme) }

// Parse reads an input of the form "synthetic:N[?labels=L&descriptors=D&seed=S]";
// the defaults are 10 labels, 200 descriptors and seed 1.
func Parse(input string) (Spec, error) {
	if !IsInput(input) {
		return Spec{}, fmt.Errorf("synthetic: %q does not start with %q", input, Scheme)
	}
	rest := strings.TrimPrefix(input, Scheme)
	n, query, _ := strings.Cut(rest, "?")
	s := Spec{Labels: 10, Descriptors: 200, Seed: 1}
	var err error
	if s.N, err = strconv.Atoi(n); err != nil {
		return Spec{}, fmt.Errorf("synthetic: %q: the image count %q is not a number", input, n)
	}
	vals, err := url.ParseQuery(query)
	if err != nil {
		return Spec{}, fmt.Errorf("synthetic: %q: %w", input, err)
	}
	for k, v := range vals {
		var err error
		switch k {
		case "labels":
			s.Labels, err = strconv.Atoi(v[0])
		case "descriptors":
			s.Descriptors, err = strconv.Atoi(v[0])
		case "seed":
			s.Seed, err = strconv.ParseUint(v[0], 10, 64)
		default:
			err = fmt.Errorf("unknown setting (want labels, descriptors or seed)")
		}
		if err != nil {
			return Spec{}, fmt.Errorf("synthetic: %q: %s: %w", input, k, err)
		}
	}
	return s, s.Validate()
}

// String returns the input that names s.
func (s Spec) String() string {
	return fmt.Sprintf("%s%d?labels=%d&descriptors=%d&seed=%d", Scheme, s.N, s.Labels, s.Descriptors, s.Seed)
}

// Validate reports a corpus that cannot be made.
func (s Spec) Validate() error {
	switch {
	case s.N < 1:
		return fmt.Errorf("synthetic: %d images", s.N)
	case s.Labels < 1 || s.Labels > s.N:
		return fmt.Errorf("synthetic: %d labels for %d images", s.Labels, s.N)
	case s.Descriptors < 2:
		return fmt.Errorf("synthetic: %d descriptors per image, want at least 2", s.Descriptors)
	}
	return nil
}

// ID returns the id of image i.
func ID(i int) string { return fmt.Sprintf("syn-%09d", i) }

// Image returns the record of image i: its id, label and a URI that names
// the corpus and the image.
func (s Spec) Image(i int) formats.Image {
	return formats.Image{ImageID: ID(i), URI: s.String() + "#" + strconv.Itoa(i), Label: fmt.Sprintf("label-%03d", i%s.Labels)}
}

// Content returns the content identity of img, an image of the corpus
// (formats.Features.Content): what its features depend on — the model's
// settings but not N, and the image's id and label — so that image i of
// synthetic:1000 and of synthetic:1100 with the same settings is the same
// image, and an incremental run carries its features over.
func (s Spec) Content(img formats.Image) string {
	return fmt.Sprintf("%slabels=%d&descriptors=%d&seed=%d#%s@%s", Scheme, s.Labels, s.Descriptors, s.Seed, img.ImageID, img.Label)
}

// Images returns the records of every image, in id order.
func (s Spec) Images() []formats.Image {
	out := make([]formats.Image, s.N)
	for i := range out {
		out[i] = s.Image(i)
	}
	return out
}

// Generator makes the features of a corpus's images; it holds the
// prototypes, Common+Clutter+Labels·PerLabel descriptors (0.5 MB plus 1 KB
// per label), and is safe for concurrent use.
type Generator struct {
	spec   Spec
	protos []byte // prototype p is protos[p*128 : (p+1)*128]: common, clutter, then by label
}

// NewGenerator returns the generator of s.
func NewGenerator(s Spec) (*Generator, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	n := Common + Clutter + s.Labels*PerLabel
	g := &Generator{spec: s, protos: make([]byte, n*formats.DescriptorSize)}
	r := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	for i := range g.protos {
		g.protos[i] = byte(r.IntN(256))
	}
	return g, nil
}

// Features returns the features of img, an image of the corpus: its id
// and label decide its descriptors.
func (g *Generator) Features(img formats.Image) (formats.Features, error) {
	label := -1
	if _, err := fmt.Sscanf(img.Label, "label-%d", &label); err != nil || label < 0 || label >= g.spec.Labels {
		return formats.Features{}, fmt.Errorf("synthetic: image %s has label %q, not one of the corpus's %d", img.ImageID, img.Label, g.spec.Labels)
	}
	h := fnv.New64a()
	h.Write([]byte(img.ImageID))
	r := rand.New(rand.NewPCG(g.spec.Seed, h.Sum64()))
	d := g.spec.Descriptors
	n := d/2 + r.IntN(d+1)
	f := formats.Features{ImageID: img.ImageID, Label: img.Label, Tags: img.Tags, Content: g.spec.Content(img), Width: width, Height: height,
		X: make([]float32, n), Y: make([]float32, n), Scale: make([]float32, n), Angle: make([]float32, n),
		Descriptors: make([][]byte, n)}
	buf := make([]byte, n*formats.DescriptorSize)
	for k := 0; k < n; k++ {
		var p int
		switch u := r.Float64(); {
		case u < LabelShare:
			p = Common + Clutter + label*PerLabel + r.IntN(PerLabel)
		case u < LabelShare+ClutterShare:
			p = Common + r.IntN(Clutter)
		default:
			p = r.IntN(Common)
		}
		proto := g.protos[p*formats.DescriptorSize : (p+1)*formats.DescriptorSize]
		desc := buf[k*formats.DescriptorSize : (k+1)*formats.DescriptorSize : (k+1)*formats.DescriptorSize]
		for j, v := range proto {
			desc[j] = byte(math.Max(0, math.Min(255, math.Round(float64(v)+Noise*r.NormFloat64()))))
		}
		f.Descriptors[k] = desc
		f.X[k], f.Y[k] = float32(r.Float64()*width), float32(r.Float64()*height)
		f.Scale[k], f.Angle[k] = float32(1.6*math.Exp2(4*r.Float64())), float32(2*math.Pi*r.Float64())
	}
	return f, nil
}
