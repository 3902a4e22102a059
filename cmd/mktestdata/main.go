// Command mktestdata writes the project's own small labelled image set to
// testdata/shapes: synthetic photographs-in-miniature whose classes are told
// apart by a few class-specific motifs, buried among clutter motifs that every
// class shares. Plain TF-IDF cosine is distracted by the clutter; a learned
// per-word weighting can learn to ignore it, which is what the end-to-end
// test checks.
//
// The output is a pure function of the flags: re-running rewrites the same
// bytes.
package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

var (
	out        = flag.String("out", "testdata/shapes", "output directory")
	classes    = flag.Int("classes", 6, "number of classes")
	perClass   = flag.Int("per_class", 16, "images per class")
	size       = flag.Int("size", 192, "image side in pixels")
	classMotif = flag.Int("class_motifs", 4, "motifs unique to each class")
	showClass  = flag.Int("show_class", 3, "class motifs drawn in each image")
	clutter    = flag.Int("clutter_pool", 24, "motifs shared by all classes")
	showClut   = flag.Int("show_clutter", 6, "clutter motifs drawn in each image")
	seed       = flag.Uint64("seed", 1, "random seed")
	quality    = flag.Int("quality", 90, "JPEG quality")
)

// shape is one filled primitive of a motif, in motif coordinates [-1,1]².
type shape struct {
	kind       int // 0 ellipse, 1 rectangle, 2 triangle
	cx, cy     float64
	rx, ry     float64
	angle      float64
	col        color.RGBA
	x, y       [3]float64 // triangle vertices
	background bool
}

type motif []shape

func newMotif(r *rand.Rand) motif {
	m := motif{{kind: 1, cx: 0, cy: 0, rx: 1, ry: 1, col: randColor(r), background: true}}
	for n := 3 + r.IntN(3); n > 0; n-- {
		s := shape{kind: r.IntN(3), cx: r.Float64()*1.2 - 0.6, cy: r.Float64()*1.2 - 0.6,
			rx: 0.15 + r.Float64()*0.45, ry: 0.15 + r.Float64()*0.45, angle: r.Float64() * math.Pi, col: randColor(r)}
		for k := range s.x {
			s.x[k], s.y[k] = r.Float64()*1.8-0.9, r.Float64()*1.8-0.9
		}
		m = append(m, s)
	}
	return m
}

func randColor(r *rand.Rand) color.RGBA {
	return color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
}

func (s shape) inside(u, v float64) bool {
	if s.background {
		return math.Abs(u) <= 1 && math.Abs(v) <= 1
	}
	du, dv := u-s.cx, v-s.cy
	c, sn := math.Cos(s.angle), math.Sin(s.angle)
	a, b := c*du+sn*dv, -sn*du+c*dv
	switch s.kind {
	case 0:
		return (a*a)/(s.rx*s.rx)+(b*b)/(s.ry*s.ry) <= 1
	case 1:
		return math.Abs(a) <= s.rx && math.Abs(b) <= s.ry
	default:
		d := func(i, j int) float64 {
			return (s.x[j]-s.x[i])*(v-s.y[i]) - (s.y[j]-s.y[i])*(u-s.x[i])
		}
		d0, d1, d2 := d(0, 1), d(1, 2), d(2, 0)
		return (d0 >= 0 && d1 >= 0 && d2 >= 0) || (d0 <= 0 && d1 <= 0 && d2 <= 0)
	}
}

// colorAt returns the motif's colour at (u, v): the last shape that covers
// the point wins, like a painter.
func (m motif) colorAt(u, v float64) (color.RGBA, bool) {
	var c color.RGBA
	ok := false
	for _, s := range m {
		if s.inside(u, v) {
			c, ok = s.col, true
		}
	}
	return c, ok
}

// draw renders m centred at (cx, cy) with half-size h pixels, rotated by
// angle, with 3×3 supersampling for anti-aliased edges.
func (m motif) draw(img *image.RGBA, cx, cy, h, angle float64) {
	c, s := math.Cos(angle), math.Sin(angle)
	reach := int(h*math.Sqrt2) + 2
	b := img.Bounds()
	for y := int(cy) - reach; y <= int(cy)+reach; y++ {
		for x := int(cx) - reach; x <= int(cx)+reach; x++ {
			if !(image.Point{x, y}.In(b)) {
				continue
			}
			var sr, sg, sb, n float64
			for sy := 0; sy < 3; sy++ {
				for sx := 0; sx < 3; sx++ {
					px, py := float64(x)+(float64(sx)+0.5)/3-cx, float64(y)+(float64(sy)+0.5)/3-cy
					u, v := (c*px+s*py)/h, (-s*px+c*py)/h
					if col, ok := m.colorAt(u, v); ok {
						sr, sg, sb, n = sr+float64(col.R), sg+float64(col.G), sb+float64(col.B), n+1
					}
				}
			}
			if n == 0 {
				continue
			}
			old := img.RGBAAt(x, y)
			a := n / 9
			img.SetRGBA(x, y, color.RGBA{
				uint8((sr/n)*a + float64(old.R)*(1-a)),
				uint8((sg/n)*a + float64(old.G)*(1-a)),
				uint8((sb/n)*a + float64(old.B)*(1-a)), 255})
		}
	}
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	r := rand.New(rand.NewPCG(*seed, 0x5eed))
	classM := make([][]motif, *classes)
	for c := range classM {
		for k := 0; k < *classMotif; k++ {
			classM[c] = append(classM[c], newMotif(r))
		}
	}
	var clut []motif
	for k := 0; k < *clutter; k++ {
		clut = append(clut, newMotif(r))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var rows [][]string
	rows = append(rows, []string{"image_id", "path", "label", "tags"})
	const grid = 4
	cell := float64(*size) / grid
	for c := 0; c < *classes; c++ {
		label := fmt.Sprintf("class%d", c)
		dir := filepath.Join(*out, "images", label)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for i := 0; i < *perClass; i++ {
			ir := rand.New(rand.NewPCG(*seed, uint64(c*100000+i)))
			img := background(ir, *size)
			var draw []motif
			for _, k := range ir.Perm(*classMotif)[:*showClass] {
				draw = append(draw, classM[c][k])
			}
			for _, k := range ir.Perm(*clutter)[:*showClut] {
				draw = append(draw, clut[k])
			}
			cells := ir.Perm(grid * grid)
			for k, m := range draw {
				gx, gy := cells[k]%grid, cells[k]/grid
				cx := (float64(gx)+0.5)*cell + (ir.Float64()-0.5)*cell*0.2
				cy := (float64(gy)+0.5)*cell + (ir.Float64()-0.5)*cell*0.2
				h := cell * (0.30 + ir.Float64()*0.08)
				m.draw(img, cx, cy, h, ir.Float64()*2*math.Pi)
			}
			addNoise(ir, img, 4)
			id := fmt.Sprintf("%s-%02d", label, i)
			rel := filepath.ToSlash(filepath.Join("images", label, id+".jpg"))
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: *quality}); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(*out, rel), buf.Bytes(), 0o644); err != nil {
				return err
			}
			rows = append(rows, []string{id, rel, label, fmt.Sprintf("shapes|%s", label)})
		}
	}
	f, err := os.Create(filepath.Join(*out, "labels.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// background is a smooth random gradient, so that flat areas give no
// keypoints but the image is not a lab-clean white.
func background(r *rand.Rand, n int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	a, b := randColor(r), randColor(r)
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			t := (float64(x) + float64(y)) / float64(2*n)
			img.SetRGBA(x, y, color.RGBA{
				uint8(float64(a.R)*(1-t)*0.5 + float64(b.R)*t*0.5 + 64),
				uint8(float64(a.G)*(1-t)*0.5 + float64(b.G)*t*0.5 + 64),
				uint8(float64(a.B)*(1-t)*0.5 + float64(b.B)*t*0.5 + 64), 255})
		}
	}
	return img
}

func addNoise(r *rand.Rand, img *image.RGBA, amp float64) {
	for i := range img.Pix {
		if i%4 == 3 {
			continue
		}
		v := float64(img.Pix[i]) + r.NormFloat64()*amp
		img.Pix[i] = uint8(math.Max(0, math.Min(255, math.Round(v))))
	}
}
