package search

import (
	"bytes"
	"context"
	"image/jpeg"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/sift"
)

// A photo is decoded and described as the job described the run's images:
// in a run described with DCT-scaled decoding (run.Settings.DCTScale) a
// JPEG of twice MaxSide is decoded scaled and its keypoints are the
// job's, in the full photo's coordinates; in any other run it is decoded
// at full size.
func TestPhotoDecodedAsTheRun(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, texture(960, 720), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, dctScale := range []bool{false, true} {
		opt := describe.DefaultOptions()
		opt.SIFT.MaxSide, opt.DCTScale = 400, dctScale
		d, err := describe.NewDescriber(opt, func(context.Context, string) ([]byte, error) { return data, nil })
		if err != nil {
			t.Fatal(err)
		}
		want, dead := d.Describe(context.Background(), formats.Image{ImageID: "p", URI: "p.jpg"})
		if dead != nil {
			t.Fatal(dead.Reason)
		}
		r := run.Settings{SIFT: run.SIFT(opt.SIFT), MaxPixels: opt.MaxPixels, DCTScale: dctScale, TF: "raw"}
		set, err := settingsOf(r)
		if err != nil {
			t.Fatal(err)
		}
		ix := &Index{set: set}
		photo, err := ix.decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if shift := map[bool]int{false: 0, true: 1}[dctScale]; photo.Shift != shift || photo.Width != 960 || photo.Height != 720 {
			t.Fatalf("DCTScale %v: decoded at shift %d as %dx%d; want shift %d, 960x720", dctScale, photo.Shift, photo.Width, photo.Height, shift)
		}
		ex, err := sift.NewExtractor(set.sift)
		if err != nil {
			t.Fatal(err)
		}
		w := &worker{ex: ex}
		kps, desc, err := w.extract(context.Background(), photo)
		if err != nil {
			t.Fatal(err)
		}
		if len(kps) == 0 || len(kps) != len(want.X) {
			t.Fatalf("DCTScale %v: %d keypoints, the job's %d", dctScale, len(kps), len(want.X))
		}
		for i, kp := range kps {
			if kp.X != want.X[i] || kp.Y != want.Y[i] || kp.Scale != want.Scale[i] ||
				!bytes.Equal(desc[i*formats.DescriptorSize:(i+1)*formats.DescriptorSize], want.Descriptors[i]) {
				t.Fatalf("DCTScale %v: keypoint %d at (%v, %v), the job's at (%v, %v)", dctScale, i, kp.X, kp.Y, want.X[i], want.Y[i])
			}
		}
	}
}
