package report

import (
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lineColours returns the distinct colours of a chart's lines (drawn
// 1.5 pt wide; axes, ticks and grid are thinner).
func lineColours(svg string) map[string]bool {
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6});stroke-width:1.5[;"]`).FindAllStringSubmatch(svg, -1) {
		out[strings.ToLower(m[1])] = true
	}
	return out
}

// Nine curves — a sweep's precision–recall chart: TF-IDF, the default
// learner and seven values — get nine colours.
func TestLineColoursDoNotRepeat(t *testing.T) {
	var ss []Series
	for i := range 9 {
		ss = append(ss, Series{Name: fmt.Sprint(i), X: []float64{0, 1}, Y: []float64{float64(i), 1}})
	}
	svg, err := LineChart("nine", "x", "y", ss, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lineColours(string(svg))); n != 9 {
		t.Errorf("9 series drawn in %d colours", n)
	}
}

// numbers returns the texts of a chart that are numbers (tick labels).
func tickNumbers(t *testing.T, svg string) ([]float64, []string) {
	var vs []float64
	var texts []string
	for _, s := range parseSVG(t, template.HTML(svg)).texts {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			vs, texts = append(vs, v), append(texts, s)
		}
	}
	return vs, texts
}

// The time chart's axis reaches above its tallest bar, and its ticks read
// "0", "2", "4", "6", not "0.00".
func TestBarAxisCoversTallestBar(t *testing.T) {
	svg, err := BarChart("Time per stage", "seconds", []string{"describe", "vocabulary", "bow.quantise"},
		[]Series{{Name: "wall", Y: []float64{0.5, 4.503, 0.3}}})
	if err != nil {
		t.Fatal(err)
	}
	vs, texts := tickNumbers(t, string(svg))
	top := 0.0
	for _, v := range vs {
		top = max(top, v)
	}
	if top < 4.503 {
		t.Errorf("top tick %v under the tallest bar 4.503 (ticks %q)", top, texts)
	}
	for _, s := range texts {
		if strings.HasSuffix(s, ".00") || strings.HasSuffix(s, ".0") {
			t.Errorf("tick %q has trailing zeros", s)
		}
	}
}

// The sweep's chart plots the share of non-zero weights on a log scale,
// so models past 94% sparsity are apart, and draws the default learner
// once when it is one of the sweep's.
func TestSweepChart(t *testing.T) {
	r := fullReport()
	r.Sort()
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	var sweep *Chart
	for i, c := range charts {
		if strings.HasPrefix(c.Title, "mAP against") {
			sweep = &charts[i]
		}
	}
	if sweep == nil {
		t.Fatalf("no sweep chart among %d", len(charts))
	}
	info := parseSVG(t, sweep.SVG)
	for _, w := range []string{"0.001", "0.01", "0.1", "1"} {
		if !contains(info.texts, w) {
			t.Errorf("no log tick %q; texts %q", w, info.texts)
		}
	}
	if contains(info.texts, "solis-ada") {
		t.Errorf("the default learner, equal to solis-ada-lambda-1e-05, is drawn again: %q", info.texts)
	}
	if !contains(info.texts, "tfidf") {
		t.Errorf("no TF-IDF point: %q", info.texts)
	}
}

// Sparsity never prints as 100.0% while a weight is left, nor a nonzero
// interval bound as a signed zero; a p-value under the bootstrap's
// resolution prints as a bound.
func TestNumbersThatMustNotRoundAway(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{sparsity(1 - 38.0/1_000_000), "99.996%"},
		{sparsity(1 - 504.0/10_000), "95.0%"},
		{sparsity(1 - 1.0/1000), "99.9%"},
		{sparsity(1), "100.0%"},
		{sparsity(0), "0.0%"},
		{sparsity(1e-5), "0.001%"},
		{signed(-0.00003), "-0.00003"},
		{signed(0.00002), "+0.00002"},
		{signed(0), "+0.0000"},
		{signed(-4.4e-16), "+0.0000"},
		{signed(-2e-9), "-2.0e-09"},
		{signed(0.2664), "+0.2664"},
		{pValue(0, 0.002), "< 0.002"},
		{pValue(0.012, 0.002), "0.012"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	r := Report{PResolution: 0.002, Split: Split{QueryImages: 2}, Methods: Rows{
		{Method: "tfidf", Input: "bow", Split: "held-out"},
		{Method: "solis-ada", Input: "bow", Split: "held-out", Sparsity: 1 - 38.0/1_000_000, Baseline: "tfidf",
			MAPDiff: 0.01, MAPDiffLow: -0.00003, MAPDiffHigh: 0.02, Significant: true},
	}}
	table, html := renderings(t, r)
	for _, out := range []string{table, html} {
		if strings.Contains(out, "100.0%") || regexp.MustCompile(`-0\.0000[^0-9]`).MatchString(out) || !strings.Contains(out, "99.996%") ||
			!strings.Contains(out, "0.00003") || !strings.Contains(out, "0.002") {
			t.Errorf("numbers rounded away:\n%s", out)
		}
	}
}

// The page says "1 input was refused", shows Δ and the gap in the
// training table (as the terminal does), and marks an empty setting.
func TestPageWording(t *testing.T) {
	r := fullReport()
	r.Sort()
	html, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{"1 input was refused", "<th>Gap</th>", "not set"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	i := strings.Index(page, "<h3>Training queries</h3>")
	if i < 0 || !strings.Contains(page[i:], "Δ mAP vs baseline") {
		t.Error("the training-query table has no Δ column")
	}
	var b strings.Builder
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	tr := b.String()[strings.Index(b.String(), "training queries"):]
	if !strings.Contains(tr, "mAP vs baseline") || !strings.Contains(tr, "gap") {
		t.Errorf("the terminal's training table lacks Δ or the gap:\n%s", tr)
	}
}
