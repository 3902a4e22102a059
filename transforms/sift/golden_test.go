package sift

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"image"
	_ "image/jpeg"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// goldenSHA256 is the digest of Extract's output on goldenImages, with
// SIFT and with RootSIFT: every keypoint's position, scale, angle and
// response as float32 bits, then the descriptor bytes.
//
// Runs carry features forward: an incremental night describes only new
// and changed photos and keeps the others' features, which earlier code
// computed. So the extractor's output must not change by accident. A
// change that means to change it updates this digest and says so in its
// commit; one that only makes Extract faster must leave it as it is.
const goldenSHA256 = "6ec4ae5fbdb0514c4c91df92a16866cc04c9e75fcd5e3e278ab23866a36b97fe"

// goldenImages returns a 640×480 texture and every eighth photo of the
// shapes test set.
func goldenImages(t *testing.T) []*Image {
	ims := []*Image{texture(640, 480, 42)}
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "shapes", "images", "*", "*.jpg"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("the shapes test set: %v (%d photos)", err, len(paths))
	}
	slices.Sort(paths)
	for i := 0; i < len(paths); i += 8 {
		f, err := os.Open(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		src, _, err := image.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", paths[i], err)
		}
		ims = append(ims, FromImage(src, nil))
	}
	return ims
}

// TestExtractGolden checks Extract's output, vector code and scalar,
// against goldenSHA256. It runs on amd64 only: math's Exp, Sin and Cos
// are assembly there and Go elsewhere, and may differ in the last bit.
func TestExtractGolden(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the digest is amd64's")
	}
	ims := goldenImages(t)
	forEachPath(t, func(t *testing.T) {
		h := sha256.New()
		var buf [4]byte
		kps := 0
		for _, root := range []bool{false, true} {
			opt := DefaultOptions()
			opt.RootSIFT = root
			e := mustExtractor(t, opt)
			for _, im := range ims {
				ks, desc := e.Extract(im)
				kps += len(ks)
				for _, k := range ks {
					for _, v := range []float32{k.X, k.Y, k.Scale, k.Angle, k.Response} {
						binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v))
						h.Write(buf[:])
					}
				}
				h.Write(desc)
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != goldenSHA256 {
			t.Errorf("Extract's output (%d keypoints) has digest %s, want %s: see goldenSHA256", kps, got, goldenSHA256)
		}
	})
}
