package search

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/sift"
)

// A photo is decoded and described as the job described the run's images
// (describe.Options.Decode): for SIFT alone, a JPEG's luma plane, at full
// size or, in a run described with DCT-scaled decoding
// (run.Settings.DCTScale), scaled if it is twice MaxSide through the
// run's reduced transforms (run.Settings.DCTVersion, libjpeg's in a run
// that recorded none), its keypoints in the full photo's coordinates; in colour for a learner of the global
// features. In each its keypoints, descriptors and, in colour, its global
// features are the job's, bit for bit.
func TestPhotoDecodedAsTheRun(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, colourTexture(960, 720), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, c := range []struct {
		name             string
		dctScale, colour bool
		dctVersion       int
		shift            int
	}{
		{"luma", false, false, describe.DCTVersion, 0},
		{"dct_scale", true, false, describe.DCTVersion, 1},
		{"dct_scale, version 0", true, false, 0, 1},
		{"global", false, true, describe.DCTVersion, 0},
	} {
		opt := describe.DefaultOptions()
		opt.SIFT.MaxSide, opt.DCTScale, opt.DCTVersion, opt.Global = 400, c.dctScale, c.dctVersion, c.colour
		d, err := describe.NewDescriber(opt, func(context.Context, string) ([]byte, error) { return data, nil })
		if err != nil {
			t.Fatal(err)
		}
		want, dead := d.Describe(context.Background(), formats.Image{ImageID: "p", URI: "p.jpg"})
		if dead != nil {
			t.Fatal(dead.Reason)
		}
		r := run.Settings{SIFT: run.SIFT(opt.SIFT), MaxPixels: opt.MaxPixels, DCTScale: c.dctScale, DCTVersion: c.dctVersion, TF: "raw"}
		set, err := settingsOf(r)
		if err != nil {
			t.Fatal(err)
		}
		ix := &Index{set: set}
		photo, err := ix.decode(data, c.colour)
		if err != nil {
			t.Fatal(err)
		}
		if photo.Shift != c.shift || photo.Width != 960 || photo.Height != 720 {
			t.Fatalf("%s: decoded at shift %d as %dx%d; want shift %d, 960x720", c.name, photo.Shift, photo.Width, photo.Height, c.shift)
		}
		// The colour decode of a colour JPEG is an *image.YCbCr; its luma
		// plane alone an *image.Gray.
		if _, grey := photo.Image.(*image.Gray); grey == c.colour {
			t.Errorf("%s: the photo decoded as %T; want colour %v", c.name, photo.Image, c.colour)
		}
		ex, err := sift.NewExtractor(set.describe.SIFT)
		if err != nil {
			t.Fatal(err)
		}
		w := &worker{ex: ex}
		kps, desc, err := w.extract(context.Background(), photo)
		if err != nil {
			t.Fatal(err)
		}
		if len(kps) == 0 || len(kps) != len(want.X) {
			t.Fatalf("%s: %d keypoints, the job's %d", c.name, len(kps), len(want.X))
		}
		for i, kp := range kps {
			if kp.X != want.X[i] || kp.Y != want.Y[i] || kp.Scale != want.Scale[i] || kp.Angle != want.Angle[i] ||
				!bytes.Equal(desc[i*formats.DescriptorSize:(i+1)*formats.DescriptorSize], want.Descriptors[i]) {
				t.Fatalf("%s: keypoint %d at (%v, %v), the job's at (%v, %v)", c.name, i, kp.X, kp.Y, want.X[i], want.Y[i])
			}
		}
		if !c.colour {
			continue
		}
		g, err := global.NewExtractor().Extract(photo.Image)
		if err != nil {
			t.Fatal(err)
		}
		for k, f := range [][]float32{want.Colour, want.Edge, want.Gabor, want.LBP, want.GIST} {
			if len(f) == 0 || !slices.Equal(g[k], f) {
				t.Fatalf("%s: global feature %d of the query differs from the job's", c.name, k)
			}
		}
	}
}

// colourTexture is texture with its blocks tinted, each channel its own
// way: a colour photo whose grey is not its every channel.
func colourTexture(w, h int) *image.RGBA {
	g := texture(w, h)
	img := image.NewRGBA(g.Rect)
	for y := range h {
		for x := range w {
			v := g.GrayAt(x, y).Y
			img.SetRGBA(x, y, color.RGBA{v, v / 2, 255 - v, 255})
		}
	}
	return img
}
