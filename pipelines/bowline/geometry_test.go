package bowline

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/bow"
)

// geometryByID returns the rows of the geometry files of the run under
// dir, by image id, checking that its manifest lists one geometry file
// for each counts file, of the same part, holding the same images.
func geometryByID(t *testing.T, dir string) map[string]formats.Geometry {
	t.Helper()
	ctx := context.Background()
	m, err := fileio.RunDir(dir).Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	part := regexp.MustCompile(`^(counts|geometry)-([0-9]+-of-[0-9]+)\.parquet$`)
	files := map[string][]string{}
	for _, f := range m.Files {
		if s := part.FindStringSubmatch(f.Name); s != nil {
			files[s[1]] = append(files[s[1]], s[2])
		}
	}
	if len(files["geometry"]) == 0 || !slices.Equal(files["geometry"], files["counts"]) {
		t.Fatalf("the manifest lists geometry parts %v and counts parts %v, want the same", files["geometry"], files["counts"])
	}
	out := map[string]formats.Geometry{}
	for _, p := range files["geometry"] {
		counts, err := fileio.ReadFile[formats.BoW](ctx, fileio.Join(dir, "counts-"+p+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		geometry, err := fileio.ReadFile[formats.Geometry](ctx, fileio.Join(dir, "geometry-"+p+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		var ci, gi []string
		for _, c := range counts {
			ci = append(ci, c.ImageID)
		}
		for _, g := range geometry {
			gi = append(gi, g.ImageID)
			out[g.ImageID] = g
		}
		if !slices.Equal(ci, gi) || !slices.IsSorted(gi) {
			t.Errorf("part %s: counts of %q, geometry of %q; want the same images, sorted", p, ci, gi)
		}
	}
	return out
}

// checkGeometry checks the geometry files of the finished run under dir,
// made by hard assignment against an exact vocabulary: each image has a
// row whose words are those its descriptors alone get from the run's
// codebook, keypoint by keypoint, their repetitions its counts, and
// whose positions, scales and angles decode to within the stated error
// of its features; ReadGeometry finds a few images in their part.
func checkGeometry(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	geometry := geometryByID(t, dir)
	feats := featuresByID(t, dir)
	words, err := fileio.ReadAll[formats.Word](ctx, fileio.Join(dir, "codebook-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(words, func(i, j int) bool { return words[i].WordID < words[j].WordID })
	var centroids []float32
	for _, w := range words {
		centroids = append(centroids, w.Centroid...)
	}
	q, err := bow.NewQuantizer(centroids, formats.DescriptorSize)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := fileio.ReadAll[formats.BoW](ctx, fileio.Join(dir, "counts-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(geometry) != len(feats) || len(counts) != len(feats) {
		t.Errorf("%d geometry rows, %d counts rows, want one per image described: %d", len(geometry), len(counts), len(feats))
	}
	var dst formats.Keypoints
	for _, c := range counts {
		f, g := feats[c.ImageID], geometry[c.ImageID]
		kw := make([]uint32, len(f.Descriptors))
		for i, d := range f.Descriptors {
			kw[i] = q.Quantize(d).Idx[0]
		}
		// Words: keypoint by keypoint, sorted, and their repetitions the
		// counts.
		var wantWords []uint32
		for k, w := range c.WordIDs {
			for range int(c.Weights[k]) {
				wantWords = append(wantWords, w)
			}
		}
		if !slices.Equal(g.WordIDs, wantWords) || !slices.Equal(g.WordIDs, slices.Sorted(slices.Values(kw))) {
			t.Errorf("image %s: geometry words %v, counts give %v, its descriptors %v", c.ImageID, g.WordIDs, wantWords, kw)
			continue
		}
		if g.Width != f.Width || g.Height != f.Height {
			t.Errorf("image %s: geometry of %d×%d, features of %d×%d", c.ImageID, g.Width, g.Height, f.Width, f.Height)
		}
		// Keypoint j of the row is the next keypoint of its word in the
		// features.
		g.Decode(&dst)
		next := map[uint32]int{}
		for j, w := range dst.Words {
			i := next[w]
			for kw[i] != w {
				i++
			}
			next[w] = i + 1
			dx, dy := math.Abs(float64(dst.X[j]-f.X[i])), math.Abs(float64(dst.Y[j]-f.Y[i]))
			ds := math.Abs(math.Log2(float64(dst.Scale[j]) / float64(f.Scale[i])))
			da := math.Mod(math.Abs(float64(dst.Angle[j]-f.Angle[i])), 2*math.Pi)
			da = min(da, 2*math.Pi-da)
			if dx > float64(g.Width)/(2*formats.GeometryCoordSteps)+1e-3 || dy > float64(g.Height)/(2*formats.GeometryCoordSteps)+1e-3 ||
				ds > 0.5/formats.GeometryScaleStepsPerOctave+1e-6 || da > math.Pi/formats.GeometryAngleSteps+1e-6 {
				t.Errorf("image %s: keypoint %d decodes to (%v, %v, σ %v, θ %v), features say (%v, %v, σ %v, θ %v)", c.ImageID, i,
					dst.X[j], dst.Y[j], dst.Scale[j], dst.Angle[j], f.X[i], f.Y[i], f.Scale[i], f.Angle[i])
				break
			}
		}
	}
	// A few images of part 0, read as a service would.
	m, err := fileio.RunDir(dir).Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	parts := 0
	for _, f := range m.Files {
		if _, err := fmt.Sscanf(f.Name, "geometry-00000-of-%d.parquet", &parts); err == nil {
			break
		}
	}
	if parts < 1 {
		t.Fatal("the manifest lists no geometry part 0")
	}
	var part []string
	for id := range geometry {
		if formats.ShardOf(id, parts) == 0 && len(part) < 3 {
			part = append(part, id)
		}
	}
	path := fileio.Join(dir, formats.ShardName("geometry", 0, parts))
	sort.Strings(part)
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var got []formats.Geometry
	if err := formats.ReadGeometry(ctx, file, st.Size(), append(part, "no-such-image"), func(g *formats.Geometry) error { got = append(got, *g); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(part) || len(part) == 0 {
		t.Fatalf("ReadGeometry of %q in %s: %d rows", part, path, len(got))
	}
	for i, g := range got {
		if g.ImageID != part[i] || !reflect.DeepEqual(g, geometry[part[i]]) {
			t.Errorf("ReadGeometry gave %s's row as %+v, want %+v", part[i], g, geometry[part[i]])
		}
	}
}
