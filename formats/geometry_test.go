package formats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// randomFeatures returns an image of the given size with n keypoints
// anywhere in its frame, of σ from 0.5 to 1,000 pixels and any angle, and
// a random word of k for each.
func randomFeatures(r *rand.Rand, id string, width, height int32, n, k int) (Features, []uint32) {
	f := Features{ImageID: id, Width: width, Height: height,
		X: make([]float32, n), Y: make([]float32, n), Scale: make([]float32, n), Angle: make([]float32, n)}
	words := make([]uint32, n)
	for i := range n {
		f.X[i] = float32(r.Float64()*float64(width) - 0.5)
		f.Y[i] = float32(r.Float64()*float64(height) - 0.5)
		f.Scale[i] = float32(0.5 * math.Pow(2000, r.Float64()))
		f.Angle[i] = float32(r.Float64() * 2 * math.Pi)
		words[i] = uint32(r.IntN(k))
	}
	return f, words
}

// angleDiff returns |a − b| around the circle.
func angleDiff(a, b float64) float64 {
	d := math.Mod(math.Abs(a-b), 2*math.Pi)
	return min(d, 2*math.Pi-d)
}

// GeometryOf sorts the keypoints by word, keeping a word's keypoints in
// their order, and Decode gives back every keypoint within the stated
// error: half a coordinate step of the side (a 131,070th), 1/32 octave of
// scale, half a 256th of a turn; on small images, large ones (a 12,000 ×
// 9,000 photo, which --max_pixels allows) and images whose features carry
// no size.
func TestGeometryOfDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var dst Keypoints
	for _, c := range []struct{ w, h int32 }{{256, 256}, {1600, 1200}, {12000, 9000}, {37, 5000}, {0, 0}} {
		size := c
		if size.w == 0 {
			size.w, size.h = 800, 600 // the keypoints' extent
		}
		f, words := randomFeatures(r, "img", size.w, size.h, 500, 40)
		f.Width, f.Height = c.w, c.h
		g, err := GeometryOf(&f, words)
		if err != nil {
			t.Fatal(err)
		}
		if g.Width < 1 || g.Height < 1 || g.Width > size.w || g.Height > size.h {
			t.Errorf("%dx%d: the geometry's frame is %dx%d", c.w, c.h, g.Width, g.Height)
		}
		if !slices.IsSorted(g.WordIDs) {
			t.Errorf("%dx%d: words not ascending", c.w, c.h)
		}
		g.Decode(&dst)
		// Match keypoints back by word and, within a word, by order.
		next := map[uint32]int{}
		maxErr := [4]float64{}
		for j, w := range dst.Words {
			i := next[w]
			for words[i] != w {
				i++
			}
			next[w] = i + 1
			errs := [4]float64{
				math.Abs(float64(dst.X[j]) - float64(f.X[i])),
				math.Abs(float64(dst.Y[j]) - float64(f.Y[i])),
				math.Abs(math.Log2(float64(dst.Scale[j])) - math.Log2(float64(f.Scale[i]))),
				angleDiff(float64(dst.Angle[j]), float64(f.Angle[i])),
			}
			for m := range errs {
				maxErr[m] = max(maxErr[m], errs[m])
			}
		}
		bounds := [4]float64{
			float64(g.Width)/(2*GeometryCoordSteps) + 1e-3, // + float32 rounding of x itself
			float64(g.Height)/(2*GeometryCoordSteps) + 1e-3,
			0.5/GeometryScaleStepsPerOctave + 1e-6,
			math.Pi/GeometryAngleSteps + 1e-6,
		}
		for m, name := range []string{"x", "y", "log₂ scale", "angle"} {
			if maxErr[m] > bounds[m] {
				t.Errorf("%dx%d: %s off by %g, bound %g", c.w, c.h, name, maxErr[m], bounds[m])
			}
		}
		t.Logf("%dx%d: largest errors x %.4f px, y %.4f px, scale %.2f%%, angle %.2f°", c.w, c.h,
			maxErr[0], maxErr[1], 100*(math.Exp2(maxErr[2])-1), maxErr[3]*180/math.Pi)
	}
}

// Values outside the codes' ranges are clamped, and NaNs give code 0,
// rather than wrapping around.
func TestGeometryOfClamps(t *testing.T) {
	nan := float32(math.NaN())
	f := Features{ImageID: "edge", Width: 100, Height: 50,
		X:     []float32{-0.5, 99.5, -10, 1e9, nan},
		Y:     []float32{-0.5, 49.5, -10, 1e9, nan},
		Scale: []float32{1.0 / 16, 1e6, 0, -1, nan},
		Angle: []float32{0, 2*math.Pi - 1e-4, -math.Pi / 2, 5 * math.Pi, nan},
	}
	g, err := GeometryOf(&f, []uint32{0, 1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	want := Geometry{ImageID: "edge", Width: 100, Height: 50, WordIDs: []uint32{0, 1, 2, 3, 4},
		X: []uint16{0, 65535, 0, 65535, 0}, Y: []uint16{0, 65535, 0, 65535, 0},
		LogScale: []uint16{0, 255, 0, 0, 0}, Angle: []uint16{0, 0, 192, 128, 0}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("GeometryOf = %+v\nwant %+v", g, want)
	}
	if _, err := GeometryOf(&f, []uint32{1, 2}); err == nil {
		t.Error("GeometryOf with 2 words for 5 keypoints succeeded")
	}
}

// Decode reuses the destination's storage: decoding one image after
// another allocates nothing once it has grown.
func TestGeometryDecodeReuses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	f, words := randomFeatures(r, "a", 640, 480, 300, 50)
	g, err := GeometryOf(&f, words)
	if err != nil {
		t.Fatal(err)
	}
	var dst Keypoints
	g.Decode(&dst)
	if allocs := testing.AllocsPerRun(10, func() { g.Decode(&dst) }); allocs != 0 {
		t.Errorf("Decode allocates %v times once grown", allocs)
	}
}

// geometryFile encodes n random images' geometry, with RowGroupBytes set
// low so that the file has several row groups.
func geometryFile(t testing.TB, n int) ([]Geometry, []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	rows := make([]Geometry, n)
	for i := range rows {
		f, words := randomFeatures(r, fmt.Sprintf("img-%05d", i), 640, 480, r.IntN(120), 1000)
		g, err := GeometryOf(&f, words)
		if err != nil {
			t.Fatal(err)
		}
		rows[i] = g
	}
	saved := RowGroupBytes
	RowGroupBytes = 256 << 10
	defer func() { RowGroupBytes = saved }()
	var buf bytes.Buffer
	if err := Encode(context.Background(), &buf, rows); err != nil {
		t.Fatal(err)
	}
	return rows, buf.Bytes()
}

// On disk every list holds one value per keypoint (and a null for each
// empty list), delta-encoded — a list of uint8 would be written empty by
// parquet-go, and DuckDB would read it so — and the rows read back as they
// were written.
func TestGeometryParquet(t *testing.T) {
	rows, data := geometryFile(t, 2000)
	var keypoints, empty int64
	for _, g := range rows {
		keypoints += int64(len(g.WordIDs))
		if len(g.WordIDs) == 0 {
			empty++
		}
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.RowGroups()) < 2 {
		t.Errorf("%d row groups, want several for the test to say something", len(f.RowGroups()))
	}
	for _, col := range []string{"word_ids", "x", "y", "log_scale", "angle"} {
		leaf, ok := f.Schema().Lookup(col, "list", "element")
		if !ok {
			t.Fatalf("no column %s.list.element", col)
		}
		var values int64
		for _, rg := range f.Metadata().RowGroups {
			cc := rg.Columns[leaf.ColumnIndex].MetaData
			values += cc.NumValues
			if !slices.Contains(cc.Encoding, parquet.DeltaBinaryPacked.Encoding()) {
				t.Errorf("%s is encoded %v, want DELTA_BINARY_PACKED", col, cc.Encoding)
			}
		}
		if values != keypoints+empty {
			t.Errorf("%s holds %d values, want one per keypoint and empty list: %d", col, values, keypoints+empty)
		}
	}
	t.Logf("%d bytes, %.2f a keypoint (random positions, scales and angles: the most they can take)", len(data), float64(len(data))/float64(keypoints))
	var got []Geometry
	r := bytes.NewReader(data)
	if err := Decode(context.Background(), r, r.Size(), func(g *Geometry) error { got = append(got, *g); return nil }); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if !reflect.DeepEqual(got[i], withEmptyLists(rows[i])) {
			t.Fatalf("row %d reads back as %+v, want %+v", i, got[i], rows[i])
		}
	}
}

// withEmptyLists returns g with nil lists made empty, as they read back.
func withEmptyLists(g Geometry) Geometry {
	if len(g.WordIDs) == 0 {
		g.WordIDs, g.X, g.Y, g.LogScale, g.Angle = []uint32{}, []uint16{}, []uint16{}, []uint16{}, []uint16{}
	}
	return g
}

// ReadGeometry returns exactly the rows asked for, once each and in file
// order, across row groups, whatever the order and repetitions of the ids;
// ids absent from the file are skipped; the caller's error comes back as
// it is.
func TestReadGeometry(t *testing.T) {
	rows, data := geometryFile(t, 2000)
	r := bytes.NewReader(data)
	ctx := context.Background()
	for _, ids := range [][]string{
		{"img-01999", "img-00000", "nope", "img-01000", "img-00999", "img-01000"},
		{},
		{"absent"},
	} {
		var want []Geometry
		for _, g := range rows {
			if slices.Contains(ids, g.ImageID) {
				want = append(want, withEmptyLists(g))
			}
		}
		var got []Geometry
		if err := ReadGeometry(ctx, r, r.Size(), ids, func(g *Geometry) error { got = append(got, *g); return nil }); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ReadGeometry(%q) = %d rows, want %d: %v", ids, len(got), len(want), got)
		}
	}
	stop := errors.New("stop")
	if err := ReadGeometry(ctx, r, r.Size(), []string{"img-00001"}, func(*Geometry) error { return stop }); err != stop {
		t.Errorf("ReadGeometry returned %v, want the callback's error", err)
	}
}

// BenchmarkReadGeometry reads 10 images' geometry from a part of 2,000
// images: what a service fetching candidates for verification pays per
// part file.
func BenchmarkReadGeometry(b *testing.B) {
	rows, data := geometryFile(b, 2000)
	r := bytes.NewReader(data)
	var ids []string
	for i := 0; i < len(rows); i += len(rows) / 10 {
		ids = append(ids, rows[i].ImageID)
	}
	b.ResetTimer()
	for range b.N {
		n := 0
		if err := ReadGeometry(context.Background(), r, r.Size(), ids, func(*Geometry) error { n++; return nil }); err != nil || n != len(ids) {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkDecodeGeometryPart decodes every row of the same part, what
// ReadGeometry saves.
func BenchmarkDecodeGeometryPart(b *testing.B) {
	_, data := geometryFile(b, 2000)
	r := bytes.NewReader(data)
	b.ResetTimer()
	for range b.N {
		if err := Decode(context.Background(), r, r.Size(), func(*Geometry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// doc.go's paragraph on geometry-*.parquet names every column of the
// Geometry schema and the quantisation's constants as they are.
func TestGeometryDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "// geometry-*.parquet (Geometry)")
	if i < 0 {
		t.Fatal("doc.go has no paragraph on geometry-*.parquet (Geometry)")
	}
	para := s[i:]
	para = para[:strings.Index(para, "\n//\n")]
	schema, err := SchemaOf(reflect.TypeFor[Geometry]())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range schema.Fields() {
		if !regexp.MustCompile(`\b` + f.Name() + `\b`).MatchString(para) {
			t.Errorf("column %s is not documented in doc.go's geometry paragraph", f.Name())
		}
	}
	for _, c := range []string{
		fmt.Sprintf("·%d/width", GeometryCoordSteps),
		fmt.Sprintf("round(%d·(log₂σ+%d))", GeometryScaleStepsPerOctave, -GeometryMinLog2Scale),
		fmt.Sprintf("round(%d·θ/2π)", GeometryAngleSteps),
	} {
		if !strings.Contains(para, c) {
			t.Errorf("doc.go's geometry paragraph does not say %q", c)
		}
	}
}
