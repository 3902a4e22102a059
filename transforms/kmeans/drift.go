package kmeans

import (
	"fmt"
	"math"

	"github.com/bowline/bowline/transforms/setting"
)

// DriftDescriptors is the number of descriptors the drift of a
// vocabulary is measured on: the mean squared distance of 10,000 SIFT
// descriptors to their nearest word has a relative standard error well
// under 1%, against the 10% rise DefaultMaxDrift allows, and costs about
// a second against 1,000 words (the search is exact) or 10,000 (through
// the forest).
const DriftDescriptors = 10_000

// DefaultMaxDrift is Drift.Max's default: a 10% rise.
const DefaultMaxDrift = 0.1

// Drift is the rule by which a vocabulary is kept for new descriptors:
// while their mean squared distance to their nearest word (the
// distortion) has risen by at most Max over the reference distortion,
// measured when the vocabulary was built, relatively (0.1 = 10%).
type Drift struct {
	Max float64
}

// Validate reports a Max that is not a finite number of 0 or more (a
// *setting.Error).
func (d Drift) Validate() error {
	if !(d.Max >= 0) || math.IsInf(d.Max, 1) {
		return setting.Errorf("kmeans", "Drift.Max", d.Max, "a number, 0 or more")
	}
	return nil
}

// Decide returns the drift of the distortion measured over reference,
// measured/reference − 1, whether the vocabulary is kept (a drift of at
// most Max; NaN is not kept) and why, in a line for the log and the
// lineage.
func (d Drift) Decide(measured, reference float64) (drift float64, kept bool, reason string) {
	drift = measured/reference - 1
	if drift <= d.Max && !math.IsNaN(drift) {
		return drift, true, fmt.Sprintf("kept: distortion %.1f is %+.1f%% of the reference %.1f, within %.1f%%", measured, 100*drift, reference, 100*d.Max)
	}
	return drift, false, fmt.Sprintf("rebuilt: distortion %.1f is %+.1f%% of the reference %.1f, beyond %.1f%%", measured, 100*drift, reference, 100*d.Max)
}
