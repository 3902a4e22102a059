package kmeans

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/setting"
)

func TestDriftValidate(t *testing.T) {
	for _, max := range []float64{0, 0.1, 5} {
		if err := (Drift{Max: max}).Validate(); err != nil {
			t.Errorf("Drift{%v}: %v", max, err)
		}
	}
	for _, max := range []float64{-0.5, math.NaN(), math.Inf(1)} {
		var e *setting.Error
		if err := (Drift{Max: max}).Validate(); !errors.As(err, &e) || e.Name() != "kmeans.Drift.Max" {
			t.Errorf("Drift{%v}: %v, want a setting error of kmeans.Drift.Max", max, err)
		}
	}
}

func TestDriftDecide(t *testing.T) {
	d := Drift{Max: 0.1}
	for _, c := range []struct {
		measured, reference, drift float64
		kept                       bool
		reason                     string
	}{
		{105, 100, 0.05, true, "kept: distortion 105.0 is +5.0% of the reference 100.0, within 10.0%"},
		{90, 100, -0.1, true, "kept: distortion 90.0 is -10.0% of the reference 100.0, within 10.0%"},
		{111, 100, 0.11, false, "rebuilt: distortion 111.0 is +11.0% of the reference 100.0, beyond 10.0%"},
		{0, 0, math.NaN(), false, "rebuilt: distortion 0.0 is +NaN% of the reference 0.0, beyond 10.0%"},
	} {
		drift, kept, reason := d.Decide(c.measured, c.reference)
		if kept != c.kept || reason != c.reason || !(math.Abs(drift-c.drift) < 1e-12 || math.IsNaN(drift) && math.IsNaN(c.drift)) {
			t.Errorf("Decide(%v, %v) = %v, %v, %q; want %v, %v, %q", c.measured, c.reference, drift, kept, reason, c.drift, c.kept, c.reason)
		}
		if !strings.HasPrefix(reason, map[bool]string{true: "kept", false: "rebuilt"}[kept]) {
			t.Errorf("reason %q does not say the decision", reason)
		}
	}
}
