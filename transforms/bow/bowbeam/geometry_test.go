package bowbeam

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
)

// located returns planted's images with a position, scale and angle for
// every keypoint, in 320×240 images.
func located(r *rand.Rand) []formats.Features {
	feats, _ := planted(r)
	for i := range feats {
		f := &feats[i]
		f.Width, f.Height = 320, 240
		for range f.Descriptors {
			f.X = append(f.X, float32(r.Float64()*320-0.5))
			f.Y = append(f.Y, float32(r.Float64()*240-0.5))
			f.Scale = append(f.Scale, float32(1+r.Float64()*30))
			f.Angle = append(f.Angle, float32(r.Float64()*2*math.Pi))
		}
	}
	return feats
}

// countOne quantises part 0 of 1, made of feats, with opt's assignment and
// the images of known carried, and returns the counts and geometry rows
// written, by image id, with the parts' records.
func countOne(t *testing.T, feats []formats.Features, opt Options, known map[string]carried) (counts map[string]formats.BoW, geometry map[string]formats.Geometry, cp, gp formats.Part) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, formats.ShardName("features", 0, 1))
	if err := fileio.WriteFile(ctx, path, feats); err != nil {
		t.Fatal(err)
	}
	_, cb := planted(rand.New(rand.NewPCG(1, 2)))
	qs, err := plantedQuantizers(cb, opt.Soft)
	if err != nil {
		t.Fatal(err)
	}
	cp, gp, _, err = countPart(ctx, dir, formats.Part{Name: "features", Part: 0, Parts: 1, Path: path}, qs, known)
	if err != nil {
		t.Fatal(err)
	}
	counts, geometry = map[string]formats.BoW{}, map[string]formats.Geometry{}
	err = fileio.ReadEach(ctx, cp.Path, func(b *formats.BoW) error { counts[b.ImageID] = *b; return nil })
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	err = fileio.ReadEach(ctx, gp.Path, func(g *formats.Geometry) error {
		geometry[g.ImageID] = *g
		ids = append(ids, g.ImageID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "geometry-00000-of-00001.parquet"); gp.Path != want || gp.Name != GeometryName || gp.Rows != int64(len(feats)) {
		t.Errorf("geometry part %+v, want %d rows in %s", gp, len(feats), want)
	}
	var want []string
	for _, f := range feats {
		want = append(want, f.ImageID)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("geometry rows %q: want one per image in the features' order %q", ids, want)
	}
	return counts, geometry, cp, gp
}

// The quantisation writes each image's geometry from the search that made
// its counts: every keypoint with the word its descriptor alone gets from
// hard assignment (so that, hard, an image's words with repetitions are
// its counts), its position, scale and angle those of GeometryOf; under
// soft assignment the counts are soft and the words still hard.
func TestCountPartGeometry(t *testing.T) {
	feats := located(rand.New(rand.NewPCG(7, 8)))
	_, cb := planted(rand.New(rand.NewPCG(1, 2)))
	hard, err := bow.NewQuantizer(cb.Centroids, cb.Dim)
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {Soft: bow.SoftOptions{R: 3}}} {
		counts, geometry, _, gp := countOne(t, feats, opt, nil)
		var keypoints int64
		for _, f := range feats {
			words := make([]uint32, len(f.Descriptors))
			for i, d := range f.Descriptors {
				words[i] = hard.Quantize(d).Idx[0]
			}
			want, err := formats.GeometryOf(&f, words)
			if err != nil {
				t.Fatal(err)
			}
			got := geometry[f.ImageID]
			if len(want.WordIDs) == 0 {
				want = formats.Geometry{ImageID: f.ImageID, Width: f.Width, Height: f.Height,
					WordIDs: []uint32{}, X: []uint16{}, Y: []uint16{}, LogScale: []uint16{}, Angle: []uint16{}}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("soft %d: image %s: geometry %+v, want %+v", opt.Soft.R, f.ImageID, got, want)
			}
			keypoints += int64(len(words))
			// The words with repetitions are the hard counts.
			var fromWords sparse.Vector
			for i, w := range got.WordIDs {
				if i == 0 || w != got.WordIDs[i-1] {
					fromWords.Idx = append(fromWords.Idx, w)
					fromWords.Val = append(fromWords.Val, 0)
				}
				fromWords.Val[len(fromWords.Val)-1]++
			}
			c := counts[f.ImageID]
			same := slices.Equal(fromWords.Idx, c.WordIDs) && slices.Equal(fromWords.Val, c.Weights)
			if opt.Soft.R == 0 && !same {
				t.Errorf("image %s: geometry's words give counts %v %v, the counts file %v %v", f.ImageID, fromWords.Idx, fromWords.Val, c.WordIDs, c.Weights)
			}
		}
		if gp.Keypoints != keypoints {
			t.Errorf("soft %d: the geometry part counts %d keypoints, want %d", opt.Soft.R, gp.Keypoints, keypoints)
		}
	}
}

// An image an incremental run carries keeps the previous run's counts and
// geometry as they were, without its descriptors being quantised.
func TestCountPartCarriesGeometry(t *testing.T) {
	feats := located(rand.New(rand.NewPCG(9, 10)))
	id := feats[3].ImageID
	old := carried{
		counts:   formats.BoW{ImageID: id, WordIDs: []uint32{5}, Weights: []float32{2}},
		geometry: formats.Geometry{ImageID: id, Width: 9, Height: 9, WordIDs: []uint32{5, 5}, X: []uint16{1, 2}, Y: []uint16{3, 4}, LogScale: []uint16{5, 6}, Angle: []uint16{7, 8}},
	}
	counts, geometry, cp, _ := countOne(t, feats, Options{}, map[string]carried{id: old})
	if got := geometry[id]; !reflect.DeepEqual(got, old.geometry) {
		t.Errorf("carried image's geometry %+v, want the previous run's %+v", got, old.geometry)
	}
	if got := counts[id]; !slices.Equal(got.WordIDs, old.counts.WordIDs) || !slices.Equal(got.Weights, old.counts.Weights) {
		t.Errorf("carried image's counts %+v, want the previous run's %+v", got, old.counts)
	}
	var quantised int64
	for _, f := range feats {
		if f.ImageID != id {
			quantised += int64(len(f.Descriptors))
		}
	}
	if cp.Inputs != quantised {
		t.Errorf("%d descriptors quantised, want the others' %d", cp.Inputs, quantised)
	}
}

// Features whose keypoint lists disagree with their descriptors fail the
// part with the image named, instead of writing geometry that matches no
// keypoint.
func TestCountPartRaggedFeatures(t *testing.T) {
	feats := located(rand.New(rand.NewPCG(11, 12)))
	feats[2].X = feats[2].X[1:]
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, formats.ShardName("features", 0, 1))
	if err := fileio.WriteFile(ctx, path, feats); err != nil {
		t.Fatal(err)
	}
	_, cb := planted(rand.New(rand.NewPCG(1, 2)))
	qs, err := plantedQuantizers(cb, bow.SoftOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = countPart(ctx, dir, formats.Part{Name: "features", Part: 0, Parts: 1, Path: path}, qs, nil)
	if err == nil || !strings.Contains(err.Error(), feats[2].ImageID) {
		t.Errorf("countPart of ragged features: %v, want an error naming %s", err, feats[2].ImageID)
	}
}

// A part whose images all keep the previous run's counts quantises
// nothing, so it reads no vocabulary and indexes none (at 10⁶ words, 512
// MB of words and their IVF); one image to quantise makes it read them.
func TestCarriedPartReadsNoCodebook(t *testing.T) {
	ctx := context.Background()
	feats := located(rand.New(rand.NewPCG(13, 14)))[:3]
	dir, prev := t.TempDir(), t.TempDir()
	featPath := filepath.Join(dir, formats.ShardName("features", 0, 1))
	if err := fileio.WriteFile(ctx, featPath, feats); err != nil {
		t.Fatal(err)
	}
	var counts []formats.BoW
	var geometry []formats.Geometry
	var ids []string
	for i, f := range feats {
		counts = append(counts, formats.BoW{ImageID: f.ImageID, Label: f.Label, WordIDs: []uint32{uint32(i)}, Weights: []float32{1}})
		geometry = append(geometry, formats.Geometry{ImageID: f.ImageID, WordIDs: []uint32{}, X: []uint16{}, Y: []uint16{}, LogScale: []uint16{}, Angle: []uint16{}})
		ids = append(ids, f.ImageID)
	}
	if err := fileio.WriteFile(ctx, filepath.Join(prev, formats.ShardName(CountsName, 0, 1)), counts); err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(ctx, filepath.Join(prev, formats.ShardName(GeometryName, 0, 1)), geometry); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), formats.ShardName("codebook", 0, 1))
	cf := codebookFile{CB: kmeansbeam.Codebook{Paths: []string{missing}, Content: "sha256:none", K: 1, Dim: formats.DescriptorSize}, Carry: true}
	run := func(carried []string) (formats.Part, error) {
		fn := &carryCountPartFn{Dir: t.TempDir(), Prev: Previous{Dir: prev, Parts: 1, Counts: []int{0}, Geometry: []int{0}}}
		fn.Setup()
		var out formats.Part
		err := fn.ProcessElement(ctx, formats.Part{Name: "features", Parts: 1, Path: featPath, Rows: int64(len(feats)), Carried: carried}, cf,
			func(p formats.Part) { out = p }, func(formats.Part) {}, func(DF) {})
		return out, err
	}
	p, err := run(ids)
	if err != nil {
		t.Fatalf("every image carried: %v, want no vocabulary read", err)
	}
	got, err := fileio.ReadFile[formats.BoW](ctx, p.Path)
	if err != nil || !reflect.DeepEqual(got, counts) || p.Inputs != 0 {
		t.Errorf("every image carried: counts %+v (%v), %d descriptors quantised; want the previous run's %+v, none", got, err, p.Inputs, counts)
	}
	if _, err := run(ids[1:]); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("an image to quantise: %v, want an error naming the missing codebook %s", err, missing)
	}
}
