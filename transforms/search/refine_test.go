package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/spatial"
)

// sceneGeometries makes a geometry row for every image of c: one image in
// three holds a scene of 60 keypoints under a similarity of its own, and
// noise keypoints; the others noise alone. Images of 320×240.
func sceneGeometries(c corpus, seed uint64) []formats.Geometry {
	rng := rand.New(rand.NewPCG(seed, 11))
	const w, h = 320, 240
	type kp struct {
		word               uint32
		x, y, scale, angle float32
	}
	scene := make([]kp, 60)
	for i := range scene {
		scene[i] = kp{uint32(rng.IntN(c.vocab)), 40 + 240*rng.Float32(), 30 + 180*rng.Float32(), 1.5 + 6*rng.Float32(), 6.28 * rng.Float32()}
	}
	var rows []formats.Geometry
	for i, d := range c.docs {
		var feat formats.Features
		feat.Width, feat.Height = w, h
		var words []uint32
		add := func(k kp) {
			words = append(words, k.word)
			feat.X, feat.Y = append(feat.X, k.x), append(feat.Y, k.y)
			feat.Scale, feat.Angle = append(feat.Scale, k.scale), append(feat.Angle, k.angle)
		}
		if i%3 == 0 {
			s, th := 0.8+0.4*rng.Float64(), 0.4*rng.Float64()-0.2
			t := spatial.Similarity(s, th, 10*rng.Float64(), 10*rng.Float64())
			for _, k := range scene {
				if rng.IntN(4) == 0 {
					continue // occluded
				}
				x, y := t.Apply(float64(k.x), float64(k.y))
				add(kp{k.word, float32(x), float32(y), k.scale * float32(s), k.angle + float32(th)})
			}
		}
		for range 20 + rng.IntN(40) {
			add(kp{uint32(rng.IntN(c.vocab)), w * rng.Float32(), h * rng.Float32(), 1.5 + 6*rng.Float32(), 6.28 * rng.Float32()})
		}
		feat.ImageID = d.ImageID
		g, err := formats.GeometryOf(&feat, words)
		if err != nil {
			panic(err)
		}
		rows = append(rows, g)
	}
	return rows
}

// writeGeometry adds rows to the run under dir as the job's geometry
// files, in parts, and lists them in its manifest.
func writeGeometry(t *testing.T, dir string, rows []formats.Geometry, parts int) {
	t.Helper()
	for p := range parts {
		var part []formats.Geometry
		for _, r := range rows {
			if formats.ShardOf(r.ImageID, parts) == p {
				part = append(part, r)
			}
		}
		f, err := os.Create(filepath.Join(dir, formats.ShardName("geometry", p, parts)))
		if err != nil {
			t.Fatal(err)
		}
		if err := formats.EncodeOf(t.Context(), f, part); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.Name() != run.ManifestName {
			names = append(names, e.Name())
		}
	}
	writeManifest(t, dir, names)
}

// geometryRun writes a run of n images with scene geometries and opens it.
func geometryRun(t *testing.T, n int, opt Options) (corpus, []formats.Geometry, *Index) {
	t.Helper()
	c := randomCorpus(n, 30, 5)
	dir := t.TempDir()
	writeRun(t, dir, c, 3, nil)
	rows := sceneGeometries(c, 5)
	writeGeometry(t, dir, rows, 3)
	return c, rows, openRun(t, dir, opt)
}

// decoded is a geometry row as the matcher reads it, decoded by the
// formats package and put in order by spatial's Sort: the path the search
// package's own packing must agree with.
func decoded(r formats.Geometry) *spatial.Geometry {
	var k formats.Keypoints
	r.Decode(&k)
	g := &spatial.Geometry{Width: float32(r.Width), Height: float32(r.Height), Words: slices.Clone(k.Words), X: k.X, Y: k.Y, Scale: k.Scale, Angle: k.Angle}
	g.Sort()
	return g
}

// decodedAll is decoded of every row, by image id.
func decodedAll(rows []formats.Geometry) map[string]*spatial.Geometry {
	geo := make(map[string]*spatial.Geometry, len(rows))
	for _, r := range rows {
		geo[r.ImageID] = decoded(r)
	}
	return geo
}

// reference re-ranks hits (a learner's matches, best first) as Refine
// says, verifying the best depth of them against q with a fresh matcher.
func reference(t *testing.T, hits []Hit, q *spatial.Geometry, geo map[string]*spatial.Geometry, depth int) []Hit {
	t.Helper()
	m, err := spatial.NewMatcher(spatial.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(hits)
	top := out[:min(depth, len(out))]
	rank := map[string]int{}
	for i := range top {
		res := m.Verify(q, geo[top[i].ImageID])
		top[i].Inliers, top[i].Verified = res.Support, res.Verified
		rank[top[i].ImageID] = i
	}
	slices.SortFunc(top, func(a, b Hit) int {
		if a.Verified != b.Verified {
			if a.Verified {
				return -1
			}
			return 1
		}
		if a.Verified {
			if c := cmp.Or(cmp.Compare(b.Inliers, a.Inliers), cmp.Compare(b.Score, a.Score)); c != 0 {
				return c
			}
		}
		return cmp.Compare(rank[a.ImageID], rank[b.ImageID])
	})
	return out
}

// Re-ranking verifies the best Rerank hits against the query's keypoints,
// puts the verified first by inliers, then score, then rank, the others
// after in their order, and leaves the rest of the ranking alone: what a
// fresh matcher on the formats package's decoding gives, for every
// learner, several queries and k below, at and beyond Rerank.
func TestRerankIsVerification(t *testing.T) {
	c, rows, ix := geometryRun(t, 150, Options{})
	geo := decodedAll(rows)
	moved, verified := 0, 0
	for _, l := range ix.Learners() {
		for q := 0; q < len(c.docs); q += 13 {
			id := c.docs[q].ImageID
			all, err := ix.SearchID(l, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, depth := range []int{1, 10, 40} {
				want := reference(t, all.Hits, geo[id], geo, depth)
				for i := range want[:min(depth, len(want))] {
					if want[i].Verified {
						verified++
					}
					if want[i].ImageID != all.Hits[i].ImageID {
						moved++
					}
				}
				for _, k := range []int{5, depth, 60, 0} {
					got, err := ix.SearchIDRefined(l, id, k, Refine{Rerank: depth})
					if err != nil {
						t.Fatal(err)
					}
					w := want
					if k > 0 {
						w = w[:min(k, len(w))]
					}
					if got.Matched != all.Matched || !slices.Equal(got.Hits, w) {
						t.Fatalf("%s, query %s, rerank %d, k %d:\n got %v (%d matched)\nwant %v (%d)", l, id, depth, k, got.Hits, got.Matched, w, all.Matched)
					}
				}
			}
		}
	}
	// Not vacuous: scenes were found and moved up.
	if verified < 20 || moved < 20 {
		t.Fatalf("%d verified hits, %d moved: the test proves little", verified, moved)
	}
}

// Rerank 0 is the learner's ranking exactly, whatever the geometry.
func TestRerankZeroIsTheRanking(t *testing.T) {
	c, _, ix := geometryRun(t, 60, Options{})
	for _, l := range ix.Learners() {
		for _, d := range c.docs {
			for _, k := range []int{3, 0} {
				want, err := ix.SearchID(l, d.ImageID, k)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ix.SearchIDRefined(l, d.ImageID, k, Refine{})
				if err != nil {
					t.Fatal(err)
				}
				if got.Matched != want.Matched || !slices.Equal(got.Hits, want.Hits) {
					t.Fatalf("%s %s k=%d: %v, want %v", l, d.ImageID, k, got, want)
				}
			}
		}
	}
}

// Ties of inliers and score keep the order they had: an id never
// decides, even where the learner's order put a later id first.
func TestRerankTies(t *testing.T) {
	hits := []cand{
		{doc: 9, score: 0.5},                             // unverified, first
		{doc: 7, score: 0.4, inliers: 8, verified: true}, // tie with the next two
		{doc: 2, score: 0.4, inliers: 8, verified: true},
		{doc: 5, score: 0.4, inliers: 8, verified: true},
		{doc: 1, score: 0.3, inliers: 3},
		{doc: 3, score: 0.3, inliers: 12, verified: true},
		{doc: 0, score: 0.2, inliers: 8, verified: true},
	}
	rerank(hits)
	var got []int32
	for _, h := range hits {
		got = append(got, h.doc)
	}
	if want := []int32{3, 7, 2, 5, 0, 9, 1}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// Expansion searches again with the query's bag averaged with the bags of
// its verified best hits (at most Expand of them, most inliers first),
// then re-ranks that search: as computed here by hand.
func TestExpandIsTheAverageQuery(t *testing.T) {
	c, rows, ix := geometryRun(t, 150, Options{})
	geo := decodedAll(rows)
	bags := map[string]sparse.Vector{}
	for _, d := range c.docs {
		bags[d.ImageID] = sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
	}
	expanded := 0
	for _, l := range ix.Learners() {
		for q := 0; q < len(c.docs); q += 9 {
			id := c.docs[q].ImageID
			all, err := ix.SearchID(l, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []Refine{{Rerank: 30, Expand: 3}, {Rerank: 0, Expand: 50}} {
				depth := cmp.Or(r.Rerank, DefaultRerank)
				first := reference(t, all.Hits, geo[id], geo, depth)
				sum := map[uint32]float32{}
				addBag := func(v sparse.Vector) {
					for i, w := range v.Idx {
						sum[w] += v.Val[i]
					}
				}
				addBag(bags[id])
				used := 0
				for _, h := range first[:min(depth, len(first))] {
					if used < r.Expand && h.Verified {
						addBag(bags[h.ImageID])
						used++
					}
				}
				var want []Hit
				matched := all.Matched
				if used == 0 {
					want = all.Hits
					if r.Rerank > 0 {
						want = first
					}
				} else {
					expanded++
					var v sparse.Vector
					var norm float64
					for _, w := range slices.Sorted(mapsKeys(sum)) {
						v.Idx, v.Val = append(v.Idx, w), append(v.Val, sum[w])
						norm += float64(sum[w]) * float64(sum[w])
					}
					for i := range v.Val {
						v.Val[i] = float32(float64(v.Val[i]) / math.Sqrt(norm))
					}
					d, _ := slices.BinarySearch(ix.ids, id)
					hits, m := ix.bow[l].search(v, 0, d)
					matched = m
					want = named(hits[:min(len(hits), m)])
					if r.Rerank > 0 {
						want = reference(t, want, geo[id], geo, r.Rerank)
					} else {
						// Only the hits verified for the expansion say so.
						verified := map[string]Hit{}
						for _, h := range first[:min(depth, len(first))] {
							verified[h.ImageID] = h
						}
						for i := range want {
							if h, ok := verified[want[i].ImageID]; ok {
								want[i].Inliers, want[i].Verified = h.Inliers, h.Verified
							}
						}
					}
				}
				got, err := ix.SearchIDRefined(l, id, 0, r)
				if err != nil {
					t.Fatal(err)
				}
				if got.Matched != matched || !slices.Equal(got.Hits, want) {
					t.Fatalf("%s, query %s, %+v:\n got %v (%d matched)\nwant %v (%d)", l, id, r, got.Hits, got.Matched, want, matched)
				}
			}
		}
	}
	if expanded < 10 {
		t.Fatalf("%d queries expanded: the test proves little", expanded)
	}
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// A run without geometry files refuses re-ranking and expansion with
// ErrNoGeometry, and searches as before; so does one opened without its
// geometry.
func TestNoGeometry(t *testing.T) {
	c := randomCorpus(40, 20, 3)
	dir := t.TempDir()
	writeRun(t, dir, c, 2, nil)
	bare := openRun(t, dir, Options{})
	withGeo := t.TempDir()
	writeRun(t, withGeo, c, 2, nil)
	writeGeometry(t, withGeo, sceneGeometries(c, 3), 2)
	skipped := openRun(t, withGeo, Options{NoGeometry: true})
	for _, ix := range []*Index{bare, skipped} {
		id := c.docs[0].ImageID
		for _, r := range []Refine{{Rerank: 10}, {Expand: 5}} {
			if _, err := ix.SearchIDRefined("dense", id, 5, r); !errors.Is(err, ErrNoGeometry) {
				t.Errorf("%+v: error %v, want ErrNoGeometry", r, err)
			}
			if _, err := ix.SearchImageRefined(t.Context(), "dense", pngOf(t, 64, 64), 5, r); !errors.Is(err, ErrNoGeometry) {
				t.Errorf("photo, %+v: error %v, want ErrNoGeometry", r, err)
			}
		}
		if _, err := ix.SearchIDRefined("dense", id, 5, Refine{}); err != nil {
			t.Errorf("no refinement: %v", err)
		}
	}
	if full := openRun(t, withGeo, Options{}); full.MemoryBytes() <= skipped.MemoryBytes() {
		t.Errorf("geometry loaded in %d bytes, %d without", full.MemoryBytes(), skipped.MemoryBytes())
	}
}

// The packed keypoints decode to the formats package's values, in
// spatial's canonical order; MaxKeypoints keeps the largest scales.
func TestPackedGeometry(t *testing.T) {
	c := randomCorpus(30, 20, 4)
	rows := sceneGeometries(c, 4)
	var p packer
	for _, r := range rows {
		want := decoded(r)
		var got spatial.Geometry
		unpack(p.pack(&r, 0), r.Width, r.Height, &got)
		if !slices.Equal(got.Words, want.Words) || !slices.Equal(got.X, want.X) || !slices.Equal(got.Y, want.Y) ||
			!slices.Equal(got.Scale, want.Scale) || !slices.Equal(got.Angle, want.Angle) || got.Width != want.Width || got.Height != want.Height {
			t.Fatalf("image %s: unpacked %+v, want %+v", r.ImageID, got, *want)
		}
		const keep = 10
		unpack(p.pack(&r, keep), r.Width, r.Height, &got)
		scales := slices.Clone(want.Scale)
		slices.SortFunc(scales, func(a, b float32) int { return cmp.Compare(b, a) })
		kept := slices.Clone(got.Scale)
		slices.SortFunc(kept, func(a, b float32) int { return cmp.Compare(b, a) })
		if len(got.Words) != keep || !slices.Equal(kept, scales[:keep]) || !slices.IsSorted(got.Words) {
			t.Fatalf("image %s, keep %d: words %v scales %v, want the largest %v", r.ImageID, keep, got.Words, kept, scales[:keep])
		}
	}
	// Loaded with a cap, the geometry holds at most the cap an image.
	dir := t.TempDir()
	writeRun(t, dir, c, 2, nil)
	writeGeometry(t, dir, rows, 2)
	ix := openRun(t, dir, Options{MaxKeypoints: 7})
	for d := range ix.Images() {
		if n := ix.geo.n[d]; n > 7 {
			t.Fatalf("image %d: %d keypoints kept", d, n)
		}
	}
	if got := fmt.Sprint(ix.geo.keep); got != "7" {
		t.Fatalf("keep %s", got)
	}
}

// A photo is verified with its own keypoints at the hard words of the
// run's quantiser, coded as the geometry files code them: a photo of an
// indexed image finds that image's stored keypoints all where they were,
// as many inliers as the image against itself, and first.
func TestPhotoKeypoints(t *testing.T) {
	ctx := t.Context()
	photo, feat, flat := describedPhoto(t)
	c := randomCorpus(120, 50, 12)
	dir := t.TempDir()
	writeRun(t, dir, c, 1, nil)
	q, err := bow.NewQuantizer(openRun(t, dir, Options{}).centroids, formats.DescriptorSize)
	if err != nil {
		t.Fatal(err)
	}
	counts, words := q.QuantizeWords(flat, nil)
	// The photo is the corpus's first image: its words replace that
	// image's in the document frequencies.
	self := c.docs[0].ImageID
	c.df = slices.Clone(c.df)
	for _, w := range c.docs[0].WordIDs {
		c.df[w]--
	}
	for _, w := range counts.Idx {
		c.df[w]++
	}
	c.idf = bow.IDF(c.df, int64(len(c.docs)))
	c = withFirst(c, bow.TFIDF(counts, c.idf))
	rows := sceneGeometries(c, 12)
	feat.ImageID = self
	if rows[0], err = formats.GeometryOf(&feat, words); err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	writeRun(t, dir, c, 1, nil)
	writeGeometry(t, dir, rows, 1)
	ix := openRun(t, dir, Options{})
	m, err := spatial.NewMatcher(spatial.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	g := decoded(rows[0])
	self1 := m.Verify(g, g)
	want := self1.Support
	if self1.Inliers < 10 || !self1.Verified {
		t.Fatalf("the photo against itself: %+v", self1)
	}
	res, err := ix.SearchImageRefined(ctx, TFIDF, photo, 5, Refine{Rerank: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 || res.Hits[0].ImageID != self || res.Hits[0].Inliers != want || !res.Hits[0].Verified {
		t.Fatalf("the photo finds %v, want %s first with %d inliers", res.Hits, self, want)
	}
	plain, err := ix.SearchImage(ctx, TFIDF, photo, 5)
	if err != nil {
		t.Fatal(err)
	}
	// The bag of words is the plain search's: every image scores the same.
	all, err := ix.SearchImage(ctx, TFIDF, photo, 0)
	if err != nil {
		t.Fatal(err)
	}
	refined, err := ix.SearchImageRefined(ctx, TFIDF, photo, 0, Refine{Rerank: 20})
	if err != nil {
		t.Fatal(err)
	}
	score := map[string]float64{}
	for _, h := range all.Hits {
		score[h.ImageID] = h.Score
	}
	for _, h := range refined.Hits {
		if s, ok := score[h.ImageID]; !ok || s != h.Score || refined.Matched != all.Matched {
			t.Fatalf("re-ranked, %s scores %v, plainly %v (%v)", h.ImageID, h.Score, s, ok)
		}
	}
	if zero, err := ix.SearchImageRefined(ctx, TFIDF, photo, 5, Refine{}); err != nil || !slices.Equal(zero.Hits, plain.Hits) {
		t.Fatalf("no refinement: %v (%v), want %v", zero.Hits, err, plain.Hits)
	}
}

// The arena holds every image's keypoints across its blocks, each new
// block as large as those before, and once trimmed little more than the
// keypoints themselves: a small run does not pay for a large block.
func TestGeometryArena(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{3, 40, 3000} {
		g := &geometries{at: make([]uint64, n), n: make([]uint32, n), size: make([]int32, 2*n)}
		want := make([][]byte, n)
		var kps int64
		for d := range n {
			k := rng.IntN(400)
			if d == n/2 {
				k = 0 // an image without keypoints
			}
			rec := make([]byte, k*keypointBytes)
			for i := range rec {
				rec[i] = byte(rng.IntN(256))
			}
			want[d] = rec
			kps += int64(k)
			g.add(d, rec, int32(100+d), 50)
		}
		g.trim()
		for d := range n {
			var got, exp spatial.Geometry
			g.decode(d, &got)
			unpack(want[d], int32(100+d), 50, &exp)
			if !slices.Equal(got.Words, exp.Words) || !slices.Equal(got.X, exp.X) || got.Width != exp.Width {
				t.Fatalf("%d images: image %d decodes to other keypoints", n, d)
			}
		}
		exact := kps*keypointBytes + 20*int64(n)
		if got := g.bytes(); got > exact+exact/8 {
			t.Errorf("%d images, %d keypoints: %d bytes held, %d needed", n, kps, got, exact)
		}
	}
}

// TestRefineValidate: a negative count is refused as the setting it is,
// near copies without re-ranking as such, and the zero Refine and a
// usual one pass.
func TestRefineValidate(t *testing.T) {
	for _, r := range []Refine{{}, {Rerank: 100, Expand: DefaultExpand, NearCopies: DefaultNearCopies}} {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	for name, r := range map[string]Refine{"search.Refine.Rerank": {Rerank: -1}, "search.Refine.Expand": {Expand: -1}, "search.Refine.NearCopies": {Rerank: 1, NearCopies: -1}} {
		var e *setting.Error
		if err := r.Validate(); !errors.As(err, &e) || e.Name() != name {
			t.Errorf("%+v: %v, want a setting error of %s", r, err, name)
		}
	}
	if err := (Refine{NearCopies: 3}).Validate(); err == nil || !strings.Contains(err.Error(), "need rerank") {
		t.Errorf("near copies without rerank: %v", err)
	}
}
