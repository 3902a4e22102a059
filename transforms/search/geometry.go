package search

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/sift"
	"github.com/bowline/bowline/transforms/spatial"
)

// ErrNoGeometry reports a re-ranking or a query expansion asked of a run
// loaded without keypoint geometry: one whose job wrote no geometry files
// (made before spatial verification), or opened with Options.NoGeometry.
var ErrNoGeometry = errors.New("no keypoint geometry loaded (a run made before geometry files, or opened without them): re-ranking and query expansion need it")

// ErrCannotExpand reports query expansion asked of a learner of binary
// codes: expansion averages bags of words, and such a learner's query is
// a code of global features.
var ErrCannotExpand = errors.New("query expansion and near-copy candidates need a learner of bags of words")

// keypointBytes is the memory of one keypoint held for verification: its
// word (4 bytes), x and y (2 each), log-scale and angle (1 each), coded
// as the geometry files code them (formats.Geometry).
const keypointBytes = 10

// The keypoint arena grows by a block, never by copying what it holds, so
// that loading holds the geometry once, whatever its size: each new block
// as large as the blocks before it together, from minGeoBlock up to
// maxGeoBlock bytes (about 1.6M keypoints), and the last one trimmed once
// loaded (trim), so that a small run holds little more than its keypoints.
const (
	minGeoBlock = 64 << 10
	maxGeoBlock = 16 << 20
)

// geometries is every image's keypoints, compact: the keypoints of image
// d (an ordinal) are n[d] records of keypointBytes at offset at[d] of the
// arena, in spatial.Geometry's canonical order (by word, then largest
// scale first, then y, x and angle), which decoding preserves, so that
// verification needs no sort. 20 bytes an image besides: at, n and the
// image's size.
type geometries struct {
	blocks [][]byte
	at     []uint64 // block<<32 | byte offset in the block
	n      []uint32
	size   []int32 // width, height of image d at 2d, 2d+1
	// keep is the most keypoints kept of an image (0: all).
	keep int
}

// bytes returns the memory the geometries hold.
func (g *geometries) bytes() int64 {
	n := 8*int64(cap(g.at)) + 4*int64(cap(g.n)) + 4*int64(cap(g.size))
	for _, b := range g.blocks {
		n += int64(cap(b))
	}
	return n
}

// add stores image d's coded keypoints, packed by pack.
func (g *geometries) add(d int, packed []byte, width, height int32) {
	if len(packed) == 0 {
		g.size[2*d], g.size[2*d+1] = width, height
		return
	}
	last := len(g.blocks) - 1
	if last < 0 || len(g.blocks[last])+len(packed) > cap(g.blocks[last]) {
		var held int
		for _, b := range g.blocks {
			held += len(b)
		}
		size := min(max(minGeoBlock, held), maxGeoBlock)
		g.blocks = append(g.blocks, make([]byte, 0, max(size, len(packed))))
		last++
	}
	b := g.blocks[last]
	g.at[d] = uint64(last)<<32 | uint64(len(b))
	g.blocks[last] = append(b, packed...)
	g.n[d] = uint32(len(packed) / keypointBytes)
	g.size[2*d], g.size[2*d+1] = width, height
}

// trim copies the last block to its length if that frees more than a
// sixteenth of it.
func (g *geometries) trim() {
	if last := len(g.blocks) - 1; last >= 0 {
		if b := g.blocks[last]; cap(b)-len(b) > cap(b)/16 {
			g.blocks[last] = slices.Clone(b)
		}
	}
}

// decode writes image d's keypoints into dst, reusing its slices.
func (g *geometries) decode(d int, dst *spatial.Geometry) {
	n := int(g.n[d])
	var rec []byte
	if n > 0 {
		at := g.at[d]
		off := int(at & math.MaxUint32)
		rec = g.blocks[at>>32][off : off+n*keypointBytes]
	}
	unpack(rec, g.size[2*d], g.size[2*d+1], dst)
}

// Codes of scale and angle to values, as formats.Geometry.Decode computes
// them.
var scaleOf, angleOf = func() (s, a [256]float32) {
	for c := range 256 {
		s[c] = float32(math.Exp2(float64(c)/formats.GeometryScaleStepsPerOctave + formats.GeometryMinLog2Scale))
		a[c] = float32(float64(c) * (2 * math.Pi / formats.GeometryAngleSteps))
	}
	return s, a
}()

// unpack decodes packed keypoints of an image of the given size into dst,
// to the values formats.Geometry.Decode gives.
func unpack(rec []byte, width, height int32, dst *spatial.Geometry) {
	n := len(rec) / keypointBytes
	dst.Reset()
	dst.Width, dst.Height = float32(width), float32(height)
	sx := float64(width) / formats.GeometryCoordSteps
	sy := float64(height) / formats.GeometryCoordSteps
	dst.Words = slices.Grow(dst.Words, n)[:n]
	dst.X, dst.Y = slices.Grow(dst.X, n)[:n], slices.Grow(dst.Y, n)[:n]
	dst.Scale, dst.Angle = slices.Grow(dst.Scale, n)[:n], slices.Grow(dst.Angle, n)[:n]
	for i := range n {
		r := rec[i*keypointBytes : (i+1)*keypointBytes]
		dst.Words[i] = binary.LittleEndian.Uint32(r)
		dst.X[i] = float32(float64(binary.LittleEndian.Uint16(r[4:]))*sx - 0.5)
		dst.Y[i] = float32(float64(binary.LittleEndian.Uint16(r[6:]))*sy - 0.5)
		dst.Scale[i] = scaleOf[r[8]]
		dst.Angle[i] = angleOf[r[9]]
	}
}

// packer packs a geometry row's keypoints, reusing its scratch.
type packer struct {
	order []int32
	out   []byte
}

// pack returns row's keypoints as records of keypointBytes in canonical
// order, at most keep of them (0: all), those of the largest scale (ties
// in canonical order). The canonical order of codes is that of the values
// they decode to, as every decoding is increasing in its code. The result
// is valid until the next call.
func (p *packer) pack(row *formats.Geometry, keep int) []byte {
	n := len(row.WordIDs)
	p.order = slices.Grow(p.order[:0], n)[:n]
	for i := range p.order {
		p.order[i] = int32(i)
	}
	canonical := func(a, b int32) int {
		return cmp.Or(cmp.Compare(row.WordIDs[a], row.WordIDs[b]), cmp.Compare(row.LogScale[b], row.LogScale[a]),
			cmp.Compare(row.Y[a], row.Y[b]), cmp.Compare(row.X[a], row.X[b]), cmp.Compare(row.Angle[a], row.Angle[b]))
	}
	if keep > 0 && n > keep {
		slices.SortFunc(p.order, func(a, b int32) int {
			return cmp.Or(cmp.Compare(row.LogScale[b], row.LogScale[a]), canonical(a, b))
		})
		p.order = p.order[:keep]
	}
	slices.SortFunc(p.order, canonical)
	p.out = slices.Grow(p.out[:0], len(p.order)*keypointBytes)
	for _, i := range p.order {
		p.out = binary.LittleEndian.AppendUint32(p.out, row.WordIDs[i])
		p.out = binary.LittleEndian.AppendUint16(p.out, row.X[i])
		p.out = binary.LittleEndian.AppendUint16(p.out, row.Y[i])
		p.out = append(p.out, uint8(row.LogScale[i]), uint8(row.Angle[i])) // byte codes, checkGeometry
	}
	return p.out
}

// checkGeometry reports a geometry row verification cannot use: lists of
// different lengths, a word outside the vocabulary, a scale or angle
// beyond its byte code, or no size.
func checkGeometry(row *formats.Geometry, vocab int) error {
	n := len(row.WordIDs)
	if len(row.X) != n || len(row.Y) != n || len(row.LogScale) != n || len(row.Angle) != n {
		return fmt.Errorf("%d words, %d x, %d y, %d scales and %d angles", n, len(row.X), len(row.Y), len(row.LogScale), len(row.Angle))
	}
	if row.Width < 1 || row.Height < 1 {
		return fmt.Errorf("size %d×%d", row.Width, row.Height)
	}
	for i, w := range row.WordIDs {
		if int64(w) >= int64(vocab) {
			return fmt.Errorf("word %d outside the vocabulary of %d", w, vocab)
		}
		if row.LogScale[i] > math.MaxUint8 || row.Angle[i] > math.MaxUint8 {
			return fmt.Errorf("keypoint %d: scale code %d, angle code %d: byte codes expected", i, row.LogScale[i], row.Angle[i])
		}
	}
	return nil
}

// loadGeometry reads the geometry files of the images ord numbers, keeping
// at most keep keypoints of each (0: all). An image without a row has no
// keypoints: it is never verified.
func (ix *Index) loadGeometry(ctx context.Context, paths []string, ord map[string]uint32, keep int) error {
	n := len(ix.ids)
	g := &geometries{at: make([]uint64, n), n: make([]uint32, n), size: make([]int32, 2*n), keep: keep}
	seen := make([]bool, n)
	var p packer
	err := readTable(ctx, paths, func(r *formats.Geometry) error {
		d, ok := ord[r.ImageID]
		if !ok {
			return nil
		}
		if seen[d] {
			return fmt.Errorf("image %s has two geometry rows", r.ImageID)
		}
		seen[d] = true
		if err := checkGeometry(r, ix.vocab); err != nil {
			return fmt.Errorf("image %s: geometry of %w", r.ImageID, err)
		}
		g.add(int(d), p.pack(r, keep), r.Width, r.Height)
		return nil
	})
	if err != nil {
		return err
	}
	g.trim()
	ix.geo = g
	return nil
}

// photoGeometry writes a photo's keypoints into dst as the run's geometry
// files hold an indexed image's: each at its hard word under the run's
// quantiser (words, in keypoint order), coded (formats.GeometryOf), at
// most the loaded geometry's keep, decoded. A photo of an indexed image is
// so verified as its id would be.
func (ix *Index) photoGeometry(w *worker, width, height int, kps []sift.Keypoint, words []uint32, dst *spatial.Geometry) error {
	feat := formats.Features{Width: int32(width), Height: int32(height),
		X: make([]float32, len(kps)), Y: make([]float32, len(kps)), Scale: make([]float32, len(kps)), Angle: make([]float32, len(kps))}
	for i, kp := range kps {
		feat.X[i], feat.Y[i], feat.Scale[i], feat.Angle[i] = kp.X, kp.Y, kp.Scale, kp.Angle
	}
	row, err := formats.GeometryOf(&feat, words)
	if err != nil {
		return err
	}
	unpack(w.pk.pack(&row, ix.geo.keep), row.Width, row.Height, dst)
	return nil
}
