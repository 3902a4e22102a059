package search

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
)

// A photo of a corpus image, queried, is that image's stored vector: its
// counts are weighted with the run's --tf, as the job weighted the run's,
// and a run that recorded no tf (made before the flag) weighted them raw.
func TestPhotoFollowsTheRunsTF(t *testing.T) {
	ctx := context.Background()
	// The job's features of the photo.
	photo, _, flat := describedPhoto(t)
	// 200 images over 50 words: every word in some image, so that each of
	// the photo's words has a weight.
	c := randomCorpus(200, 50, 11)
	dir := t.TempDir()
	writeRun(t, dir, c, 1, nil)
	q, err := bow.NewQuantizer(openRun(t, dir, Options{}).centroids, formats.DescriptorSize)
	if err != nil {
		t.Fatal(err)
	}
	counts := q.Quantize(flat)
	if !burst(counts) {
		t.Fatalf("the photo's counts %v repeat no word: raw and damped weights would agree", counts)
	}
	// The photo is the corpus's first image: its words replace that
	// image's in the document frequencies.
	self := c.docs[0].ImageID
	c.df = append([]int64(nil), c.df...)
	for _, w := range c.docs[0].WordIDs {
		c.df[w]--
	}
	for _, w := range counts.Idx {
		c.df[w]++
	}
	c.idf = bow.IDF(c.df, int64(len(c.docs)))
	stored := map[bow.TF]sparse.Vector{}
	for _, tf := range bow.TFs {
		stored[tf] = bow.TFIDFWith(counts, c.idf, tf)
	}
	if dot := sparse.Dot(stored[bow.TFRaw], stored[bow.TFSqrt]); dot > 0.999 {
		t.Fatalf("raw and sqrt vectors have cosine %v: the test cannot tell them apart", dot)
	}
	for _, tc := range []struct {
		name string
		cfg  map[string]string
		tf   bow.TF
	}{
		{"before --tf", nil, bow.TFRaw},
		{"raw", map[string]string{"tf": "raw"}, bow.TFRaw},
		{"sqrt", map[string]string{"tf": "sqrt"}, bow.TFSqrt},
		{"log", map[string]string{"tf": "log"}, bow.TFLog},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir, withFirst(c, stored[tc.tf]), 1, tc.cfg)
			res, err := openRun(t, dir, Options{}).SearchImage(ctx, TFIDF, photo, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 || res.Hits[0].ImageID != self || math.Abs(res.Hits[0].Score-1) > 1e-6 {
				t.Fatalf("the photo finds %v, want %s at cosine 1", res.Hits, self)
			}
		})
	}
	dir = t.TempDir()
	writeRun(t, dir, withFirst(c, stored[bow.TFRaw]), 1, map[string]string{"tf": "cube"})
	if _, err := Open(ctx, dir, Options{}); err == nil || !strings.Contains(err.Error(), `setting tf: bow: TF = "cube"`) {
		t.Fatalf("a run with tf cube opens: %v", err)
	}
}

// burst reports whether some word of v counts more than once.
func burst(v sparse.Vector) bool {
	for _, x := range v.Val {
		if x > 1 {
			return true
		}
	}
	return false
}

// withFirst returns c with its first image's bag of words v.
func withFirst(c corpus, v sparse.Vector) corpus {
	c.docs = append([]formats.BoW(nil), c.docs...)
	c.docs[0].WordIDs, c.docs[0].Weights = v.Idx, v.Val
	return c
}
