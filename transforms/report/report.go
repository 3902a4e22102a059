// Package report renders a run's evaluation as report.json, for machines,
// and report.html, for people: one table comparing every method, as the
// SOLIS paper's tables do, with the counts that say what the run saw.
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
)

// Report is everything report.json holds.
type Report struct {
	Input  string `json:"input"`
	Output string `json:"output"`
	// Config is the run's configuration, flag by flag: the job's own
	// flags, not the runner's, under the flags' names.
	Config Settings `json:"config"`
	// Params are the hyper-parameters each learner trained with, defaults
	// and scaling included.
	Params map[string]map[string]float64 `json:"hyper_parameters,omitempty"`
	Counts Counts                        `json:"counts"`
	// ComparedTo holds an earlier run's rows, to show the change of each
	// method's scores (Change).
	ComparedTo *Earlier `json:"compared_to,omitempty"`
	// Sweep, if any, names the learners of a hyper-parameter sweep.
	Sweep *Sweep `json:"sweep,omitempty"`
	// Tuning, if any, is what validation tuning chose, learner by learner,
	// and the grid it chose from.
	Tuning *Tuning `json:"tuning,omitempty"`
	// DeadLetters summarises the inputs the run refused.
	DeadLetters DeadLetters `json:"dead_letters"`
	// Split says which images were held out as queries.
	Split Split `json:"split"`
	// Stages say where the run's time went, stage by stage, in the job's
	// order (MergeStages).
	Stages []Stage `json:"stages"`
	// Methods are sorted by Sort.
	Methods Rows `json:"methods"`
	// PResolution is the smallest p-value Methods' map_diff_p can tell
	// from 0: a two-sided p from B bootstrap resamples moves in steps of
	// 2/B, so a map_diff_p of 0 means p < PResolution, not p = 0.
	PResolution float64 `json:"map_diff_p_resolution,omitempty"`
}

// Sweep is a learner trained once per value of one hyper-parameter:
// Methods[i] names the learner trained with Values[i].
type Sweep struct {
	Learner string    `json:"learner"`
	Param   string    `json:"param"`
	Values  []float64 `json:"values"`
	Methods []string  `json:"methods"`
}

// Earlier is the run a report is compared with: where it is, its rows
// and, when both runs recorded every query's scores, the comparison of
// the two query by query.
type Earlier struct {
	Run     string `json:"run"`
	Methods Rows   `json:"methods"`
	// QueryScores are the base names of the earlier run's per-query
	// files (run.QueryScoresTable); none for a run made before them.
	QueryScores []string `json:"query_scores,omitempty"`
	// Paired compares each method and query set both runs evaluated on
	// the queries both evaluated; Unpaired says why there is no such
	// comparison, if there is none.
	Paired   []PairedChange `json:"paired,omitempty"`
	Unpaired string         `json:"unpaired,omitempty"`
}

// PairedChange is one method's change of average precision since the
// earlier run, over the queries of one set both runs evaluated: the mean
// difference (this run minus the earlier), its paired 95% bootstrap
// interval, the bootstrap p-value of no change and whether the interval
// excludes 0, as a learner is compared with its baseline
// (formats.ReportRow.MAPDiff). Queries counts the queries paired, of
// EarlierQueries and LaterQueries each run evaluated; with none paired
// the difference is not computed.
type PairedChange struct {
	Method         string  `json:"method"`
	Input          string  `json:"input"`
	Split          string  `json:"split"`
	Queries        int64   `json:"queries"`
	EarlierQueries int64   `json:"earlier_queries"`
	LaterQueries   int64   `json:"later_queries"`
	MAPDiff        float64 `json:"map_diff"`
	MAPDiffLow     float64 `json:"map_diff_low"`
	MAPDiffHigh    float64 `json:"map_diff_high"`
	MAPDiffP       float64 `json:"map_diff_p"`
	Significant    bool    `json:"significant"`
}

// pairedText formats a paired change for a table: "+0.0123 [+0.0040,
// +0.0210] *", or why there is none.
func pairedText(c PairedChange) string {
	if c.Queries == 0 {
		return "no query in common"
	}
	return diffText(c.MAPDiff, c.MAPDiffLow, c.MAPDiffHigh, c.Significant)
}

// pairedP formats a paired change's p-value ("" with no query paired).
func (r Report) pairedP(c PairedChange) string {
	if c.Queries == 0 {
		return ""
	}
	return pValue(c.MAPDiffP, r.PResolution)
}

// Change returns the change of m's mAP and P@10 since the earlier run
// compared with, over the same query set, and whether that run has the
// method. A run made without held-out queries is compared on its training
// rows only.
func (r Report) Change(m formats.ReportRow) (mAP, p10 float64, ok bool) {
	if r.ComparedTo == nil {
		return 0, 0, false
	}
	for _, e := range r.ComparedTo.Methods {
		if e.Method == m.Method && e.Input == m.Input && e.Split == m.Split {
			return m.MAP - e.MAP, m.PrecisionAt10 - e.PrecisionAt10, true
		}
	}
	return 0, 0, false
}

// ChangeText formats Change's mAP for a table: "+0.0123", or "new" for a
// method the earlier run lacks.
func (r Report) ChangeText(m formats.ReportRow) string {
	d, _, ok := r.Change(m)
	if !ok {
		return "new"
	}
	return signed(d)
}

// Split is how the images were divided between training and evaluation:
// QueryImages were held out (no learner trained on them) and are the
// queries of the held-out rows; TrainImages are the rest.
type Split struct {
	TrainImages int64 `json:"train_images"`
	QueryImages int64 `json:"query_images"`
	// QueryFraction is the share of each label's images held out.
	QueryFraction float64 `json:"query_fraction"`
}

// HeldOut reports whether any image was held out: without, every query of
// the report was trained on.
func (s Split) HeldOut() bool { return s.QueryImages > 0 }

// Counts say how much data each stage saw.
type Counts struct {
	Images      int64 `json:"images"`
	DeadLetters int64 `json:"dead_letters"`
	Described   int64 `json:"images_described"`
	Keypoints   int64 `json:"keypoints"`
	Vocabulary  int64 `json:"vocabulary"`
	Triplets    int64 `json:"triplets"`
	// DuplicatePaths counts the files named by more than one image id,
	// each described once per id.
	DuplicatePaths int64 `json:"duplicate_paths"`
}

// Sort orders the methods: the held-out rows, then the training rows;
// within each, those ranking bags of words, then those ranking global
// features, each group with its baseline first (and the baseline's
// re-ranked and expanded rows, "tfidf+sv", "tfidf+sv+qe") and then by
// name, the learners of a sweep (set Sweep first) together by their value.
// The changes paired with an earlier run (ComparedTo.Paired) follow the
// order of their rows.
func (r *Report) Sort() {
	// Learners are compared with the baseline of their input.
	base := func(m formats.ReportRow) bool {
		plain := strings.TrimSuffix(strings.TrimSuffix(m.Method, "+qe"), "+sv")
		return plain == string(learners.BaselineTFIDF) || plain == string(learners.BaselineEuclidean)
	}
	group := func(m formats.ReportRow) int { return map[string]int{"bow": 0, "global": 1}[m.Input] }
	// A sweep's learners are named by their value as text, whose order
	// is not the values' ("…-0.0001" before "…-1e-05"): they sort by the
	// name they share, then by value.
	name, value := func(m formats.ReportRow) string { return m.Method }, func(formats.ReportRow) float64 { return 0 }
	if w := r.Sweep; w != nil && len(w.Methods) == len(w.Values) {
		at := map[string]int{}
		for i, n := range w.Methods {
			at[n] = i
		}
		name = func(m formats.ReportRow) string {
			if _, ok := at[m.Method]; ok {
				return w.Learner + "-" + w.Param + "-"
			}
			return m.Method
		}
		value = func(m formats.ReportRow) float64 {
			if i, ok := at[m.Method]; ok {
				return w.Values[i]
			}
			return 0
		}
	}
	sort.SliceStable(r.Methods, func(i, j int) bool {
		a, b := r.Methods[i], r.Methods[j]
		if a.Split != b.Split {
			return a.Split == heldOut
		}
		if group(a) != group(b) {
			return group(a) < group(b)
		}
		if base(a) != base(b) {
			return base(a)
		}
		if name(a) != name(b) {
			return name(a) < name(b)
		}
		if value(a) != value(b) {
			return value(a) < value(b)
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Relevance < b.Relevance
	})
	if r.ComparedTo == nil {
		return
	}
	// The paired changes follow their rows.
	at := map[[3]string]int{}
	for i, m := range r.Methods {
		at[[3]string{m.Method, m.Input, m.Split}] = i
	}
	sort.SliceStable(r.ComparedTo.Paired, func(i, j int) bool {
		a, b := r.ComparedTo.Paired[i], r.ComparedTo.Paired[j]
		x, okx := at[[3]string{a.Method, a.Input, a.Split}]
		y, oky := at[[3]string{b.Method, b.Input, b.Split}]
		return okx && (!oky || x < y)
	})
}

// JSON returns the report as indented JSON.
func (r Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return append(b, '\n'), nil
}

// The query sets of the rows (formats.ReportRow.Split).
const (
	heldOut  = "held-out"
	training = "training"
)

// Method returns the headline row of the named method — over held-out
// queries if there are any, else over training queries — and whether
// there is one.
func (r Report) Method(name string) (formats.ReportRow, bool) {
	if m, ok := r.MethodOn(name, heldOut); ok {
		return m, true
	}
	return r.MethodOn(name, training)
}

// MethodOn returns the row of the named method over the named query set
// ("held-out" or "training"), and whether there is one.
func (r Report) MethodOn(name, split string) (formats.ReportRow, bool) {
	for _, m := range r.Methods {
		if m.Method == name && m.Split == split {
			return m, true
		}
	}
	return formats.ReportRow{}, false
}

// Headline returns the rows the report leads with: over held-out queries,
// or over training queries when none were held out.
func (r Report) Headline() []formats.ReportRow {
	return r.rowsOn(r.headlineSplit())
}

// Training returns the rows over training queries beside held-out ones
// (none when nothing was held out: those rows are the headline).
func (r Report) Training() []formats.ReportRow {
	if r.headlineSplit() == training {
		return nil
	}
	return r.rowsOn(training)
}

func (r Report) headlineSplit() string {
	for _, m := range r.Methods {
		if m.Split == heldOut {
			return heldOut
		}
	}
	return training
}

func (r Report) rowsOn(split string) []formats.ReportRow {
	var out []formats.ReportRow
	for _, m := range r.Methods {
		if m.Split == split {
			out = append(out, m)
		}
	}
	return out
}

// gap returns the named method's training-query mAP minus its held-out
// mAP, the share of its score owed to having trained on its queries.
func (r Report) gap(name string) (float64, bool) {
	h, ok1 := r.MethodOn(name, heldOut)
	t, ok2 := r.MethodOn(name, training)
	return t.MAP - h.MAP, ok1 && ok2
}

// versus formats a learner's paired comparison with its baseline: the mAP
// difference, its interval, and a * when significant.
func versus(m formats.ReportRow) string {
	if m.Baseline == "" {
		return "—"
	}
	return diffText(m.MAPDiff, m.MAPDiffLow, m.MAPDiffHigh, m.Significant)
}

// diffText formats a paired difference: "+0.0123 [+0.0040, +0.0210]",
// and " *" when significant.
func diffText(d, lo, hi float64, significant bool) string {
	star := ""
	if significant {
		star = " *"
	}
	return fmt.Sprintf("%s [%s, %s]%s", signed(d), signed(lo), signed(hi), star)
}

// formatParams writes hyper-parameters as name=value, sorted by name.
func formatParams(p map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, fmt.Sprintf("%s=%.6g", k, p[k]))
	}
	return strings.Join(parts, ", ")
}

// pText is the p-value of m's comparison with its baseline, "" for a
// baseline.
func (r Report) pText(m formats.ReportRow) string {
	if m.Baseline == "" {
		return ""
	}
	return pValue(m.MAPDiffP, r.PResolution)
}

func interval(x, lo, hi float64) string { return fmt.Sprintf("%.4f [%.4f, %.4f]", x, lo, hi) }

// plural writes n and the noun, with an s unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":      func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"sparsity": sparsity,
	"f4":       func(x float64) string { return fmt.Sprintf("%.4f", x) },
	"f3":       func(x float64) string { return fmt.Sprintf("%.3f", x) },
	"sec":      func(x float64) string { return fmt.Sprintf("%.3f s", x) },
	"signed":   signed,
	"pvalue":   func(p float64) string { return pValue(p, 0) }, // HTML binds the report's resolution
	"plural":   plural,
	"params":   formatParams,
	"setting": func(s Settings, name string) string {
		v, _ := s.Text(name)
		return v
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>bowline report</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
.wide{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:1em 0;font-size:.88em}
th,td{border:1px solid #ccc;padding:.3em .45em;text-align:right;white-space:nowrap;vertical-align:top}
th:first-child,td:first-child{text-align:left}
td.text{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:12em;max-width:48em}
th{background:#f3f3f3;white-space:normal}
th.text{text-align:left}
.ci{display:block;color:#555;font-size:.88em}
.none{color:#888;font-style:italic}
code{background:#f6f6f6;padding:0 .2em}
figure{margin:1.5em 0;overflow-x:auto}
figcaption{color:#555;font-size:.9em}
</style></head><body>
<h1>Retrieval report</h1>
<p>Input <code>{{.Input}}</code>, output <code>{{.Output}}</code>.</p>
<table>
<tr><th>Images</th><th>Dead letters</th><th>Described</th><th>Keypoints</th><th>Vocabulary</th><th>Triplets</th><th>Files under two ids</th></tr>
<tr><td>{{.Counts.Images}}</td><td>{{.Counts.DeadLetters}}</td><td>{{.Counts.Described}}</td><td>{{.Counts.Keypoints}}</td><td>{{.Counts.Vocabulary}}</td><td>{{.Counts.Triplets}}</td><td>{{.Counts.DuplicatePaths}}</td></tr>
</table>
{{with .DeadLetters}}{{if .Total}}<h2>Dead letters</h2>
<p>{{plural .Total "input"}} {{if eq .Total 1}}was{{else}}were{{end}} refused and left out (<code>dead-letters-*.parquet</code> lists them all). By stage and kind of reason (reasons that differ only in the image's id or path and in numbers are one kind; one example of each):</p>
<table><tr><th>Stage</th><th class="text">Reason (example)</th><th>Count</th></tr>
{{range .Kinds}}<tr><td>{{.Stage}}</td><td class="text">{{.Example}}</td><td>{{.Count}}</td></tr>
{{end}}</table>
<p>The first {{len .First}}:</p>
<table><tr><th>Image id</th><th class="text">URI</th><th>Stage</th><th class="text">Reason</th></tr>
{{range .First}}<tr><td class="text">{{.ImageID}}</td><td class="text">{{.URI}}</td><td>{{.Stage}}</td><td class="text">{{.Reason}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{if .Stages}}<h2>Stages</h2>
<p>CPU time is the worker processes' CPU (user + system) while the stage's units of work (parts, groups, query shards, models, the vocabulary's chunks) ran, each moment's CPU split equally among the units running then; unit wall time sums the units' wall times; wall time runs from its first unit's start to its last unit's end.</p>
<table>
<tr><th>Stage</th><th>Units</th><th>Rows in</th><th>Rows out</th><th>CPU time</th><th>Unit wall time</th><th>Wall time</th></tr>
{{range .Stages}}<tr><td>{{.Name}}</td><td>{{.Units}}</td><td>{{.RowsIn}}</td><td>{{.RowsOut}}</td><td>{{sec .CPUSeconds}}</td><td>{{sec .UnitWallSeconds}}</td><td>{{sec .WallSeconds}}</td></tr>
{{end}}</table>{{end}}
<h2>Methods</h2>
{{if .Split.HeldOut}}<p>{{.Split.QueryImages}} images ({{pct .Split.QueryFraction}} of each label) were held out: no learner trained on them, and they query an index of all {{.Counts.Described}} images, themselves excluded; relevant = same label. Brackets are 95% bootstrap intervals over queries; Δ mAP compares each learner with its baseline on the same queries (paired bootstrap, its p-value; * = significant).</p>
{{else}}<p><strong>No held-out queries:</strong> every query below was also trained on, so these scores overstate how the learners retrieve for new images. Brackets are 95% bootstrap intervals over queries.</p>{{end}}
<div class="wide"><table>
<tr><th>Method</th><th>Input</th><th>Queries</th><th>mAP</th><th>P@10</th><th>NDCG@10</th><th>Δ mAP vs baseline</th>{{if .ComparedTo}}<th>Δ mAP since earlier run</th>{{end}}<th>Sparsity</th><th>Postings</th><th>Seconds to train / index / query (all)</th></tr>
{{range .Headline}}<tr><td>{{.Method}}</td><td>{{.Input}}</td><td>{{.Queries}}</td>{{template "score" .}}<td>{{f4 .NDCGAt10}}</td>{{template "versus" .}}{{if $.ComparedTo}}<td>{{$.Report.ChangeText .}}</td>{{end}}<td>{{sparsity .Sparsity}}</td><td>{{.IndexPostings}}</td><td>{{f3 .TrainSeconds}} / {{f3 .IndexSeconds}} / {{f3 .QuerySeconds}}</td></tr>
{{end}}</table></div>
{{with .ComparedTo}}<p>Earlier run: <code>{{.Run}}</code> (same method and query set; “new” where it lacks the method).</p>
{{if .Paired}}<p>Query by query: each method's change of average precision since the earlier run over the queries of a set both runs evaluated (paired bootstrap, 95% interval, p-value; * = significant).</p>
<div class="wide"><table><tr><th>Method</th><th>Input</th><th>Query set</th><th>Paired (of this run's / the earlier's)</th><th>Δ mAP since earlier run</th></tr>
{{range .Paired}}<tr><td>{{.Method}}</td><td>{{.Input}}</td><td>{{.Split}}</td><td>{{.Queries}} ({{.LaterQueries}} / {{.EarlierQueries}})</td><td>{{if .Queries}}{{template "diff" .}}{{else}}no query in common{{end}}</td></tr>
{{end}}</table></div>{{else if .Unpaired}}<p>No query-by-query comparison: {{.Unpaired}}.</p>{{end}}{{end}}
{{with .TrainingGaps}}<h3>Training queries</h3>
<p>The same metrics over a sample of images the learners trained on; the gap is a method's training-query mAP minus its held-out mAP: a learner far above its held-out score has memorised its training images.</p>
<div class="wide"><table>
<tr><th>Method</th><th>Input</th><th>Queries</th><th>mAP</th><th>P@10</th><th>Δ mAP vs baseline</th><th>Gap</th></tr>
{{range .}}<tr><td>{{.Method}}</td><td>{{.Input}}</td><td>{{.Queries}}</td>{{template "score" .ReportRow}}{{template "versus" .ReportRow}}<td>{{if .HasGap}}{{signed .Gap}}{{else}}—{{end}}</td></tr>
{{end}}</table></div>{{end}}
{{if .Charts}}<h2>Figures</h2>
{{range .Charts}}<figure>{{.SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}{{end}}{{with .Params}}<h2>Learner settings</h2>
<p>The hyper-parameters each learner trained with: the defaults (λ scaled to the vocabulary) and what the command line set.</p>
<table>{{range $name, $p := .}}<tr><td>{{$name}}</td><td class="text"><code>{{params $p}}</code></td></tr>{{end}}</table>{{end}}
{{with .Tuning}}<h2>Tuning</h2>
<p>{{.Queries}} validation queries ({{pct .Share}} of each label's training images; no held-out image is one or is searched) searched the {{.TrainImages}} training images. Each point of a learner's grid trained on the triplets of the other training images and is scored by its validation mAP; {{if .TargetSparsity}}among the points whose model trained on every training triplet has at least {{pct .TargetSparsity}} zero weights, {{end}}the best was chosen, and the learner trained with it on every training triplet. {{.Baseline}}'s validation mAP, on the same queries over the same images: {{f4 .BaselineMAP}}.</p>
{{range .Learners}}<h3>{{.Learner}}: <code>{{params .Params}}</code></h3><p>{{.Why}}</p>
<table><tr><th>Grid point</th><th>Validation mAP</th><th>Sparsity (all training triplets)</th><th>Sparsity (tuning triplets)</th></tr>
{{$l := .}}{{range $i, $p := .Points}}<tr><td>{{if eq $i $l.Chosen}}<strong>{{$l.AxisValues $p}}</strong>{{else}}{{$l.AxisValues $p}}{{end}}</td><td>{{f4 $p.ValidationMAP}}</td><td>{{sparsity $p.Sparsity}}</td><td>{{sparsity $p.TuneSparsity}}</td></tr>
{{end}}</table>{{end}}{{end}}
<h2>Configuration</h2>
<table>{{range $k, $v := .Config}}<tr><td>{{$k}}</td><td class="text">{{with setting $.Config $k}}<code>{{.}}</code>{{else}}<span class="none">not set</span>{{end}}</td></tr>{{end}}</table>
</body></html>
{{define "score"}}<td>{{f4 .MAP}}<span class="ci">[{{f4 .MAPLow}}, {{f4 .MAPHigh}}]</span></td><td>{{f4 .PrecisionAt10}}<span class="ci">[{{f4 .PrecisionAt10Low}}, {{f4 .PrecisionAt10High}}]</span></td>{{end}}
{{define "versus"}}<td>{{if .Baseline}}{{template "diff" .}}{{else}}—{{end}}</td>{{end}}
{{- define "diff"}}{{signed .MAPDiff}}{{if .Significant}} *{{end}}<span class="ci">[{{signed .MAPDiffLow}}, {{signed .MAPDiffHigh}}], p {{pvalue .MAPDiffP}}</span>{{end}}
`))

// trainingGap is a training-query row beside its method's gap.
type trainingGap struct {
	formats.ReportRow
	Gap    float64
	HasGap bool
}

// TrainingGaps returns Training's rows, each with its method's gap
// (training-query mAP minus held-out mAP).
func (r Report) TrainingGaps() []trainingGap {
	var out []trainingGap
	for _, m := range r.Training() {
		g, ok := r.gap(m.Method)
		out = append(out, trainingGap{m, g, ok})
	}
	return out
}

// HTML returns the report as a self-contained HTML page, its charts
// inline.
func (r Report) HTML() ([]byte, error) {
	charts, err := r.Charts()
	if err != nil {
		return nil, err
	}
	tmpl, err := page.Clone()
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	tmpl.Funcs(template.FuncMap{"pvalue": func(p float64) string { return pValue(p, r.PResolution) }})
	var b bytes.Buffer
	if err := tmpl.Execute(&b, struct {
		Report
		Charts []Chart
	}{r, charts}); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return b.Bytes(), nil
}

// Parse reads a report from its JSON (report.json).
func Parse(js []byte) (Report, error) {
	var r Report
	if err := json.Unmarshal(js, &r); err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	return r, nil
}

// WriteTable writes the counts and one aligned row per method to w, for a
// terminal.
func (r Report) WriteTable(w io.Writer) error {
	c := r.Counts
	fmt.Fprintf(w, "%s\n\n", r.countsLine())
	if d := r.DeadLetters; d.Total > 0 {
		fmt.Fprintf(w, "dead letters by stage and reason:\n")
		for i, k := range d.Kinds {
			if i == 5 {
				fmt.Fprintf(w, "  … and %d more kinds (report.html)\n", len(d.Kinds)-i)
				break
			}
			fmt.Fprintf(w, "  %6d  %s, e.g. %s\n", k.Count, k.Stage, k.Example)
		}
		fmt.Fprintln(w)
	}
	if c.DuplicatePaths > 0 {
		fmt.Fprintf(w, "warning: %d files are named by more than one image id and were described once per id (see the log)\n\n", c.DuplicatePaths)
	}
	if r.Split.HeldOut() {
		fmt.Fprintf(w, "held-out queries: %d images (%.0f%% of each label) no learner trained on, searching all %d; [95%% bootstrap interval], * = significant against the baseline\n",
			r.Split.QueryImages, 100*r.Split.QueryFraction, c.Described)
	} else {
		fmt.Fprintln(w, "no held-out queries: every query was trained on, so the learners' scores are optimistic")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	since := ""
	if r.ComparedTo != nil {
		since = "since earlier\t"
	}
	fmt.Fprintln(tw, "method\tinput\tqueries\tmAP [95% CI]\tP@10\tNDCG@10\tmAP vs baseline\tp\t"+since+"sparsity\tpostings\ttrain s\t")
	for _, m := range r.Headline() {
		since := ""
		if r.ComparedTo != nil {
			since = r.ChangeText(m) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.4f\t%.4f\t%s\t%s\t%s%s\t%d\t%.3f\t\n",
			m.Method, m.Input, m.Queries, interval(m.MAP, m.MAPLow, m.MAPHigh), m.PrecisionAt10, m.NDCGAt10, versus(m), r.pText(m), since, sparsity(m.Sparsity), m.IndexPostings, m.TrainSeconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.ComparedTo != nil {
		fmt.Fprintf(w, "(since earlier: the change of mAP since %s)\n", r.ComparedTo.Run)
		if err := r.writePaired(w); err != nil {
			return err
		}
	}
	if tr := r.TrainingGaps(); len(tr) > 0 {
		fmt.Fprintln(w, "\ntraining queries (images the learners trained on; gap = training mAP − held-out mAP):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\tinput\tqueries\tmAP [95% CI]\tP@10\tmAP vs baseline\tgap\t")
		for _, m := range tr {
			gap := "—"
			if m.HasGap {
				gap = signed(m.Gap)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.4f\t%s\t%s\t\n", m.Method, m.Input, m.Queries, interval(m.MAP, m.MAPLow, m.MAPHigh), m.PrecisionAt10, versus(m.ReportRow), gap)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := writeTuning(w, r.Tuning); err != nil {
		return err
	}
	if len(r.Stages) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return writeStages(w, r.Stages)
}

// writePaired writes the comparison with the earlier run query by query,
// or why there is none.
func (r Report) writePaired(w io.Writer) error {
	e := r.ComparedTo
	if len(e.Paired) == 0 {
		if e.Unpaired != "" {
			fmt.Fprintf(w, "(no query-by-query comparison: %s)\n", e.Unpaired)
		}
		return nil
	}
	fmt.Fprintf(w, "\nquery by query since %s (paired bootstrap over the queries both runs evaluated; * = significant):\n", e.Run)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tinput\tquery set\tpaired\tmAP change [95% CI]\tp\t")
	for _, c := range e.Paired {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d of %d / %d\t%s\t%s\t\n", c.Method, c.Input, c.Split, c.Queries, c.LaterQueries, c.EarlierQueries, pairedText(c), r.pairedP(c))
	}
	return tw.Flush()
}

// Load reads the report.json of the run d.
func Load(ctx context.Context, d run.Dir) (Report, error) {
	js, err := d.Report(ctx)
	if err != nil {
		return Report{}, err
	}
	r, err := Parse(js)
	if err != nil {
		return Report{}, fmt.Errorf("%s/%s: %w", d.Path, run.ReportName, err)
	}
	return r, nil
}

// LoadEarlier reads the report of the finished run d, for a report to
// compare itself with, and the names of the per-query files its manifest
// lists (run.QueryScoresTable). A run made before those files, or before
// manifests (its manifest does not exist), has none: it is compared by
// its rows alone, and Unpaired says so. Any other error reading the
// manifest is returned: a run whose manifest cannot be read is not one
// without per-query scores.
func LoadEarlier(ctx context.Context, d run.Dir) (*Earlier, error) {
	r, err := Load(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("the run to compare with: %w", err)
	}
	e := &Earlier{Run: d.Path, Methods: r.Methods}
	switch m, err := d.Manifest(ctx); {
	case err == nil:
		tables, _ := run.Tables(m.Names())
		e.QueryScores = tables[run.QueryScoresTable]
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the run to compare with: %w", err)
	}
	if len(e.QueryScores) == 0 {
		e.Unpaired = fmt.Sprintf("the earlier run has no per-query scores, its manifest lists no %s; only the means are compared", run.TablePattern(run.QueryScoresTable))
	}
	return e, nil
}
