package spatial

import (
	"errors"
	"fmt"
	"math"
)

// Options configures a Matcher. The zero value is not valid; start from
// DefaultOptions.
type Options struct {
	// MaxPerWord caps the tentative correspondences one word contributes: a
	// word seen a times in the query and b times in the candidate gives
	// min(a·b, MaxPerWord) pairs, chosen so that each keypoint of the
	// word is used once before any is used twice (4). A burst (a repeated
	// texture putting tens of keypoints on one word) would otherwise give
	// a·b pairs, most of them wrong, and the time spent on them grows as
	// their square.
	MaxPerWord int
	// MaxCorrespondences caps the tentative correspondences of one pair of
	// images, and so the time and scratch of one verification (1000):
	// words are taken in rounds, first the words seen once in each image,
	// then the first pair of every other shared word, then every word's
	// second pair, and so on, so that the cap drops the extra pairs of
	// bursty words first and the pairs of distinctive words last.
	MaxCorrespondences int
	// Threshold is the largest reprojection error of an inlier, as a
	// fraction of the candidate image's longer side (0.03: 19 pixels at
	// 640×480, 8 at ETH-80's 256×256), at least one pixel. A similarity
	// from one correspondence extrapolates its scale and angle errors in
	// proportion to the distance from that correspondence, so the
	// threshold is looser than a point-to-point fit would need. Looser
	// still finds more inliers between views of an object in depth (on
	// ETH-80 views 22.5° apart, 0.05 verified 70% of neighbouring views
	// where 0.03 verified 61%, and none of 1,792 pairs of different
	// objects either way: TestETH80Views's photos, 1,000 words),
	// but chance inliers grow with the area: between unrelated photos of
	// 2,000 keypoints that fill MaxCorrespondences, 0.05 verified 10 pairs
	// in 50 at 5 inliers, 0.03 none (at most 4 inliers).
	Threshold float64
	// ScaleTolerance is the largest factor, either way, between an
	// inlier's own scale change σ_c/σ_q and the transform's (1.5). SIFT
	// scales of a repeated keypoint agree within about 10% under a
	// similarity, and more loosely under a change of viewpoint.
	ScaleTolerance float64
	// AngleTolerance is the largest difference, in radians, between an
	// inlier's own rotation θ_c − θ_q and the transform's (π/6, 30°).
	AngleTolerance float64
	// RefineIterations is the number of least-squares affine refinements
	// of the best similarity (LO-RANSAC's local optimisation, 4); 0 keeps
	// the similarity. Refinement stops early once the inliers stop
	// growing.
	RefineIterations int
	// MinInliers is the least Result.Support for Result.Verified (4): one
	// inlier is always there (the hypothesis's own correspondence), and
	// the a contrario test (MaxNFA) asks for 3 or 4 where the images have
	// 20 to 60 tentative correspondences, as ETH-80's photos do, and more
	// where they have more; the floor keeps one inlier of margin over the least it asks.
	// On ETH-80 views 22.5° apart, 4 verified 35 pairs of 56 and none of
	// 1,792 pairs of different objects; 3 verified 44 and 2
	// (TestETH80Views).
	MinInliers int
	// MaxNFA bounds the number of false alarms of a verified match
	// (Result.LogNFA < log10 MaxNFA; 1): the expected number of
	// transforms, among all a verification tries, that chance alone would
	// give as much support, were the candidate's keypoints placed at
	// random (see the package documentation, Acceptance). Unrelated
	// images are then verified less than MaxNFA times a pair in
	// expectation, whatever their numbers of correspondences.
	MaxNFA float64
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		MaxPerWord:         4,
		MaxCorrespondences: 1000,
		Threshold:          0.03,
		ScaleTolerance:     1.5,
		AngleTolerance:     math.Pi / 6,
		RefineIterations:   4,
		MinInliers:         4,
		MaxNFA:             1,
	}
}

// Limits that keep a Matcher's scratch and indices in range.
const (
	maxPerWordLimit      = 1 << 16
	maxCorrespondences   = 1 << 22
	maxRefineIterations  = 100
	maxScaleToleranceLim = 1e6
)

// Validate reports whether o is usable.
func (o Options) Validate() error {
	var errs []error
	if o.MaxPerWord < 1 || o.MaxPerWord > maxPerWordLimit {
		errs = append(errs, fmt.Errorf("spatial: MaxPerWord = %d, want 1..%d", o.MaxPerWord, maxPerWordLimit))
	}
	if o.MaxCorrespondences < 1 || o.MaxCorrespondences > maxCorrespondences {
		errs = append(errs, fmt.Errorf("spatial: MaxCorrespondences = %d, want 1..%d", o.MaxCorrespondences, maxCorrespondences))
	}
	if !(o.Threshold > 0 && o.Threshold <= 1) {
		errs = append(errs, fmt.Errorf("spatial: Threshold = %v, want in (0, 1]", o.Threshold))
	}
	if !(o.ScaleTolerance > 1 && o.ScaleTolerance <= maxScaleToleranceLim) {
		errs = append(errs, fmt.Errorf("spatial: ScaleTolerance = %v, want in (1, %g]", o.ScaleTolerance, float64(maxScaleToleranceLim)))
	}
	if !(o.AngleTolerance > 0 && o.AngleTolerance <= math.Pi) {
		errs = append(errs, fmt.Errorf("spatial: AngleTolerance = %v, want in (0, π]", o.AngleTolerance))
	}
	if o.RefineIterations < 0 || o.RefineIterations > maxRefineIterations {
		errs = append(errs, fmt.Errorf("spatial: RefineIterations = %d, want 0..%d", o.RefineIterations, maxRefineIterations))
	}
	if o.MinInliers < 1 {
		errs = append(errs, fmt.Errorf("spatial: MinInliers = %d, want >= 1", o.MinInliers))
	}
	if !(o.MaxNFA > 0) || math.IsInf(o.MaxNFA, 0) {
		errs = append(errs, fmt.Errorf("spatial: MaxNFA = %v, want finite and > 0", o.MaxNFA))
	}
	return errors.Join(errs...)
}
