package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Series is one named line or set of bars of a chart.
type Series struct {
	Name string
	X, Y []float64 // for BarChart only Y is used, one value per category
	// Points, if set, label a line's points (Points[i] beside point i):
	// which λ a point of a sweep is.
	Points []string
}

const (
	chartWidth  = 16 * vg.Centimeter
	chartHeight = 9 * vg.Centimeter
	// barSlot is the width each bar gets when a bar chart has too many
	// to fit chartWidth, so 80 labels × 2 methods stay readable.
	barSlot = 0.45 * vg.Centimeter
	// barAxisAllowance estimates the width the y axis and margins take
	// from a bar chart, to tell whether unrotated labels would collide
	// before the plot is laid out.
	barAxisAllowance = 2 * vg.Centimeter
	// maxMarkers bounds the markers per line: a precision–recall curve
	// can have thousands of points, and markers are there to tell the
	// series apart, not to show every point.
	maxMarkers = 24
)

// sans is Liberation Sans rather than gonum's default serif because it is
// metric-compatible with Arial, the fallback sansFamily names, so text
// laid out with its metrics fits where the browser lacks the font.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// sansFamily replaces vgsvg's bare family name, which has no fallback.
const sansFamily = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// palette is Okabe and Ito's colour-blind-safe set, ordered so that
// neighbouring series also differ in lightness when printed in grey, then
// three dark colours of Paul Tol's muted set, so that a sweep's nine or
// ten lines (precision–recall of TF-IDF, the default learner and every
// value) each have a colour of their own. Past it colours repeat, with
// another dash pattern and marker.
var palette = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF}, // blue
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF}, // orange
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF}, // bluish green
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF}, // vermillion
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}, // sky blue
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF}, // reddish purple
	color.Black,
	color.RGBA{R: 0x88, G: 0x22, B: 0x55, A: 0xFF}, // wine
	color.RGBA{R: 0x99, G: 0x99, B: 0x33, A: 0xFF}, // olive
	color.RGBA{R: 0x33, G: 0x22, B: 0x88, A: 0xFF}, // indigo
}

var gridColor = color.Gray{Y: 0xD0}

// LineChart draws series as lines with point markers (precision–recall curves, mAP against sparsity):
// one colour and dash pattern per series (distinguishable in greyscale too), a legend, axis labels.
// If xRange/yRange are non-nil ([2]float64{min,max}) the axes are fixed to them (e.g. [0,1]); otherwise automatic.
func LineChart(title, xLabel, yLabel string, series []Series, xRange, yRange *[2]float64) (out template.HTML, err error) {
	return lineChart(title, xLabel, yLabel, series, xRange, yRange, false)
}

// lineChart is LineChart, with a log scale on x if logX (every x must
// then be positive).
func lineChart(title, xLabel, yLabel string, series []Series, xRange, yRange *[2]float64, logX bool) (out template.HTML, err error) {
	defer recoverChart(title, &out, &err)
	if len(series) == 0 {
		return "", fmt.Errorf("report: chart %q: no series", title)
	}
	if err := checkRange(title, "x", xRange); err != nil {
		return "", err
	}
	if err := checkRange(title, "y", yRange); err != nil {
		return "", err
	}

	p := newPlot(xLabel, yLabel)
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	p.Add(grid)
	var entries []legendEntry
	for i, s := range series {
		if len(s.X) != len(s.Y) {
			return "", fmt.Errorf("report: chart %q: series %q has %d x values but %d y values", title, s.Name, len(s.X), len(s.Y))
		}
		if err := checkFinite(title, s.Name, "x", s.X); err != nil {
			return "", err
		}
		if err := checkFinite(title, s.Name, "y", s.Y); err != nil {
			return "", err
		}
		if logX && slices.ContainsFunc(s.X, func(x float64) bool { return x <= 0 }) {
			return "", fmt.Errorf("report: chart %q: series %q has an x of 0 or less on a log scale", title, s.Name)
		}
		xys := make(plotter.XYs, len(s.X))
		for j := range xys {
			xys[j].X, xys[j].Y = s.X[j], s.Y[j]
			if logX {
				xys[j].X = math.Log10(s.X[j])
			}
		}
		clr := palette[i%len(palette)]
		line := &plotter.Line{XYs: xys, LineStyle: draw.LineStyle{
			Color:  clr,
			Width:  vg.Points(1.5),
			Dashes: plotutil.Dashes(i),
		}}
		marks := &plotter.Scatter{XYs: everyNth(xys, maxMarkers), GlyphStyle: draw.GlyphStyle{
			Color:  clr,
			Radius: vg.Points(2.5),
			Shape:  plotutil.Shape(i),
		}}
		p.Add(line, marks)
		if len(s.Points) == len(xys) {
			// Above and below the line in turn, so that neighbours do not
			// write over each other.
			for side := range 2 {
				var at plotter.XYs
				var texts []string
				for j := side; j < len(xys); j += 2 {
					at, texts = append(at, xys[j]), append(texts, s.Points[j])
				}
				if len(at) == 0 {
					continue
				}
				labels, err := plotter.NewLabels(plotter.XYLabels{XYs: at, Labels: texts})
				if err != nil {
					return "", fmt.Errorf("report: chart %q: series %q: %w", title, s.Name, err)
				}
				for k := range labels.TextStyle {
					sty := &labels.TextStyle[k]
					sty.Font, sty.Color, sty.XAlign, sty.YAlign = font.From(sans, vg.Points(8)), clr, draw.XCenter, draw.YBottom
					if side == 1 {
						sty.YAlign = draw.YTop
					}
				}
				labels.Offset = vg.Point{Y: vg.Points(4)}
				if side == 1 {
					labels.Offset.Y = -vg.Points(4)
				}
				p.Add(labels)
			}
		}
		entries = append(entries, legendEntry{name: s.Name, thumbs: []plot.Thumbnailer{line, marks}})
	}
	if logX {
		// x is plotted as its log10 on a linear axis from decade to
		// decade, ticks labelled with the values themselves.
		p.X.Tick.Marker = decadeTicks{}
		p.X.Min, p.X.Max = math.Floor(p.X.Min), math.Ceil(p.X.Max)
		if p.X.Min == p.X.Max {
			p.X.Min--
		}
	}
	// Fixed ranges are applied after Add, which widens the axes to the data.
	if xRange != nil {
		p.X.Min, p.X.Max = xRange[0], xRange[1]
	}
	if yRange != nil {
		p.Y.Min, p.Y.Max = yRange[0], yRange[1]
	}
	return render(title, chartWidth, chartHeight, 0, p, entries, vg.Points(20))
}

// BarChart draws grouped vertical bars: one group per category (x tick labels = categories, rotated if there
// are many or they are long), one bar per series in each group, with a legend (per-label AP of two methods; CPU and
// wall seconds per stage).
func BarChart(title, yLabel string, categories []string, series []Series) (out template.HTML, err error) {
	defer recoverChart(title, &out, &err)
	if len(series) == 0 {
		return "", fmt.Errorf("report: chart %q: no series", title)
	}
	if len(categories) == 0 {
		return "", fmt.Errorf("report: chart %q: no categories", title)
	}

	p := newPlot("", yLabel)
	p.NominalX(categories...)
	// Bars sit on the x axis, and the half-slot margin of groupedBars
	// already keeps them off the y axis.
	p.X.Padding, p.Y.Padding = 0, 0
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = nil, gridColor
	g := &groupedBars{n: len(categories)}
	var entries []legendEntry
	for i, s := range series {
		if len(s.Y) != len(categories) {
			return "", fmt.Errorf("report: chart %q: series %q has %d values for %d categories", title, s.Name, len(s.Y), len(categories))
		}
		if err := checkFinite(title, s.Name, "y", s.Y); err != nil {
			return "", err
		}
		b := &plotter.BarChart{
			Values: append(plotter.Values(nil), s.Y...),
			Color:  palette[i%len(palette)],
		}
		g.bars = append(g.bars, b)
		entries = append(entries, legendEntry{name: s.Name, thumbs: []plot.Thumbnailer{b}})
	}
	p.Add(grid, g)
	// The tallest bar ends at or under the top tick, not past the axis.
	p.Y.Max = tickCeil(p.Y.Min, p.Y.Max)

	width := max(chartWidth, vg.Length(len(categories)*len(series))*barSlot)
	height, slack := chartHeight, vg.Length(0)
	var widest vg.Length
	for _, c := range categories {
		widest = max(widest, p.X.Tick.Label.Width(c))
	}
	slot := (width - barAxisAllowance) / vg.Length(len(categories))
	if widest > 0.9*slot {
		// Read top to bottom, starting at the axis: vgsvg anchors text at
		// its start, so a browser font wider than Liberation Sans makes
		// labels overflow at their end, which is then away from the bars.
		p.X.Tick.Label.Rotation = -math.Pi / 2
		p.X.Tick.Label.XAlign = draw.XLeft
		p.X.Tick.Label.YAlign = draw.YCenter
		// The axis lifts tick labels by the font's descent, which for
		// rotated labels pushes their start into the bars.
		p.X.Padding = p.X.Tick.Label.FontExtents().Descent + vg.Points(2)
		// Rotated labels take height from the bars; give it back, with
		// slack below them for that overflow.
		slack = widest / 4
		height += widest + slack
	}
	return render(title, width, height, slack, p, entries, p.X.Tick.Label.Height("X"))
}

// groupedBars lays plotter.BarCharts side by side within each category.
// It sizes the bars when drawn, from the category spacing on the canvas,
// because that spacing is only known once the axes are laid out.
type groupedBars struct {
	n    int // categories
	bars []*plotter.BarChart
}

// Plot implements plot.Plotter.
func (g *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	step := (trX(1) - trX(0)) * 0.8 / vg.Length(len(g.bars))
	for i, b := range g.bars {
		// 0.85 leaves a hairline gap so same-lightness neighbours stay
		// apart in greyscale.
		b.Width = step * 0.85
		b.Offset = (vg.Length(i) - vg.Length(len(g.bars)-1)/2) * step
		b.Plot(c, p)
	}
}

// DataRange implements plot.DataRanger. The half-category margins keep
// the outer groups inside the axes; zero is always in range so bars
// have a baseline.
func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, b := range g.bars {
		for _, v := range b.Values {
			ymin, ymax = min(ymin, v), max(ymax, v)
		}
	}
	if ymin == ymax {
		ymax = 1 // all zero: plot would otherwise centre 0 in [-1, 1]
	}
	return -0.5, float64(g.n) - 0.5, ymin, ymax
}

// legendEntry is one series' swatch and name.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

func newPlot(xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // render fills the whole canvas once
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	for _, sty := range []*text.Style{&p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label} {
		sty.Font = font.From(sans, sty.Font.Size)
	}
	return p
}

// render lays out title, legend and plot top to bottom, leaving bottom
// free under the plot, and returns the SVG fragment. The legend is a strip
// under the title rather than gonum's legend inside the data area, where
// it would hide curves or bars.
func render(title string, w, h, bottom vg.Length, p *plot.Plot, entries []legendEntry, thumbW vg.Length) (template.HTML, error) {
	cv := vgsvg.New(w, h)
	c := draw.New(cv)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, vg.Points(4), vg.Points(-8), vg.Points(4), vg.Points(-4))

	top := c.Max.Y
	if title != "" {
		sty := textStyle(12)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
		// As plot.Draw does: YTop aligns the descent, not the ascent.
		c.FillText(sty, vg.Point{X: c.Center().X, Y: top + sty.FontExtents().Descent}, title)
		top -= sty.Height(title) + vg.Points(4)
	}
	top = drawLegend(c, top, entries, thumbW)
	p.Draw(draw.Crop(c, 0, 0, bottom, top-c.Max.Y))

	var buf bytes.Buffer
	if _, err := cv.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("report: chart %q: writing SVG: %w", title, err)
	}
	return inlineSVG(title, buf.String())
}

// drawLegend flows entries left to right from top, wrapping at the
// canvas edge, and returns where the space below it starts.
func drawLegend(c draw.Canvas, top vg.Length, entries []legendEntry, thumbW vg.Length) vg.Length {
	sty := textStyle(10)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	rowH := sty.FontExtents().Height
	em := sty.Width("M")
	x, y := c.Min.X, top-rowH
	for _, e := range entries {
		w := thumbW + em/2 + sty.Width(e.name)
		if x > c.Min.X && x+w > c.Max.X {
			x, y = c.Min.X, y-rowH*1.3
		}
		icon := &draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y + rowH*0.1},
			Max: vg.Point{X: x + thumbW, Y: y + rowH*0.9},
		}}
		for _, t := range e.thumbs {
			t.Thumbnail(icon)
		}
		c.FillText(sty, vg.Point{X: x + thumbW + em/2, Y: y + rowH/2}, e.name)
		x += w + 2*em
	}
	return y - rowH*0.5
}

func textStyle(size vg.Length) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(sans, size),
		Handler: plot.DefaultTextHandler,
	}
}

// inlineSVG turns vgsvg's standalone document into a fragment for an HTML
// page: vgsvg starts with an <?xml?> declaration and a comment, which are
// invalid or noise inside HTML. vgsvg writes no id attributes (no defs,
// clip paths or gradients while fonts are not embedded), so fragments can
// share a page without renaming anything; plot_test.go checks this still
// holds.
func inlineSVG(title, doc string) (template.HTML, error) {
	i := strings.Index(doc, "<svg")
	if i < 0 {
		return "", fmt.Errorf("report: chart %q: vgsvg output has no <svg> element", title)
	}
	doc = strings.ReplaceAll(doc[i:], "font-family:Liberation Sans;", sansFamily)
	// The content is vgsvg's, which escapes every string it writes.
	return template.HTML(strings.TrimSpace(doc)), nil
}

// recoverChart turns a panic inside gonum/plot into an error: gonum
// reports some failures (a missing font, a bad canvas size) by panicking,
// and one chart that cannot be drawn must not take down the report.
func recoverChart(title string, out *template.HTML, err *error) {
	if r := recover(); r != nil {
		*out = ""
		*err = fmt.Errorf("report: chart %q: drawing: %v", title, r)
	}
}

func checkRange(title, axis string, r *[2]float64) error {
	if r == nil {
		return nil
	}
	if !isFinite(r[0]) || !isFinite(r[1]) || r[0] >= r[1] {
		return fmt.Errorf("report: chart %q: %s range [%v, %v] is not a finite, increasing interval", title, axis, r[0], r[1])
	}
	return nil
}

func checkFinite(title, name, axis string, vs []float64) error {
	for i, v := range vs {
		if !isFinite(v) {
			return fmt.Errorf("report: chart %q: series %q: %s[%d] is %v", title, name, axis, i, v)
		}
	}
	return nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// everyNth returns at most n of xys, evenly spaced, first and last
// included so the markers span the whole line.
func everyNth(xys plotter.XYs, n int) plotter.XYs {
	if len(xys) <= n {
		return xys
	}
	out := make(plotter.XYs, n)
	for i := range out {
		out[i] = xys[i*(len(xys)-1)/(n-1)]
	}
	return out
}

// plainTicks are gonum's default ticks labelled with the fewest digits
// that tell them apart ("0", "250", "0.5"), not a fixed precision that
// prints "0.00" and "250.00".
type plainTicks struct{}

// Ticks implements plot.Ticker.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', 6, 64)
		}
	}
	return ticks
}

// decadeTicks label an axis of log10(x) at its powers of ten with the
// values of x ("0.001", "0.01", "1"), and mark 2…9 times each between.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for k := math.Floor(lo); k <= hi; k++ {
		if k >= lo {
			ticks = append(ticks, plot.Tick{Value: k, Label: strconv.FormatFloat(math.Pow(10, k), 'g', -1, 64)})
		}
		for m := 2.0; m < 10; m++ {
			if v := k + math.Log10(m); v >= lo && v <= hi {
				ticks = append(ticks, plot.Tick{Value: v})
			}
		}
	}
	return ticks
}

// tickCeil returns the smallest labelled tick of [lo, hi]'s default ticks
// at or above hi, stepping past the last if hi lies above it.
func tickCeil(lo, hi float64) float64 {
	var major []float64
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if t.Label != "" {
			major = append(major, t.Value)
		}
	}
	if len(major) < 2 {
		return hi
	}
	top, step := major[len(major)-1], major[len(major)-1]-major[len(major)-2]
	for top < hi {
		top += step
	}
	return top
}
