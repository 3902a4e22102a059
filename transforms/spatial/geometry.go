package spatial

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Geometry is the part of an image that spatial verification reads: for
// every keypoint its visual word and its SIFT frame, in flat parallel
// slices (keypoint k is Words[k], X[k], Y[k], Scale[k], Angle[k]), 20 bytes
// a keypoint.
//
// The keypoints must be sorted by word (non-decreasing Words), so that
// finding the keypoints two images share is a merge of two sorted lists;
// Sort puts them in that order, and Validate checks it. Within a word, the
// order decides which pairs a bursty word contributes when it has more than
// Options.MaxPerWord (see Matcher.Verify); Sort puts the largest scale
// first.
//
// The frame follows transforms/sift.Keypoint: X, Y in pixels of the image
// as described (the centre of pixel (i, j) at (i, j), y down), Scale the
// Gaussian σ in those pixels (> 0), Angle the dominant gradient direction
// in radians, measured from +x towards +y (any real value; it is taken
// modulo 2π).
//
// Width and Height are the image's size in the same pixels; the reprojection
// threshold is a fraction of the candidate's longer side, so that images
// described at different resolutions are judged alike. Zero means unknown:
// the bounding box of the keypoints stands in for the image.
type Geometry struct {
	Width, Height float32
	Words         []uint32
	X, Y          []float32
	Scale, Angle  []float32
}

// Len returns the number of keypoints.
func (g *Geometry) Len() int { return len(g.Words) }

// Append adds one keypoint at the end. It does not keep the word order:
// call Sort once all keypoints are in.
func (g *Geometry) Append(word uint32, x, y, scale, angle float32) {
	g.Words = append(g.Words, word)
	g.X = append(g.X, x)
	g.Y = append(g.Y, y)
	g.Scale = append(g.Scale, scale)
	g.Angle = append(g.Angle, angle)
}

// Reset empties g, keeping its slices' capacity for reuse.
func (g *Geometry) Reset() {
	g.Width, g.Height = 0, 0
	g.Words, g.X, g.Y, g.Scale, g.Angle = g.Words[:0], g.X[:0], g.Y[:0], g.Scale[:0], g.Angle[:0]
}

// Sort puts the keypoints in canonical order: by word, then by decreasing
// scale, then by Y, X and Angle. The order depends only on the set of
// keypoints, not on the order they were appended in, so verification does
// not either.
func (g *Geometry) Sort() { sort.Sort(byWord{g}) }

type byWord struct{ g *Geometry }

func (s byWord) Len() int { return len(s.g.Words) }

func (s byWord) Less(i, j int) bool {
	g := s.g
	switch {
	case g.Words[i] != g.Words[j]:
		return g.Words[i] < g.Words[j]
	case g.Scale[i] != g.Scale[j]:
		return g.Scale[i] > g.Scale[j]
	case g.Y[i] != g.Y[j]:
		return g.Y[i] < g.Y[j]
	case g.X[i] != g.X[j]:
		return g.X[i] < g.X[j]
	}
	return g.Angle[i] < g.Angle[j]
}

func (s byWord) Swap(i, j int) {
	g := s.g
	g.Words[i], g.Words[j] = g.Words[j], g.Words[i]
	g.X[i], g.X[j] = g.X[j], g.X[i]
	g.Y[i], g.Y[j] = g.Y[j], g.Y[i]
	g.Scale[i], g.Scale[j] = g.Scale[j], g.Scale[i]
	g.Angle[i], g.Angle[j] = g.Angle[j], g.Angle[i]
}

// Validate reports whether g can be verified: parallel slices of one
// length, words in non-decreasing order, finite coordinates and angles,
// scales positive and finite, and a size that is finite and not negative.
// Verify itself checks only the lengths (it is called for every candidate
// of every query, and the rest costs a pass over the keypoints); call
// Validate where geometries are read.
func (g *Geometry) Validate() error {
	n := len(g.Words)
	if len(g.X) != n || len(g.Y) != n || len(g.Scale) != n || len(g.Angle) != n {
		return fmt.Errorf("spatial: geometry of %d words has %d x, %d y, %d scales and %d angles",
			n, len(g.X), len(g.Y), len(g.Scale), len(g.Angle))
	}
	if !finite(g.Width) || !finite(g.Height) || g.Width < 0 || g.Height < 0 {
		return fmt.Errorf("spatial: geometry size %v×%v, want finite and >= 0", g.Width, g.Height)
	}
	var errs []error
	for k := range n {
		if len(errs) == 3 {
			errs = append(errs, errors.New("spatial: (further errors not shown)"))
			break
		}
		switch {
		case k > 0 && g.Words[k] < g.Words[k-1]:
			errs = append(errs, fmt.Errorf("spatial: keypoint %d: word %d after word %d: keypoints not sorted by word (see Geometry.Sort)", k, g.Words[k], g.Words[k-1]))
		case !finite(g.X[k]) || !finite(g.Y[k]) || !finite(g.Angle[k]):
			errs = append(errs, fmt.Errorf("spatial: keypoint %d: x %v, y %v, angle %v, want finite", k, g.X[k], g.Y[k], g.Angle[k]))
		case !(g.Scale[k] > 0) || !finite(g.Scale[k]):
			errs = append(errs, fmt.Errorf("spatial: keypoint %d: scale %v, want finite and > 0", k, g.Scale[k]))
		}
	}
	return errors.Join(errs...)
}

func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
