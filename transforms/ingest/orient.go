package ingest

import (
	"image"
	"image/color"
)

// orient returns img turned upright as Exif Orientation o (2–8) says, with
// bounds at the origin. The Exif table names, for each value, the sides the
// stored image's first row and first column belong on:
//
//	1: top, left      2: top, right     3: bottom, right   4: bottom, left
//	5: left, top      6: right, top     7: right, bottom   8: left, bottom
//
// so 2 is a mirror image, 3 a half turn, 4 upside-down mirrored, 6 a
// quarter turn clockwise, 8 one anticlockwise, and 5 and 7 the transposes.
// Pixel-slice images keep their type (YCbCr becomes 4:4:4, so that chroma
// subsampling need not turn with the image); others become *image.RGBA64.
func orient(img image.Image, o int) image.Image {
	if o < 2 || o > 8 {
		return img
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	// The stored pixel shown at (x, y) of the upright image is
	// (x0 + xx*x + xy*y, y0 + yx*x + yy*y), relative to b.Min.
	var x0, xx, xy, y0, yx, yy int
	switch o {
	case 2:
		x0, xx, yy = w-1, -1, 1
	case 3:
		x0, xx, y0, yy = w-1, -1, h-1, -1
	case 4:
		xx, y0, yy = 1, h-1, -1
	case 5:
		xy, yx = 1, 1
	case 6:
		xy, y0, yx = 1, h-1, -1
	case 7:
		x0, xy, y0, yx = w-1, -1, h-1, -1
	case 8:
		x0, xy, yx = w-1, -1, 1
	}
	dr := image.Rect(0, 0, dw, dh)
	// remap copies bpp-byte pixels from a pixel slice laid out with stride
	// starting at b.Min into a new one for dr.
	remap := func(src []byte, stride, start, bpp int) ([]byte, int) {
		dst := make([]byte, dw*dh*bpp)
		stepX := yx*stride + xx*bpp // source step for one pixel right
		stepY := yy*stride + xy*bpp // … and for one row down
		row := start + y0*stride + x0*bpp
		for y, d := 0, 0; y < dh; y, row = y+1, row+stepY {
			for x, s := 0, row; x < dw; x, s, d = x+1, s+stepX, d+bpp {
				copy(dst[d:d+bpp], src[s:s+bpp])
			}
		}
		return dst, dw * bpp
	}
	switch m := img.(type) {
	case *image.Gray:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 1)
		return &image.Gray{Pix: pix, Stride: stride, Rect: dr}
	case *image.Gray16:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 2)
		return &image.Gray16{Pix: pix, Stride: stride, Rect: dr}
	case *image.Alpha:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 1)
		return &image.Alpha{Pix: pix, Stride: stride, Rect: dr}
	case *image.Alpha16:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 2)
		return &image.Alpha16{Pix: pix, Stride: stride, Rect: dr}
	case *image.RGBA:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 4)
		return &image.RGBA{Pix: pix, Stride: stride, Rect: dr}
	case *image.NRGBA:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 4)
		return &image.NRGBA{Pix: pix, Stride: stride, Rect: dr}
	case *image.RGBA64:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 8)
		return &image.RGBA64{Pix: pix, Stride: stride, Rect: dr}
	case *image.NRGBA64:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 8)
		return &image.NRGBA64{Pix: pix, Stride: stride, Rect: dr}
	case *image.CMYK:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 4)
		return &image.CMYK{Pix: pix, Stride: stride, Rect: dr}
	case *image.Paletted:
		pix, stride := remap(m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), 1)
		return &image.Paletted{Pix: pix, Stride: stride, Rect: dr, Palette: m.Palette}
	case *image.YCbCr:
		y, ystride := remap(m.Y, m.YStride, m.YOffset(b.Min.X, b.Min.Y), 1)
		out := &image.YCbCr{Y: y, YStride: ystride, Cb: make([]byte, dw*dh), Cr: make([]byte, dw*dh),
			CStride: dw, SubsampleRatio: image.YCbCrSubsampleRatio444, Rect: dr}
		for y, d := 0, 0; y < dh; y++ {
			for x := 0; x < dw; x, d = x+1, d+1 {
				c := m.COffset(b.Min.X+x0+xx*x+xy*y, b.Min.Y+y0+yx*x+yy*y)
				out.Cb[d], out.Cr[d] = m.Cb[c], m.Cr[c]
			}
		}
		return out
	}
	out := image.NewRGBA64(dr)
	for y := 0; y < dh; y++ {
		for x := 0; x < dw; x++ {
			out.Set(x, y, color.RGBA64Model.Convert(img.At(b.Min.X+x0+xx*x+xy*y, b.Min.Y+y0+yx*x+yy*y)))
		}
	}
	return out
}
