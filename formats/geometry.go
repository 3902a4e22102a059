package formats

import (
	"context"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
)

// The quantisation of Geometry. Coordinates are fractions of the image's
// side rather than fixed sub-pixel units so that any image fits 16 bits:
// features keep the original image's frame, which --max_pixels allows to
// be tens of thousands of pixels wide, while SIFT locates keypoints on the
// image downscaled to its MaxSide (1,024 in describe's defaults), so a
// 65,536th of the side is a 64th of a pixel of the image SIFT saw. Scales
// span 16 octaves in 1/16-octave steps (σ from 1/16 to ~3,900 pixels, the
// relative error at most 2^(1/32)−1 ≈ 2.2%) and angles a 256th of a turn
// (at most 0.70° off): a tenth of the tolerances spatial verification
// uses, for one byte each.
const (
	// GeometryCoordSteps is the largest coordinate code: x is quantised
	// to round((x+0.5)·GeometryCoordSteps/width).
	GeometryCoordSteps = math.MaxUint16
	// GeometryScaleStepsPerOctave and GeometryMinLog2Scale define the
	// scale code: round(GeometryScaleStepsPerOctave·(log₂σ −
	// GeometryMinLog2Scale)), clamped to [0, 255].
	GeometryScaleStepsPerOctave = 16
	GeometryMinLog2Scale        = -4
	// GeometryAngleSteps is the number of angle codes in a turn.
	GeometryAngleSteps = 256
)

// Key returns ImageID.
func (r Geometry) Key() string { return r.ImageID }

var _ Keyed = Geometry{}

var reflectGeometry = reflect.TypeFor[Geometry]()

// GeometryOf returns the geometry of the image feat describes, given the
// hard (nearest) word words[i] of each of its keypoints: the keypoints
// sorted by word id, those of one word in keypoint order, with their
// positions, scales and angles quantised as the Geometry type documents.
// It is an error unless feat's keypoint lists and words are of one length.
func GeometryOf(feat *Features, words []uint32) (Geometry, error) {
	n := len(feat.X)
	if len(words) != n || len(feat.Y) != n || len(feat.Scale) != n || len(feat.Angle) != n {
		return Geometry{}, fmt.Errorf("image %s: %d words for %d keypoints (%d y, %d scales, %d angles)",
			feat.ImageID, len(words), n, len(feat.Y), len(feat.Scale), len(feat.Angle))
	}
	g := Geometry{ImageID: feat.ImageID, Width: feat.Width, Height: feat.Height,
		WordIDs: make([]uint32, n), X: make([]uint16, n), Y: make([]uint16, n),
		LogScale: make([]uint16, n), Angle: make([]uint16, n)}
	if g.Width < 1 || g.Height < 1 {
		// Features without a size (made by hand) still need a frame: the
		// keypoints' extent.
		g.Width, g.Height = extent(feat.X), extent(feat.Y)
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	// Stable, so that a word's keypoints keep their order and the row is
	// a function of the features alone.
	slices.SortStableFunc(order, func(a, b int32) int {
		return cmpUint32(words[a], words[b])
	})
	for j, i := range order {
		g.WordIDs[j] = words[i]
		g.X[j] = coordCode(feat.X[i], g.Width)
		g.Y[j] = coordCode(feat.Y[i], g.Height)
		g.LogScale[j] = scaleCode(feat.Scale[i])
		g.Angle[j] = angleCode(feat.Angle[i])
	}
	return g, nil
}

func cmpUint32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// extent returns the smallest side, at least 1, whose frame
// [−0.5, side−0.5] holds every coordinate of v.
func extent(v []float32) int32 {
	side := 1.0
	for _, c := range v {
		if s := math.Ceil(float64(c) + 0.5); s > side && s < math.MaxInt32 {
			side = s
		}
	}
	return int32(side)
}

func coordCode(c float32, side int32) uint16 {
	q := math.Round((float64(c) + 0.5) * GeometryCoordSteps / float64(side))
	if !(q > 0) { // NaN too
		return 0
	}
	return uint16(min(q, GeometryCoordSteps))
}

func scaleCode(sigma float32) uint16 {
	q := math.Round(GeometryScaleStepsPerOctave * (math.Log2(float64(sigma)) - GeometryMinLog2Scale))
	if !(q > 0) {
		return 0
	}
	return uint16(min(q, math.MaxUint8))
}

func angleCode(a float32) uint16 {
	turns := float64(a) / (2 * math.Pi)
	if math.IsNaN(turns) || math.IsInf(turns, 0) {
		return 0
	}
	q := math.Round((turns - math.Floor(turns)) * GeometryAngleSteps)
	return uint16(int64(q) % GeometryAngleSteps)
}

// Keypoints is an image's geometry decoded for matching: keypoint i has
// visual word Words[i] (ascending), position (X[i], Y[i]) in pixels of the
// image, origin at the top-left pixel's centre (as in Features), Gaussian
// σ Scale[i] in pixels and orientation Angle[i] in radians in [0, 2π).
type Keypoints struct {
	Words              []uint32
	X, Y, Scale, Angle []float32
}

// Decode writes g's keypoints into dst, reusing its slices' storage, so
// that decoding image after image allocates nothing once they have grown.
// Words aliases g.WordIDs. Each value is within the Geometry type's stated
// error of the keypoint's features.
func (g *Geometry) Decode(dst *Keypoints) {
	n := len(g.WordIDs)
	dst.Words = g.WordIDs
	dst.X, dst.Y = resize(dst.X, n), resize(dst.Y, n)
	dst.Scale, dst.Angle = resize(dst.Scale, n), resize(dst.Angle, n)
	sx := float64(g.Width) / GeometryCoordSteps
	sy := float64(g.Height) / GeometryCoordSteps
	for i := range n {
		dst.X[i] = float32(float64(g.X[i])*sx - 0.5)
		dst.Y[i] = float32(float64(g.Y[i])*sy - 0.5)
		dst.Scale[i] = float32(math.Exp2(float64(g.LogScale[i])/GeometryScaleStepsPerOctave + GeometryMinLog2Scale))
		dst.Angle[i] = float32(float64(g.Angle[i]) * (2 * math.Pi / GeometryAngleSteps))
	}
}

func resize(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// ReadGeometry calls fn for each row of the geometry file r (one part,
// geometry-p-of-P.parquet) whose image id is among ids, in file order
// (ascending image id); ids absent from the file are skipped. It reads the
// image_id column first and then only the pages of the rows asked for, so
// fetching a few images costs a few pages, not the part. fn may keep *row
// and its slices.
func ReadGeometry(ctx context.Context, r io.ReaderAt, size int64, ids []string, fn func(row *Geometry) error) error {
	want := slices.Clone(ids)
	sort.Strings(want)
	want = slices.Compact(want)
	f, err := parquet.OpenFile(r, size, parquet.SkipBloomFilters(true))
	if err != nil {
		return err
	}
	rows, err := geometryRows(ctx, f, want)
	if err != nil || len(rows) == 0 {
		return err
	}
	pr, schema, err := newReader(f, reflectGeometry)
	if err != nil {
		return err
	}
	defer pr.Close()
	buf := make([]parquet.Row, 1)
	for _, i := range rows {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := pr.SeekToRow(i); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		n, err := pr.ReadRows(buf)
		if n != 1 {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("row %d: %w", i, err)
		}
		var g Geometry
		if err := schema.Reconstruct(&g, buf[0]); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		if err := fn(&g); err != nil {
			return err
		}
	}
	return nil
}

// geometryRows returns, ascending, the indices of the rows of f whose
// image_id is in want (sorted), reading that column alone.
func geometryRows(ctx context.Context, f *parquet.File, want []string) ([]int64, error) {
	type idOnly struct {
		ImageID string `parquet:"image_id"`
	}
	var pr *parquet.GenericReader[idOnly]
	if err := Protect(func() error {
		pr = parquet.NewGenericReader[idOnly](f)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("no image_id column: %w", err)
	}
	defer pr.Close()
	var rows []int64
	buf := make([]idOnly, 256)
	var at int64
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := pr.Read(buf)
		for _, r := range buf[:n] {
			if _, ok := slices.BinarySearch(want, r.ImageID); ok {
				rows = append(rows, at)
			}
			at++
		}
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
