package report

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
)

// Chart is one figure of report.html: a title and its inline SVG.
type Chart struct {
	Title string
	SVG   template.HTML
}

// headlineLearner is the learner whose per-label scores the report sets
// against its baseline's: the pipeline's default.
const headlineLearner = "solis-ada"

// Charts draws the report's figures from its headline rows: the
// precision–recall curve of every method, per input; the per-label mAP of
// the headline learner (SOLIS-ADA, else the first learner of bags of
// words) against TF-IDF; and the time of each stage.
func (r Report) Charts() ([]Chart, error) {
	var charts []Chart
	rows := r.Headline()
	recall := make([]float64, 0, 11)
	for i := range 11 {
		recall = append(recall, float64(i)/10)
	}
	unit := &[2]float64{0, 1}
	for _, input := range []string{"bow", "global"} {
		var series []Series
		for _, m := range rows {
			if m.Input == input && len(m.PR) == len(recall) {
				series = append(series, Series{Name: m.Method, X: recall, Y: m.PR})
			}
		}
		if len(series) == 0 {
			continue
		}
		title := "Precision–recall, " + map[string]string{"bow": "bags of words", "global": "global features"}[input]
		svg, err := LineChart(title, "recall", "interpolated precision", series, unit, unit)
		if err != nil {
			return nil, err
		}
		charts = append(charts, Chart{title, svg})
	}

	if base, learner, ok := r.perLabelPair(rows); ok {
		title := "mAP per label: " + learner.Method + " against " + base.Method
		apOf := func(m formats.ReportRow) []float64 {
			by := map[string]float64{}
			for i, l := range m.Labels {
				by[l] = m.LabelMAP[i]
			}
			out := make([]float64, len(base.Labels))
			for i, l := range base.Labels {
				out[i] = by[l]
			}
			return out
		}
		svg, err := BarChart(title, "mAP", base.Labels, []Series{{Name: base.Method, Y: apOf(base)}, {Name: learner.Method, Y: apOf(learner)}})
		if err != nil {
			return nil, err
		}
		charts = append(charts, Chart{title, svg})
	}

	if w := r.Sweep; w != nil {
		if c, ok, err := r.sweepChart(w, rows); err != nil {
			return nil, err
		} else if ok {
			charts = append(charts, c)
		}
	}

	if len(r.Stages) > 0 {
		var names []string
		var wall, cpu []float64
		for _, s := range r.Stages {
			names = append(names, s.Name)
			wall, cpu = append(wall, s.WallSeconds), append(cpu, s.CPUSeconds)
		}
		const title = "Time per stage"
		svg, err := BarChart(title, "seconds", names, []Series{{Name: "wall", Y: wall}, {Name: "CPU", Y: cpu}})
		if err != nil {
			return nil, err
		}
		charts = append(charts, Chart{title, svg})
	}
	return charts, nil
}

// sweepChart draws mAP against the share of non-zero weights (1 −
// sparsity) on a log scale, one line through the sweep's learners in the
// order of their values and a point for each other learner of bags of
// words: on a linear axis of sparsity every model past 94% sits at x ≈ 1,
// while the share kept (1/1000 against 1/100) is what sets the index's
// size. A learner equal to one of the sweep's (the default λ, trained
// under its own name as well) is not drawn twice. A model with no weight
// left has no place on a log scale: the caption says so.
func (r Report) sweepChart(w *Sweep, rows []formats.ReportRow) (Chart, bool, error) {
	if len(w.Methods) != len(w.Values) {
		return Chart{}, false, nil
	}
	order := make([]int, len(w.Values))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w.Values[a], w.Values[b]) })
	row := func(name string) (formats.ReportRow, bool) {
		for _, m := range rows {
			if m.Method == name {
				return m, true
			}
		}
		return formats.ReportRow{}, false
	}
	var x, y, values []float64
	var dropped []string
	for _, i := range order {
		m, ok := row(w.Methods[i])
		switch {
		case !ok:
		case m.Sparsity >= 1:
			dropped = append(dropped, fmt.Sprintf("%s %g", w.Param, w.Values[i]))
		default:
			x, y, values = append(x, 1-m.Sparsity), append(y, m.MAP), append(values, w.Values[i])
		}
	}
	if len(x) == 0 {
		return Chart{}, false, nil
	}
	var points []string
	for _, v := range values {
		points = append(points, fmt.Sprintf("%g", v))
	}
	series := []Series{{Name: w.Learner + ", " + w.Param + " " + formatValues(values), X: x, Y: y, Points: points}}
	for _, m := range rows {
		if m.Input != "bow" || slices.Contains(w.Methods, m.Method) || m.Sparsity >= 1 || r.sameAsSweep(w, m.Method) {
			continue
		}
		series = append(series, Series{Name: m.Method, X: []float64{1 - m.Sparsity}, Y: []float64{m.MAP}})
	}
	// The chart's own title stays short enough for its width (a longer
	// one is cut at both ends); the caption says the rest.
	title := "mAP against sparsity, " + w.Learner + " over " + w.Param
	svg, err := lineChart(title, "share of non-zero weights (1 − sparsity), log scale", "mAP", series, nil, nil, true)
	if err != nil {
		return Chart{}, false, err
	}
	title += ": the share of non-zero weights on a log scale"
	if len(dropped) > 0 {
		title += " (not drawn, no weight left: " + strings.Join(dropped, ", ") + ")"
	}
	return Chart{title, svg}, true, nil
}

// sameAsSweep reports whether the named learner trained with the same
// hyper-parameters as one of w's.
func (r Report) sameAsSweep(w *Sweep, name string) bool {
	p, ok := r.Params[name]
	if !ok {
		return false
	}
	for _, n := range w.Methods {
		if q, ok := r.Params[n]; ok && maps.Equal(p, q) {
			return true
		}
	}
	return false
}

// formatValues writes a sweep's values, in order: "1e-07 … 0.0001".
func formatValues(v []float64) string {
	if len(v) == 1 {
		return fmt.Sprintf("%g", v[0])
	}
	return fmt.Sprintf("%g … %g", v[0], v[len(v)-1])
}

// perLabelPair returns the TF-IDF row and the headline learner's among
// rows, if both have per-label scores.
func (r Report) perLabelPair(rows []formats.ReportRow) (base, learner formats.ReportRow, ok bool) {
	var haveBase, haveLearner bool
	for _, m := range rows {
		switch {
		case m.Input != "bow" || len(m.Labels) == 0:
		case m.Method == string(learners.BaselineTFIDF):
			base, haveBase = m, true
		case !haveLearner || m.Method == headlineLearner:
			learner, haveLearner = m, true
		}
	}
	return base, learner, haveBase && haveLearner
}
