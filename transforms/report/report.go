// Package report renders a run's evaluation as report.json, for machines,
// and report.html, for people: one table comparing every method, as the
// SOLIS paper's tables do, with the counts that say what the run saw.
package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
)

// Report is everything report.json holds.
type Report struct {
	Input  string `json:"input"`
	Output string `json:"output"`
	// Config is the run's configuration, flag by flag: the job's own
	// flags, not the runner's.
	Config map[string]string `json:"config"`
	// Params are the hyper-parameters each learner trained with, defaults
	// and scaling included.
	Params map[string]map[string]float64 `json:"hyper_parameters,omitempty"`
	Counts Counts                        `json:"counts"`
	// ComparedTo holds an earlier run's rows, to show the change of each
	// method's scores (Change).
	ComparedTo *Earlier `json:"compared_to,omitempty"`
	// Sweep, if any, names the learners of a hyper-parameter sweep.
	Sweep *Sweep `json:"sweep,omitempty"`
	// DeadLetters summarises the inputs the run refused.
	DeadLetters DeadLetters `json:"dead_letters"`
	// Split says which images were held out as queries.
	Split Split `json:"split"`
	// Stages say where the run's time went, stage by stage, in the job's
	// order (MergeStages).
	Stages []Stage `json:"stages"`
	// Methods are sorted with the TF-IDF baseline first, then by name.
	Methods []formats.ReportRow `json:"methods"`
}

// Sweep is a learner trained once per value of one hyper-parameter:
// Methods[i] names the learner trained with Values[i].
type Sweep struct {
	Learner string    `json:"learner"`
	Param   string    `json:"param"`
	Values  []float64 `json:"values"`
	Methods []string  `json:"methods"`
}

// Earlier is the run a report is compared with: where it is and its
// rows.
type Earlier struct {
	Run     string              `json:"run"`
	Methods []formats.ReportRow `json:"methods"`
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
	return fmt.Sprintf("%+.4f", d)
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
// features, each group with its baseline first and then by name.
func (r *Report) Sort() {
	// Learners are compared with the baseline of their input.
	base := func(m formats.ReportRow) bool {
		return m.Method == string(learners.BaselineTFIDF) || m.Method == string(learners.BaselineEuclidean)
	}
	group := func(m formats.ReportRow) int { return map[string]int{"bow": 0, "global": 1}[m.Input] }
	sort.Slice(r.Methods, func(i, j int) bool {
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
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		return a.Relevance < b.Relevance
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
	star := ""
	if m.Significant {
		star = " *"
	}
	return fmt.Sprintf("%+.4f [%+.4f, %+.4f]%s", m.MAPDiff, m.MAPDiffLow, m.MAPDiffHigh, star)
}

// formatParams writes hyper-parameters as name=value, sorted by name.
func formatParams(p map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		parts = append(parts, fmt.Sprintf("%s=%.6g", k, p[k]))
	}
	return strings.Join(parts, ", ")
}

func interval(x, lo, hi float64) string { return fmt.Sprintf("%.4f [%.4f, %.4f]", x, lo, hi) }

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct":      func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"f4":       func(x float64) string { return fmt.Sprintf("%.4f", x) },
	"sec":      func(x float64) string { return fmt.Sprintf("%.3f s", x) },
	"interval": interval,
	"versus":   versus,
	"params":   formatParams,
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>bowline report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:.35em .8em;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left}
th{background:#f3f3f3}
tr.best td{font-weight:bold}
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
<p>{{.Total}} inputs were refused and left out (<code>dead-letters-*.parquet</code> lists them all). By stage and kind of reason (ids, paths and numbers left out):</p>
<table><tr><th>Stage</th><th>Reason</th><th>Count</th></tr>
{{range .Kinds}}<tr><td>{{.Stage}}</td><td style="text-align:left">{{.Reason}}</td><td>{{.Count}}</td></tr>
{{end}}</table>
<p>The first {{len .First}}:</p>
<table><tr><th>Image id</th><th>URI</th><th>Stage</th><th>Reason</th></tr>
{{range .First}}<tr><td>{{.ImageID}}</td><td style="text-align:left">{{.URI}}</td><td>{{.Stage}}</td><td style="text-align:left">{{.Reason}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{if .Stages}}<h2>Stages</h2>
<p>CPU time is the worker processes' CPU (user + system) while the stage's units of work (parts, groups, query shards, models, the vocabulary's chunks) ran, each moment's CPU split equally among the units running then; unit wall time sums the units' wall times; wall time runs from its first unit's start to its last unit's end.</p>
<table>
<tr><th>Stage</th><th>Units</th><th>Rows in</th><th>Rows out</th><th>CPU time</th><th>Unit wall time</th><th>Wall time</th></tr>
{{range .Stages}}<tr><td>{{.Name}}</td><td>{{.Units}}</td><td>{{.RowsIn}}</td><td>{{.RowsOut}}</td><td>{{sec .CPUSeconds}}</td><td>{{sec .UnitWallSeconds}}</td><td>{{sec .WallSeconds}}</td></tr>
{{end}}</table>{{end}}
<h2>Methods</h2>
{{if .Split.HeldOut}}<p>{{.Split.QueryImages}} images ({{pct .Split.QueryFraction}} of each label) were held out: no learner trained on them, and they query an index of all {{.Counts.Described}} images, themselves excluded; relevant = same label. Brackets are 95% bootstrap intervals over queries; Δ mAP compares each learner with its baseline on the same queries (paired bootstrap; * = significant).</p>
{{else}}<p><strong>No held-out queries:</strong> every query below was also trained on, so these scores overstate how the learners retrieve for new images. Brackets are 95% bootstrap intervals over queries.</p>{{end}}
<table>
<tr><th>Method</th><th>Input</th><th>Queries</th><th>mAP</th><th>P@10</th><th>NDCG@10</th><th>Δ mAP vs baseline</th>{{if .ComparedTo}}<th>Δ mAP since earlier run</th>{{end}}<th>Sparsity</th><th>Postings</th><th>Train</th><th>Index</th><th>Query (all)</th></tr>
{{range .Headline}}<tr><td>{{.Method}}</td><td>{{.Input}}</td><td>{{.Queries}}</td><td>{{interval .MAP .MAPLow .MAPHigh}}</td><td>{{interval .PrecisionAt10 .PrecisionAt10Low .PrecisionAt10High}}</td><td>{{f4 .NDCGAt10}}</td><td>{{versus .}}</td>{{if $.ComparedTo}}<td>{{$.Report.ChangeText .}}</td>{{end}}<td>{{pct .Sparsity}}</td><td>{{.IndexPostings}}</td><td>{{sec .TrainSeconds}}</td><td>{{sec .IndexSeconds}}</td><td>{{sec .QuerySeconds}}</td></tr>
{{end}}</table>
{{with .ComparedTo}}<p>Earlier run: <code>{{.Run}}</code> (same method and query set; “new” where it lacks the method).</p>{{end}}
{{with .Training}}<h3>Training queries</h3>
<p>The same metrics over a sample of images the learners trained on: a learner far above its held-out score has memorised its training images.</p>
<table>
<tr><th>Method</th><th>Input</th><th>Queries</th><th>mAP</th><th>P@10</th><th>Δ mAP vs baseline</th></tr>
{{range .}}<tr><td>{{.Method}}</td><td>{{.Input}}</td><td>{{.Queries}}</td><td>{{interval .MAP .MAPLow .MAPHigh}}</td><td>{{interval .PrecisionAt10 .PrecisionAt10Low .PrecisionAt10High}}</td><td>{{versus .}}</td></tr>
{{end}}</table>{{end}}
{{if .Charts}}<h2>Figures</h2>
{{range .Charts}}<figure>{{.SVG}}<figcaption>{{.Title}}</figcaption></figure>
{{end}}{{end}}{{with .Params}}<h2>Learner settings</h2>
<p>The hyper-parameters each learner trained with: the defaults (λ scaled to the vocabulary) and what the command line set.</p>
<table>{{range $name, $p := .}}<tr><td>{{$name}}</td><td><code>{{params $p}}</code></td></tr>{{end}}</table>{{end}}
<h2>Configuration</h2>
<table>{{range $k, $v := .Config}}<tr><td>{{$k}}</td><td><code>{{$v}}</code></td></tr>{{end}}</table>
</body></html>
`))

// HTML returns the report as a self-contained HTML page, its charts
// inline.
func (r Report) HTML() ([]byte, error) {
	charts, err := r.Charts()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := page.Execute(&b, struct {
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
			fmt.Fprintf(w, "  %6d  %s: %s\n", k.Count, k.Stage, k.Reason)
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
	fmt.Fprintln(tw, "method\tinput\tqueries\tmAP [95% CI]\tP@10\tNDCG@10\tmAP vs baseline\t"+since+"sparsity\tpostings\ttrain s\t")
	for _, m := range r.Headline() {
		since := ""
		if r.ComparedTo != nil {
			since = r.ChangeText(m) + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.4f\t%.4f\t%s\t%s%.1f%%\t%d\t%.3f\t\n",
			m.Method, m.Input, m.Queries, interval(m.MAP, m.MAPLow, m.MAPHigh), m.PrecisionAt10, m.NDCGAt10, versus(m), since, 100*m.Sparsity, m.IndexPostings, m.TrainSeconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.ComparedTo != nil {
		fmt.Fprintf(w, "(since earlier: the change of mAP since %s)\n", r.ComparedTo.Run)
	}
	if tr := r.Training(); len(tr) > 0 {
		fmt.Fprintln(w, "\ntraining queries (images the learners trained on; gap = training mAP − held-out mAP):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "method\tinput\tqueries\tmAP [95% CI]\tP@10\tgap\t")
		for _, m := range tr {
			gap, _ := r.gap(m.Method)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%.4f\t%+.4f\t\n", m.Method, m.Input, m.Queries, interval(m.MAP, m.MAPLow, m.MAPHigh), m.PrecisionAt10, gap)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Stages) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return writeStages(w, r.Stages)
}
