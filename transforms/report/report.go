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
	// Stages say where the run's time went, stage by stage, in the order
	// they started.
	Stages []Stage `json:"stages"`
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

// Stage is what one stage of the job did: the rows it read and wrote and
// its time. A stage runs as units of work (a part, a training group, a
// query shard, a model) on as many workers as the runner gives it, so it
// has two times: WorkerSeconds, the sum of its units' times, is what the
// stage costs in worker time and what adding workers divides; WallSeconds,
// from the start of its first unit to the end of its last, is how long the
// job waited on it (stages overlap where the graph lets them).
type Stage struct {
	Name          string  `json:"name"`
	Units         int64   `json:"units"`
	RowsIn        int64   `json:"rows_in"`
	RowsOut       int64   `json:"rows_out"`
	WorkerSeconds float64 `json:"worker_seconds"`
	WallSeconds   float64 `json:"wall_seconds"`
	// StartMillis and EndMillis bound the stage's units, in Unix
	// milliseconds.
	StartMillis int64 `json:"start_unix_ms"`
	EndMillis   int64 `json:"end_unix_ms"`
}

// Unit returns the stage name's record of one unit of work that read in
// rows and wrote out rows from startMillis to endMillis (Unix ms).
func Unit(name string, in, out, startMillis, endMillis int64) Stage {
	return Stage{Name: name, Units: 1, RowsIn: in, RowsOut: out, StartMillis: startMillis, EndMillis: endMillis,
		WorkerSeconds: float64(endMillis-startMillis) / 1000, WallSeconds: float64(endMillis-startMillis) / 1000}
}

// MergeStages sums units by stage name: rows and worker time add up, and
// the wall time spans the first start to the last end. The stages come out
// in the order they started, ties by name.
func MergeStages(units []Stage) []Stage {
	byName := map[string]int{}
	var out []Stage
	for _, u := range units {
		i, ok := byName[u.Name]
		if !ok {
			byName[u.Name] = len(out)
			out = append(out, u)
			continue
		}
		s := &out[i]
		s.Units += u.Units
		s.RowsIn += u.RowsIn
		s.RowsOut += u.RowsOut
		s.WorkerSeconds += u.WorkerSeconds
		s.StartMillis = min(s.StartMillis, u.StartMillis)
		s.EndMillis = max(s.EndMillis, u.EndMillis)
		s.WallSeconds = float64(s.EndMillis-s.StartMillis) / 1000
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].StartMillis != out[j].StartMillis {
			return out[i].StartMillis < out[j].StartMillis
		}
		return out[i].Name < out[j].Name
	})
	return out
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
{{if .Stages}}<h2>Stages</h2>
<p>Worker time sums the time of a stage's units of work (parts, groups, query shards, models); wall time runs from its first unit's start to its last unit's end.</p>
<table>
<tr><th>Stage</th><th>Units</th><th>Rows in</th><th>Rows out</th><th>Worker time</th><th>Wall time</th></tr>
{{range .Stages}}<tr><td>{{.Name}}</td><td>{{.Units}}</td><td>{{.RowsIn}}</td><td>{{.RowsOut}}</td><td>{{sec .WorkerSeconds}}</td><td>{{sec .WallSeconds}}</td></tr>
{{end}}</table>{{end}}
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
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Stages) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tunits\trows in\trows out\tworker s\twall s\t")
	for _, s := range r.Stages {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.1f\t%.1f\t\n", s.Name, s.Units, s.RowsIn, s.RowsOut, s.WorkerSeconds, s.WallSeconds)
	}
	return tw.Flush()
}
