package bowbeam

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/nn"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

// planted returns images whose descriptors lie around 12 centres in
// [40, 216)¹²⁸ with N(0, 15²) noise per coordinate, one image without
// keypoints, and a vocabulary of 24 words trained on them: twice as many
// words as centres, so a descriptor has close second and third words.
func planted(r *rand.Rand) ([]formats.Features, book) {
	const centres, dim = 12, formats.DescriptorSize
	c := make([]float64, centres*dim)
	for i := range c {
		c[i] = float64(40 + r.IntN(176))
	}
	var feats []formats.Features
	var all []float32
	for i := range 20 {
		f := formats.Features{ImageID: fmt.Sprintf("img%02d", i), Label: fmt.Sprintf("class%d", i%3)}
		for range 15 + r.IntN(25) {
			m := r.IntN(centres)
			d := make([]byte, dim)
			for j := range d {
				d[j] = byte(min(max(math.Round(c[m*dim+j]+15*r.NormFloat64()), 0), 255))
				all = append(all, float32(d[j]))
			}
			f.Descriptors = append(f.Descriptors, d)
		}
		feats = append(feats, f)
	}
	feats = append(feats, formats.Features{ImageID: "blank", Label: "class0"})
	res, err := kmeans.Train(all, dim, kmeans.Options{K: 24, MaxIter: 10, Seed: 1})
	if err != nil {
		panic(err)
	}
	return feats, book{Codebook: kmeansbeam.Codebook{K: res.K, Dim: res.Dim}, Centroids: res.Centroids}
}

// book is a codebook with its words, which a kmeansbeam.Codebook names
// the files of instead of holding.
type book struct {
	kmeansbeam.Codebook
	Centroids []float32
}

// file writes b's words to a codebook file under a fresh directory, as
// the job does, and returns the codebook naming it.
func (b book) file(t *testing.T) kmeansbeam.Codebook {
	t.Helper()
	path := filepath.Join(t.TempDir(), formats.ShardName(kmeansbeam.CodebookName, 0, 1))
	content, err := fileio.WriteCentroids(context.Background(), path, b.K, b.Dim, func(add func([]float32) error) error { return add(b.Centroids) })
	if err != nil {
		t.Fatal(err)
	}
	cb := b.Codebook
	cb.Paths, cb.Content = []string{path}, content
	return cb
}

// plantedQuantizers returns two quantizers of cb's words with soft.
func plantedQuantizers(cb book, soft bow.SoftOptions) ([]*bow.Quantizer, error) {
	s, err := newSearches(cb.Centroids, cb.Dim, cb.Search())
	if err != nil {
		return nil, err
	}
	return quantizers(s, soft, 2)
}

// reference computes what BoWOfParts must output, without Beam.
func reference(t *testing.T, feats []formats.Features, cb book, opt Options) ([]formats.BoW, []formats.WordStat, int) {
	t.Helper()
	var q *bow.Quantizer
	if cb.Approx {
		f, err := nn.NewForest(cb.Centroids, cb.Dim, cb.Forest)
		if err != nil {
			t.Fatal(err)
		}
		q = bow.NewForestQuantizer(f)
	} else {
		var err error
		if q, err = bow.NewQuantizer(cb.Centroids, cb.Dim); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.SetSoft(opt.Soft); err != nil {
		t.Fatal(err)
	}
	counts := make([]sparse.Vector, len(feats))
	var df []int64
	nnz := 0
	for i, f := range feats {
		var flat []byte
		for _, d := range f.Descriptors {
			flat = append(flat, d...)
		}
		counts[i] = q.Quantize(flat)
		nnz += counts[i].Len()
		for _, w := range counts[i].Idx {
			for int(w) >= len(df) {
				df = append(df, 0)
			}
			df[w]++
		}
	}
	idf := bow.IDF(df, int64(len(feats)))
	bows := make([]formats.BoW, len(feats))
	for i, f := range feats {
		v := bow.TFIDFWith(counts[i], idf, opt.TF)
		bows[i] = formats.BoW{ImageID: f.ImageID, Label: f.Label, WordIDs: v.Idx, Weights: v.Val}
	}
	stats := make([]formats.WordStat, len(df))
	for i, c := range df {
		stats[i] = formats.WordStat{WordID: uint32(i), DF: c, IDF: idf[i]}
	}
	return bows, stats, nnz
}

// featureParts writes feats to parts features parts under a fresh
// directory, as describebeam does, with a position, scale and angle for
// every keypoint that has none (BoWOfParts writes the geometry too).
func featureParts(t *testing.T, feats []formats.Features, parts int) []formats.Part {
	t.Helper()
	dir := t.TempDir()
	byPart := make([][]formats.Features, parts)
	for _, f := range feats {
		if len(f.X) == 0 {
			for i := range f.Descriptors {
				f.X = append(f.X, float32(i%32))
				f.Y = append(f.Y, float32(i/32))
				f.Scale = append(f.Scale, 2)
				f.Angle = append(f.Angle, 0)
			}
		}
		p := formats.ShardOf(f.ImageID, parts)
		byPart[p] = append(byPart[p], f)
	}
	var out []formats.Part
	for p, rows := range byPart {
		path := fileio.Join(dir, formats.ShardName("features", p, parts))
		if err := fileio.WriteFile(context.Background(), path, rows); err != nil {
			t.Fatal(err)
		}
		out = append(out, formats.Part{Name: "features", Part: p, Parts: parts, Path: path, Rows: int64(len(rows))})
	}
	return out
}

// checkBoWs fails the test unless the bag-of-words parts under dir hold
// want, bit for bit, each image once.
func checkBoWs(t *testing.T, dir string, parts int, want []formats.BoW) {
	t.Helper()
	got := map[string]formats.BoW{}
	for p := range parts {
		rows, err := fileio.ReadFile[formats.BoW](context.Background(), fileio.Join(dir, formats.ShardName(BoWName, p, parts)))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range rows {
			if _, dup := got[b.ImageID]; dup {
				t.Fatalf("%s: image %s twice", dir, b.ImageID)
			}
			got[b.ImageID] = b
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d bags, want %d", dir, len(got), len(want))
	}
	for _, w := range want {
		g := got[w.ImageID]
		if g.Label != w.Label || !slices.Equal(g.WordIDs, w.WordIDs) || !slices.Equal(g.Weights, w.Weights) {
			t.Errorf("%s: image %s: bag\n got %+v\nwant %+v", dir, w.ImageID, g, w)
		}
	}
}

// Soft assignment on Prism must give exactly the local computation — the
// same bags and word statistics, bit for bit, from independent branches
// of the pipeline and with exact and forest codebooks — and more non-zero
// words than hard assignment; the zero Options must still be hard
// assignment.
func TestBoWOfPartsSoft(t *testing.T) {
	const parts = 3
	feats, exact := planted(rand.New(rand.NewPCG(1, 2)))
	approx := exact
	approx.Approx, approx.Forest = true, nn.ForestOptions{Trees: 4, LeafSize: 4, Checks: 8, Seed: 3}
	soft := Options{Soft: bow.SoftOptions{R: 3}}
	type branch struct {
		dir  string
		want []formats.BoW
	}
	var branches []branch

	p, s := beam.NewPipelineWithRoot()
	col := beam.CreateList(s, featureParts(t, feats, parts))
	for _, cb := range []book{exact, approx} {
		codebook := beam.Create(s, cb.file(t))
		hardBoWs, hardStats, hardNNZ := reference(t, feats, cb, Options{})
		softBoWs, softStats, softNNZ := reference(t, feats, cb, soft)
		t.Logf("approx %v: %d non-zero term frequencies hard, %d soft", cb.Approx, hardNNZ, softNNZ)
		if softNNZ <= hardNNZ {
			t.Errorf("approx %v: soft assignment has %d non-zeros, hard %d: want more", cb.Approx, softNNZ, hardNNZ)
		}
		var hardDF, softDF int64
		for i := range hardStats {
			hardDF += hardStats[i].DF
		}
		for i := range softStats {
			softDF += softStats[i].DF
		}
		if softDF != int64(softNNZ) || hardDF != int64(hardNNZ) {
			t.Errorf("approx %v: document frequencies sum to %d hard, %d soft; want each word once per image: %d, %d", cb.Approx, hardDF, softDF, hardNNZ, softNNZ)
		}

		dir := t.TempDir()
		_, _, _, stats := BoWOfParts(s, col, codebook, Options{}, dir)
		passert.EqualsList(s, stats, hardStats)
		branches = append(branches, branch{dir, hardBoWs})
		for range 2 {
			dir := t.TempDir()
			_, _, _, stats := BoWOfParts(s, col, codebook, soft, dir)
			passert.EqualsList(s, stats, softStats)
			branches = append(branches, branch{dir, softBoWs})
		}
		// R = 1 is hard assignment through the soft path.
		dir = t.TempDir()
		BoWOfParts(s, col, codebook, Options{Soft: bow.SoftOptions{R: 1}}, dir)
		branches = append(branches, branch{dir, hardBoWs})
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for _, b := range branches {
		checkBoWs(t, b.dir, parts, b.want)
	}
}

// Options.TF weights the bags on Prism as bow.TFIDFWith does locally, bit
// for bit, and the word statistics stay those of raw counts.
func TestBoWOfPartsTF(t *testing.T) {
	const parts = 2
	feats, cb := planted(rand.New(rand.NewPCG(5, 6)))
	rawBoWs, rawStats, _ := reference(t, feats, cb, Options{})
	p, s := beam.NewPipelineWithRoot()
	col, codebook := beam.CreateList(s, featureParts(t, feats, parts)), beam.Create(s, cb.file(t))
	dirs := map[bow.TF]string{}
	wants := map[bow.TF][]formats.BoW{}
	for _, tf := range []bow.TF{bow.TFSqrt, bow.TFLog} {
		opt := Options{TF: tf}
		want, _, _ := reference(t, feats, cb, opt)
		if fmt.Sprint(want) == fmt.Sprint(rawBoWs) {
			t.Fatalf("%s: the reference bags are the raw ones: the test says nothing", tf)
		}
		dirs[tf], wants[tf] = t.TempDir(), want
		_, _, _, stats := BoWOfParts(s, col, codebook, opt, dirs[tf])
		passert.EqualsList(s, stats, rawStats)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for tf, dir := range dirs {
		checkBoWs(t, dir, parts, wants[tf])
	}
}

func TestBoWOfPartsInvalidOptionsFail(t *testing.T) {
	opt := Options{Soft: bow.SoftOptions{R: -1}}
	if err := opt.Validate(); err == nil || !strings.Contains(err.Error(), "R = -1") {
		t.Fatalf("Validate() = %v, want an error about R", err)
	}
	if err := (Options{TF: "cube"}).Validate(); err == nil || !strings.Contains(err.Error(), `"cube"`) {
		t.Fatalf("Validate() of TF cube = %v, want an error about it", err)
	}
	if err := (Options{Soft: bow.SoftOptions{R: 3, Sigma: 20}, TF: bow.TFSqrt}).Validate(); err != nil {
		t.Fatalf("valid options: %v", err)
	}
	feats, cb := planted(rand.New(rand.NewPCG(3, 4)))
	p, s := beam.NewPipelineWithRoot()
	BoWOfParts(s, beam.CreateList(s, featureParts(t, feats[:2], 1)), beam.Create(s, cb.file(t)), opt, t.TempDir())
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), "R = -1") {
		t.Fatalf("pipeline error %v, want one about R", err)
	}
}
