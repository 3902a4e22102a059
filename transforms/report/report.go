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
	"sort"
	"text/tabwriter"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
)

// Report is everything report.json holds.
type Report struct {
	Input  string `json:"input"`
	Output string `json:"output"`
	// Config is the run's configuration, flag by flag.
	Config map[string]string `json:"config"`
	Counts Counts            `json:"counts"`
	// Methods are sorted with the TF-IDF baseline first, then by name.
	Methods []formats.ReportRow `json:"methods"`
}

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

// Sort orders the methods: those ranking bags of words, then those ranking
// global features, each group with its baseline first and then by name.
func (r *Report) Sort() {
	// Learners are compared with the baseline of their input.
	base := func(m formats.ReportRow) bool {
		return m.Method == string(learners.BaselineTFIDF) || m.Method == string(learners.BaselineEuclidean)
	}
	group := func(m formats.ReportRow) int { return map[string]int{"bow": 0, "global": 1}[m.Input] }
	sort.Slice(r.Methods, func(i, j int) bool {
		a, b := r.Methods[i], r.Methods[j]
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

// Method returns the row of the named method, and whether there is one.
func (r Report) Method(name string) (formats.ReportRow, bool) {
	for _, m := range r.Methods {
		if m.Method == name {
			return m, true
		}
	}
	return formats.ReportRow{}, false
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
	"f4":  func(x float64) string { return fmt.Sprintf("%.4f", x) },
	"sec": func(x float64) string { return fmt.Sprintf("%.3f s", x) },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>bowline report</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:.35em .8em;text-align:right}
th:first-child,td:first-child{text-align:left}
th{background:#f3f3f3}
tr.best td{font-weight:bold}
code{background:#f6f6f6;padding:0 .2em}
</style></head><body>
<h1>Retrieval report</h1>
<p>Input <code>{{.Input}}</code>, output <code>{{.Output}}</code>.</p>
<table>
<tr><th>Images</th><th>Dead letters</th><th>Described</th><th>Keypoints</th><th>Vocabulary</th><th>Triplets</th><th>Files under two ids</th></tr>
<tr><td>{{.Counts.Images}}</td><td>{{.Counts.DeadLetters}}</td><td>{{.Counts.Described}}</td><td>{{.Counts.Keypoints}}</td><td>{{.Counts.Vocabulary}}</td><td>{{.Counts.Triplets}}</td><td>{{.Counts.DuplicatePaths}}</td></tr>
</table>
<h2>Methods</h2>
<p>Every labelled image queries an index of all images, itself excluded; relevant = same label.</p>
<table>
<tr><th>Method</th><th>Input</th><th>Queries</th><th>mAP</th><th>P@10</th><th>NDCG@10</th><th>Sparsity</th><th>Postings</th><th>Train</th><th>Index</th><th>Query (all)</th></tr>
{{range .Methods}}<tr><td>{{.Method}}</td><td>{{.Input}}</td><td>{{.Queries}}</td><td>{{f4 .MAP}}</td><td>{{f4 .PrecisionAt10}}</td><td>{{f4 .NDCGAt10}}</td><td>{{pct .Sparsity}}</td><td>{{.IndexPostings}}</td><td>{{sec .TrainSeconds}}</td><td>{{sec .IndexSeconds}}</td><td>{{sec .QuerySeconds}}</td></tr>
{{end}}</table>
<h2>Configuration</h2>
<table>{{range $k, $v := .Config}}<tr><td>{{$k}}</td><td><code>{{$v}}</code></td></tr>{{end}}</table>
</body></html>
`))

// HTML returns the report as a self-contained HTML page.
func (r Report) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := page.Execute(&b, r); err != nil {
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
	fmt.Fprintf(w, "%d images (%d dead letters, %d described), %d keypoints, %d words, %d triplets\n\n",
		c.Images, c.DeadLetters, c.Described, c.Keypoints, c.Vocabulary, c.Triplets)
	if c.DuplicatePaths > 0 {
		fmt.Fprintf(w, "warning: %d files are named by more than one image id and were described once per id (see the log)\n\n", c.DuplicatePaths)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tinput\tqueries\tmAP\tP@10\tNDCG@10\tsparsity\tpostings\ttrain s\t")
	for _, m := range r.Methods {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.4f\t%.4f\t%.4f\t%.1f%%\t%d\t%.3f\t\n",
			m.Method, m.Input, m.Queries, m.MAP, m.PrecisionAt10, m.NDCGAt10, 100*m.Sparsity, m.IndexPostings, m.TrainSeconds)
	}
	return tw.Flush()
}
