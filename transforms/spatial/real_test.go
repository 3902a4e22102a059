package spatial

import (
	"image"
	_ "image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/sift"
)

// eth80Image decodes an ETH-80 photo (real photos beside the checkout:
// testkit.ETH80 skips t without them) to gray.
func eth80Image(t *testing.T, class, name string) *sift.Image {
	t.Helper()
	p := filepath.Join(testkit.ETH80(t), "images", class, name)
	f, err := os.Open(p)
	if err != nil {
		t.Fatalf("ETH-80 photo %s: %v", p, err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return sift.FromImage(img, nil)
}

// warp renders src under the map t onto a w×h canvas: each pixel samples
// src bilinearly at its preimage; outside src it takes the mean of src's
// border, the photo's background, so that the canvas edge adds few
// keypoints of its own.
func warp(src *sift.Image, t Affine, w, h int) *sift.Image {
	var border float64
	for x := range src.Width {
		border += float64(src.Pix[x]) + float64(src.Pix[(src.Height-1)*src.Width+x])
	}
	border /= float64(2 * src.Width)
	det := t.A11*t.A22 - t.A12*t.A21
	inv := Affine{A11: t.A22 / det, A12: -t.A12 / det, A21: -t.A21 / det, A22: t.A11 / det}
	inv.Tx, inv.Ty = -(inv.A11*t.Tx + inv.A12*t.Ty), -(inv.A21*t.Tx + inv.A22*t.Ty)
	dst := &sift.Image{Width: w, Height: h, Pix: make([]float32, w*h)}
	at := func(x, y int) float64 {
		if x < 0 || y < 0 || x >= src.Width || y >= src.Height {
			return border
		}
		return float64(src.Pix[y*src.Width+x])
	}
	for y := range h {
		for x := range w {
			u, v := inv.Apply(float64(x), float64(y))
			x0, y0 := int(math.Floor(u)), int(math.Floor(v))
			fx, fy := u-float64(x0), v-float64(y0)
			top := at(x0, y0)*(1-fx) + at(x0+1, y0)*fx
			bot := at(x0, y0+1)*(1-fx) + at(x0+1, y0+1)*fx
			dst.Pix[y*w+x] = float32(top*(1-fy) + bot*fy)
		}
	}
	return dst
}

// Real SIFT frames: an ETH-80 photo against a rotated and scaled copy of
// itself shares many words in the right places, and the transform found
// is the warp; against a photo of another object the words it shares
// agree on no transform.
func TestRealSIFT(t *testing.T) {
	truth := Similarity(0.8, math.Pi/6, 0, 0)
	// Rotate and scale about the photo's centre (128, 128) onto the centre
	// of a 300×300 canvas, which holds the whole rotated photo.
	cx, cy := truth.Apply(128, 128)
	truth.Tx, truth.Ty = 150-cx, 150-cy

	orig := eth80Image(t, "car", "car1-000-000.jpg")
	images := []*sift.Image{orig, warp(orig, truth, 300, 300), eth80Image(t, "cow", "cow1-000-000.jpg")}
	ex, err := sift.NewExtractor(sift.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var kps [][]sift.Keypoint
	var descs [][]byte
	var all []float32
	for _, im := range images {
		k, d := ex.Extract(im)
		kps, descs = append(kps, k), append(descs, d)
		for _, b := range d {
			all = append(all, float32(b))
		}
	}
	// A vocabulary of the three photos' descriptors, a word for every
	// four: small, so that the images share many words and bursts.
	dim := sift.DescriptorSize
	voc, err := kmeans.Train(all, dim, kmeans.Options{K: len(all) / dim / 4, MaxIter: 10, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	q := nn.NewExact(voc.Centroids, dim)
	geoms := make([]*Geometry, len(images))
	for i, im := range images {
		words := q.QuantizeBytes(nil, descs[i], nil)
		g := &Geometry{Width: float32(im.Width), Height: float32(im.Height)}
		for j, k := range kps[i] {
			g.Append(words[j], k.X, k.Y, k.Scale, k.Angle)
		}
		g.Sort()
		if err := g.Validate(); err != nil {
			t.Fatal(err)
		}
		geoms[i] = g
	}
	t.Logf("keypoints %d, %d, %d; %d words", geoms[0].Len(), geoms[1].Len(), geoms[2].Len(), voc.K)

	m := mustMatcher(t, DefaultOptions())
	same := m.Verify(geoms[0], geoms[1])
	other := m.Verify(geoms[0], geoms[2])
	t.Logf("warped copy: %+v", same)
	t.Logf("other object: %+v", other)
	if !same.Verified || same.Inliers < 25 {
		t.Errorf("warped copy: %d inliers of %d correspondences, want >= 25", same.Inliers, same.Correspondences)
	}
	d := maxDisplacement(same.Transform, truth, 256, 256)
	t.Logf("warped copy: transform within %.2f px of the warp over the photo", d)
	if d > 3 {
		t.Errorf("warped copy: transform %+v is %.1f px from the warp %+v over the photo, want <= 3", same.Transform, d, truth)
	}
	if other.Verified || other.Inliers >= same.Inliers/5 {
		t.Errorf("other object: %d inliers of %d correspondences, want < %d and < a fifth of the copy's %d",
			other.Inliers, other.Correspondences, DefaultOptions().MinInliers, same.Inliers)
	}
}

// On ETH-80's photos of eight objects, each seen from eight directions
// 22.5° of azimuth apart (a turn of the object in depth, which no
// transform of the image models exactly), verification passes most pairs
// of neighbouring views of one object and almost no pairs of two objects.
func TestETH80Views(t *testing.T) {
	objects := [][2]string{{"car", "car1"}, {"cow", "cow1"}, {"horse", "horse1"}, {"dog", "dog1"},
		{"cup", "cup1"}, {"pear", "pear1"}, {"apple", "apple1"}, {"tomato", "tomato1"}}
	azimuths := []string{"000", "022", "045", "068", "090", "112", "135", "158"}
	ex, err := sift.NewExtractor(sift.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	type photo struct {
		kps  []sift.Keypoint
		desc []byte
		w, h int
	}
	var photos []photo
	var all []float32
	for _, o := range objects {
		for _, a := range azimuths {
			im := eth80Image(t, o[0], o[1]+"-090-"+a+".jpg")
			k, d := ex.Extract(im)
			photos = append(photos, photo{k, d, im.Width, im.Height})
			for _, b := range d {
				all = append(all, float32(b))
			}
		}
	}
	const dim = sift.DescriptorSize
	voc, err := kmeans.Train(all, dim, kmeans.Options{K: 1000, MaxIter: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	quant := nn.NewExact(voc.Centroids, dim)
	geoms := make([]*Geometry, len(photos))
	for i, p := range photos {
		words := quant.QuantizeBytes(nil, p.desc, nil)
		g := &Geometry{Width: float32(p.w), Height: float32(p.h)}
		for j, k := range p.kps {
			g.Append(words[j], k.X, k.Y, k.Scale, k.Angle)
		}
		g.Sort()
		geoms[i] = g
	}
	m := mustMatcher(t, DefaultOptions())
	var near, nearVerified, nearInliers, other, otherVerified, otherInliers int
	for i := range geoms {
		for j := i + 1; j < len(geoms); j++ {
			r := m.Verify(geoms[i], geoms[j])
			switch n := len(azimuths); {
			case i/n != j/n:
				other++
				otherInliers += r.Inliers
				otherVerified += boolInt(r.Verified)
			case j == i+1:
				near++
				nearInliers += r.Inliers
				nearVerified += boolInt(r.Verified)
			}
		}
	}
	t.Logf("neighbouring views: %d of %d verified, %.1f inliers; other objects: %d of %d verified, %.2f inliers",
		nearVerified, near, float64(nearInliers)/float64(near), otherVerified, other, float64(otherInliers)/float64(other))
	if nearVerified*2 < near {
		t.Errorf("%d of %d pairs of neighbouring views verified, want at least half", nearVerified, near)
	}
	if otherVerified*100 > other {
		t.Errorf("%d of %d pairs of different objects verified, want at most 1%%", otherVerified, other)
	}
}
