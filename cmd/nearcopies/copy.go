package main

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"image"
	"image/draw"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"slices"
)

// transform is how a near-copy is made of its source.
type transform struct {
	// Rotate is the turn in degrees, clockwise as displayed: a multiple
	// of 90, so that pixels move and none is resampled.
	Rotate int `json:"rotate"`
	// Crop is the fraction of each side kept, in (0, 1].
	Crop float64 `json:"crop"`
	// Quality is the JPEG quality of the copy, 1 to 100.
	Quality int `json:"quality"`
}

// validate says which field is out of range, naming the flag that sets it.
func (t transform) validate() error {
	switch {
	case t.Rotate%90 != 0:
		return fmt.Errorf("--rotate %d: want a multiple of 90 (a turn that moves pixels without resampling them)", t.Rotate)
	case !(t.Crop > 0 && t.Crop <= 1):
		return fmt.Errorf("--crop %v: want a fraction of each side in (0, 1]", t.Crop)
	case t.Quality < 1 || t.Quality > 100:
		return fmt.Errorf("--quality %d: want 1 to 100", t.Quality)
	}
	return nil
}

// copyRNG returns the random source of one image's copy: drawn from the
// seed and the image's id, so that an image's copy does not depend on
// which others were drawn with it, nor on --n.
func copyRNG(seed uint64, imageID string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(imageID))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// nearCopy returns the JPEG of img turned, cropped at a place drawn from
// rng and encoded as t says, and where the crop lies in the turned image.
func nearCopy(img image.Image, t transform, rng *rand.Rand) ([]byte, image.Rectangle, error) {
	turned := rotate(img, t.Rotate/90)
	cut := cropRect(turned.Bounds().Size(), t.Crop, rng)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, turned.SubImage(cut), &jpeg.Options{Quality: t.Quality}); err != nil {
		return nil, cut, fmt.Errorf("encoding the copy: %w", err)
	}
	return buf.Bytes(), cut, nil
}

// rotate returns img turned by quarter turns clockwise as displayed (y
// down), its origin at (0, 0): one quarter turn takes pixel (x, y) of a
// w×h image to (h−1−y, x) of the h×w result. Pixels are copied, never
// interpolated, and never mirrored: a transpose alone would mirror the
// photo, which SIFT's descriptors do not match.
func rotate(img image.Image, quarters int) *image.RGBA {
	b := img.Bounds()
	src := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(src, src.Bounds(), img, b.Min, draw.Src)
	q := ((quarters % 4) + 4) % 4
	if q == 0 {
		return src
	}
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if q%2 == 1 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for y := range h {
		for x := range w {
			var u, v int
			switch q {
			case 1:
				u, v = h-1-y, x
			case 2:
				u, v = w-1-x, h-1-y
			case 3:
				u, v = y, w-1-x
			}
			copy(dst.Pix[dst.PixOffset(u, v):][:4], src.Pix[src.PixOffset(x, y):][:4])
		}
	}
	return dst
}

// cropRect returns a rectangle of frac of each side of an image of size
// (rounded, at least a pixel) at a place drawn uniformly from rng among
// those that fit.
func cropRect(size image.Point, frac float64, rng *rand.Rand) image.Rectangle {
	w := max(1, int(math.Round(frac*float64(size.X))))
	h := max(1, int(math.Round(frac*float64(size.Y))))
	x := rng.IntN(size.X - w + 1)
	y := rng.IntN(size.Y - h + 1)
	return image.Rect(x, y, x+w, y+h)
}

// sample returns n distinct ordinals of 0..total−1 drawn from seed,
// ascending (all of them if n ≥ total): Floyd's algorithm, in memory of n,
// not of the run.
func sample(total, n int, seed uint64) []int {
	if n >= total {
		n = total
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e656172636f7079)) // "nearcopy"
	picked := make(map[int]bool, n)
	out := make([]int, 0, n)
	for j := total - n; j < total; j++ {
		t := rng.IntN(j + 1)
		if picked[t] {
			t = j
		}
		picked[t] = true
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
