package report

import (
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// svgInfo is what the tests need from a chart fragment.
type svgInfo struct {
	root  string
	width float64 // pt
	texts []string
	ids   []string
}

// parseSVG checks that frag is one well-formed XML element and collects
// its text contents and id attributes.
func parseSVG(t *testing.T, frag template.HTML) svgInfo {
	t.Helper()
	var info svgInfo
	dec := xml.NewDecoder(strings.NewReader(string(frag)))
	depth, inText := 0, false
	var text strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("fragment is not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				if info.root != "" {
					t.Fatalf("fragment has a second root element <%s>", tok.Name.Local)
				}
				info.root = tok.Name.Local
				for _, a := range tok.Attr {
					if a.Name.Local == "width" {
						w, err := strconv.ParseFloat(strings.TrimSuffix(a.Value, "pt"), 64)
						if err != nil {
							t.Fatalf("root width %q: %v", a.Value, err)
						}
						info.width = w
					}
				}
			}
			for _, a := range tok.Attr {
				if a.Name.Local == "id" {
					info.ids = append(info.ids, a.Value)
				}
			}
			if tok.Name.Local == "text" {
				inText = true
				text.Reset()
			}
			depth++
		case xml.EndElement:
			depth--
			if tok.Name.Local == "text" {
				inText = false
				info.texts = append(info.texts, text.String())
			}
		case xml.CharData:
			if inText {
				text.Write(tok)
			}
		}
	}
	return info
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func prSeries() []Series {
	return []Series{
		{Name: "TF-IDF", X: []float64{0, 0.25, 0.5, 0.75, 1}, Y: []float64{1, 0.8, 0.6, 0.4, 0.2}},
		{Name: "SOLIS <α & β>", X: []float64{0, 0.5, 1}, Y: []float64{1, 0.9, 0.5}},
	}
}

func TestChartsAreInlineSVG(t *testing.T) {
	unit := &[2]float64{0, 1}
	long := Series{Name: "dense"}
	for i := range 3000 {
		x := float64(i) / 2999
		long.X, long.Y = append(long.X, x), append(long.Y, 1-x*x)
	}
	tests := []struct {
		name  string
		chart func() (template.HTML, error)
		want  []string // texts that must appear as <text> contents
	}{
		{"line", func() (template.HTML, error) {
			return LineChart("Precision–recall", "recall", "precision", prSeries(), nil, nil)
		}, []string{"Precision–recall", "recall", "precision", "TF-IDF", "SOLIS <α & β>"}},
		{"line fixed ranges", func() (template.HTML, error) {
			return LineChart("mAP vs sparsity", "sparsity", "mAP", prSeries(), unit, unit)
		}, []string{"mAP vs sparsity", "TF-IDF", "SOLIS <α & β>"}},
		{"line many points", func() (template.HTML, error) {
			return LineChart("dense", "x", "y", []Series{long}, unit, nil)
		}, []string{"dense"}},
		{"line empty series", func() (template.HTML, error) {
			return LineChart("empty", "x", "y", []Series{{Name: "none"}}, nil, nil)
		}, []string{"empty", "none"}},
		{"line many series", func() (template.HTML, error) {
			var ss []Series
			for i := range 12 {
				ss = append(ss, Series{Name: fmt.Sprintf("method number %d with a long name", i), X: []float64{0, 1}, Y: []float64{float64(i), 1}})
			}
			return LineChart("many", "x", "y", ss, nil, nil)
		}, []string{"many", "method number 0 with a long name", "method number 11 with a long name"}},
		{"line untitled", func() (template.HTML, error) {
			return LineChart("", "", "", prSeries(), nil, nil)
		}, []string{"TF-IDF"}},
		{"bar", func() (template.HTML, error) {
			return BarChart("AP per label", "AP", []string{"cat", "dog", "bird"}, []Series{
				{Name: "TF-IDF", Y: []float64{0.5, 0.25, 0.75}},
				{Name: "SOLIS", Y: []float64{0.6, 0.3, 0.7}},
			})
		}, []string{"AP per label", "AP", "cat", "dog", "bird", "TF-IDF", "SOLIS"}},
		{"bar negative and long labels", func() (template.HTML, error) {
			return BarChart("Δ", "seconds", []string{"a very long category name indeed", "b"}, []Series{
				{Name: "wall", Y: []float64{-1, 2}},
			})
		}, []string{"Δ", "a very long category name indeed", "wall"}},
		{"bar all zero", func() (template.HTML, error) {
			return BarChart("zero", "s", []string{"a"}, []Series{{Name: "z", Y: []float64{0}}})
		}, []string{"zero", "a", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frag, err := tt.chart()
			if err != nil {
				t.Fatal(err)
			}
			s := string(frag)
			if !strings.HasPrefix(s, "<svg") || !strings.HasSuffix(s, "</svg>") {
				t.Errorf("fragment is not bare <svg>…</svg>: %.60q…%q", s, s[max(0, len(s)-20):])
			}
			if strings.Contains(s, "<?xml") || strings.Contains(strings.ToUpper(s), "<!DOCTYPE") {
				t.Error("fragment has an XML prolog or DOCTYPE")
			}
			info := parseSVG(t, frag)
			if info.root != "svg" {
				t.Errorf("root element is <%s>, want <svg>", info.root)
			}
			for _, w := range tt.want {
				if !contains(info.texts, w) {
					t.Errorf("no <text> element reads %q; texts: %q", w, info.texts)
				}
			}
		})
	}
}

func TestChartsAreDeterministic(t *testing.T) {
	charts := map[string]func() (template.HTML, error){
		"line": func() (template.HTML, error) {
			return LineChart("PR", "recall", "precision", prSeries(), nil, &[2]float64{0, 1})
		},
		"bar": func() (template.HTML, error) {
			return BarChart("AP", "AP", []string{"a", "b"}, []Series{{Name: "m", Y: []float64{0.1, 0.2}}})
		},
	}
	for name, chart := range charts {
		a, errA := chart()
		b, errB := chart()
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v, %v", name, errA, errB)
		}
		if a != b {
			t.Errorf("%s: two renderings of the same input differ", name)
		}
	}
}

func TestChartErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cats := []string{"a", "b"}
	tests := []struct {
		name  string
		chart func() (template.HTML, error)
		want  string // in the error message
	}{
		{"line no series", func() (template.HTML, error) {
			return LineChart("t", "x", "y", nil, nil, nil)
		}, "no series"},
		{"line length mismatch", func() (template.HTML, error) {
			return LineChart("t", "x", "y", []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}, nil, nil)
		}, `series "s" has 2 x values but 1 y values`},
		{"line NaN x", func() (template.HTML, error) {
			return LineChart("t", "x", "y", []Series{{Name: "s", X: []float64{nan}, Y: []float64{1}}}, nil, nil)
		}, "x[0] is NaN"},
		{"line Inf y", func() (template.HTML, error) {
			return LineChart("t", "x", "y", []Series{{Name: "s", X: []float64{0, 1}, Y: []float64{1, -inf}}}, nil, nil)
		}, "y[1] is -Inf"},
		{"line empty range", func() (template.HTML, error) {
			return LineChart("t", "x", "y", prSeries(), &[2]float64{1, 1}, nil)
		}, "x range"},
		{"line NaN range", func() (template.HTML, error) {
			return LineChart("t", "x", "y", prSeries(), nil, &[2]float64{0, nan})
		}, "y range"},
		{"bar no series", func() (template.HTML, error) {
			return BarChart("t", "y", cats, nil)
		}, "no series"},
		{"bar no categories", func() (template.HTML, error) {
			return BarChart("t", "y", nil, []Series{{Name: "s"}})
		}, "no categories"},
		{"bar length mismatch", func() (template.HTML, error) {
			return BarChart("t", "y", cats, []Series{{Name: "s", Y: []float64{1}}})
		}, `series "s" has 1 values for 2 categories`},
		{"bar NaN", func() (template.HTML, error) {
			return BarChart("t", "y", cats, []Series{{Name: "s", Y: []float64{1, nan}}})
		}, "y[1] is NaN"},
		{"bar Inf", func() (template.HTML, error) {
			return BarChart("t", "y", cats, []Series{{Name: "s", Y: []float64{inf, 1}}})
		}, "y[0] is +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frag, err := tt.chart()
			if err == nil {
				t.Fatalf("no error; got %d bytes of SVG", len(frag))
			}
			if frag != "" {
				t.Error("fragment returned alongside an error")
			}
			if !strings.Contains(err.Error(), `report: chart "t": `) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name the chart and contain %q", err, tt.want)
			}
		})
	}
}

func TestChartsShareAPage(t *testing.T) {
	line, err := LineChart("PR", "recall", "precision", prSeries(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bar, err := BarChart("AP", "AP", []string{"a", "b"}, []Series{{Name: "m", Y: []float64{0.1, 0.2}}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, frag := range []template.HTML{line, bar} {
		for _, id := range parseSVG(t, frag).ids {
			if seen[id] {
				t.Errorf("id %q appears twice on a page holding both charts", id)
			}
			seen[id] = true
		}
	}
}

func TestBarChartWidensWithCategories(t *testing.T) {
	width := func(n int) float64 {
		cats := make([]string, n)
		a, b := make([]float64, n), make([]float64, n)
		for i := range cats {
			cats[i] = fmt.Sprintf("label-%02d", i)
			a[i], b[i] = float64(i%7)/7, float64(i%5)/5
		}
		frag, err := BarChart("AP per label", "AP", cats, []Series{{Name: "TF-IDF", Y: a}, {Name: "SOLIS", Y: b}})
		if err != nil {
			t.Fatal(err)
		}
		return parseSVG(t, frag).width
	}
	w5, w80 := width(5), width(80)
	if w80 <= w5 {
		t.Errorf("80 categories give width %vpt, not wider than 5 categories' %vpt", w80, w5)
	}
}
