package report

import (
	"fmt"
	"html/template"
	"slices"

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
		var x, y []float64
		for _, name := range w.Methods {
			for _, m := range rows {
				if m.Method == name {
					x, y = append(x, m.Sparsity), append(y, m.MAP)
				}
			}
		}
		series := []Series{{Name: w.Learner + ", " + w.Param + " " + formatValues(w.Values), X: x, Y: y}}
		for _, m := range rows {
			if m.Input == "bow" && !slices.Contains(w.Methods, m.Method) {
				series = append(series, Series{Name: m.Method, X: []float64{m.Sparsity}, Y: []float64{m.MAP}})
			}
		}
		title := "mAP against sparsity, " + w.Learner + " over " + w.Param
		svg, err := LineChart(title, "sparsity (share of zero weights)", "mAP", series, &[2]float64{0, 1}, nil)
		if err != nil {
			return nil, err
		}
		charts = append(charts, Chart{title, svg})
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

// formatValues writes a sweep's values: "1e-07 … 0.0001".
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
