package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bowline/bowline/cmd/internal/cmdtest"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/transforms/search"
)

// shapesRoot runs the job on the project's shapes (by cmd/bowline, so that
// this test binary stays free of Beam) into <root>/runs/night-1 and
// publishes it, once for the package's tests; it returns the root.
var shapesRoot = sync.OnceValues(func() (string, error) {
	root, err := os.MkdirTemp("", "serve-e2e-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(root, published.RunsDir, "night-1")
	if err := cmdtest.ShapesJob(shapesCSV, out); err != nil {
		return "", err
	}
	r := published.Run{Run: published.RunsDir + "/night-1", PublishedAt: time.Now(), ServingLearner: "solis-ada"}
	return root, published.Publish(context.Background(), root, r, 0)
})

// noiseJPEG returns a side×side JPEG of random grey 4×4 blocks: SIFT finds
// keypoints everywhere, for seconds.
func noiseJPEG(t testing.TB, side int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	img := image.NewGray(image.Rect(0, 0, side, side))
	for y := 0; y < side; y += 4 {
		for x := 0; x < side; x += 4 {
			v := uint8(rng.IntN(256))
			for dy := y; dy < min(y+4, side); dy++ {
				for dx := x; dx < min(x+4, side); dx++ {
					img.Pix[dy*side+dx] = v
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// shapesCSV is the project's own labelled test set.
var shapesCSV, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "shapes", "labels.csv"))

// TestServeRealRun serves a real run through a published root: searches by
// id agree with the search package, a corpus image POSTed finds itself
// first, thumbnails come from the corpus, and the search package's errors
// get the API's statuses.
func TestServeRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the job")
	}
	root, err := shapesRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ctx := context.Background()
	rl := NewReloader(root, openSearch(search.Options{}), quietLog(t))
	ix, err := rl.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(ix.Run(), filepath.Join("runs", "night-1")) || ix.Images() != 96 || ix.ServingLearner() != "solis-ada" {
		t.Fatalf("loaded %s: %d images, serving %s", ix.Run(), ix.Images(), ix.ServingLearner())
	}
	cfg := testConfig()
	cfg.MaxBody = 10 << 20
	s := NewServer(ix, cfg, quietLog(t))
	rl.Srv = s

	// The corpus: id, path, label.
	f, err := os.Open(shapesCSV)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	col := func(name string) int { return slices.Index(head, name) }
	idCol, pathCol, labelCol := col("image_id"), col("path"), col("label")
	if idCol < 0 || pathCol < 0 || labelCol < 0 {
		t.Fatalf("labels.csv columns %v", head)
	}
	for _, row := range rows[1:6] {
		id := row[idCol]
		r := results(t, do(s, "GET", "/v1/search?k=5&image_id="+id, nil))
		want, err := ix.SearchID("solis-ada", id, 5, Refine{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Learner != "solis-ada" || r.Run != ix.Run() || !slices.Equal(r.Results, want.Hits) || r.Matched != want.Matched || r.Matched < len(r.Results) {
			t.Fatalf("GET %s: %+v, want %+v", id, r, want)
		}
		label := map[string]string{}
		for _, row := range rows[1:] {
			label[row[idCol]] = row[labelCol]
		}
		for _, h := range r.Results {
			if h.Score <= 0 || h.Label != label[h.ImageID] {
				t.Fatalf("GET %s: hit %+v, labelled %q in labels.csv", id, h, label[h.ImageID])
			}
		}
		if slices.ContainsFunc(r.Results, func(h Hit) bool { return h.ImageID == id }) {
			t.Fatalf("GET %s: the query is among its results", id)
		}

		// Re-ranked and expanded through the run's geometry files: the
		// search package's answer, inliers and all.
		r = results(t, do(s, "GET", "/v1/search?k=5&rerank=30&expand=true&image_id="+id, nil))
		if want, err = ix.SearchID("solis-ada", id, 5, Refine{Rerank: 30, Expand: search.DefaultExpand}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Results, want.Hits) || r.Matched != want.Matched {
			t.Fatalf("GET %s re-ranked and expanded: %+v, want %+v", id, r, want)
		}
		// With near-copy candidates verified too.
		r = results(t, do(s, "GET", "/v1/search?k=5&rerank=3&near=true&image_id="+id, nil))
		if want, err = ix.SearchID("solis-ada", id, 5, Refine{Rerank: 3, NearCopies: search.DefaultNearCopies}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Results, want.Hits) || r.Matched != want.Matched {
			t.Fatalf("GET %s re-ranked with near copies: %+v, want %+v", id, r, want)
		}

		data, err := os.ReadFile(filepath.Join(filepath.Dir(shapesCSV), row[pathCol]))
		if err != nil {
			t.Fatal(err)
		}
		r = results(t, do(s, "POST", "/v1/search?k=3&learner=tfidf", bytes.NewReader(data)))
		if len(r.Results) != 3 || r.Results[0].ImageID != id || r.Learner != "tfidf" {
			t.Fatalf("POST the image of %s: %+v", id, r.Results)
		}
		// Its own photo, re-ranked, is verified with every keypoint.
		r = results(t, do(s, "POST", "/v1/search?k=3&learner=tfidf&rerank=10", bytes.NewReader(data)))
		if len(r.Results) != 3 || r.Results[0].ImageID != id || r.Results[0].Inliers < 5 {
			t.Fatalf("POST the image of %s re-ranked: %+v", id, r.Results)
		}

		w := do(s, "GET", "/v1/image?size=64&image_id="+id, nil)
		th, _, err := image.Decode(bytes.NewReader(w.Body.Bytes()))
		if w.Code != 200 || err != nil || max(th.Bounds().Dx(), th.Bounds().Dy()) != 64 {
			t.Fatalf("thumbnail of %s: %d %v", id, w.Code, err)
		}
	}

	id := rows[1][idCol]
	for target, want := range map[string]int{
		"/v1/search?image_id=" + id + "&learner=oasis-diag": 400, // not trained in this run
		"/v1/search?image_id=nope.png":                      404,
	} {
		if w := do(s, "GET", target, nil); w.Code != want {
			t.Errorf("%s: %d %s, want %d", target, w.Code, w.Body.String(), want)
		}
	}
	if w := do(s, "POST", "/v1/search", strings.NewReader("%PDF-1.4 not a photo")); w.Code != 415 {
		t.Errorf("POST a PDF: %d %s, want 415", w.Code, w.Body.String())
	}
	// A pixel limit below the shapes' size: 422.
	small, err := openSearch(search.Options{MaxPixels: 100})(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(filepath.Dir(shapesCSV), rows[1][pathCol]))
	if w := do(NewServer(small, cfg, quietLog(t)), "POST", "/v1/search", bytes.NewReader(data)); w.Code != 422 {
		t.Errorf("POST over the pixel limit: %d %s, want 422", w.Code, w.Body.String())
	}

	// A photo without features: 422, not k zero scores.
	if w := do(s, "POST", "/v1/search", bytes.NewReader(pngBytes(t, 1, 1))); w.Code != 422 || !strings.Contains(w.Body.String(), "no features found") {
		t.Errorf("POST a 1x1 photo: %d %s, want 422", w.Code, w.Body.String())
	}
	// A photo whose description outlasts --timeout: 504, with the
	// description stopped (issue 21: a 1 s timeout ran 50 s).
	short := cfg
	short.Timeout = 100 * time.Millisecond
	if w := do(NewServer(ix, short, quietLog(t)), "POST", "/v1/search", bytes.NewReader(noiseJPEG(t, 1000))); w.Code != 504 {
		t.Errorf("POST a noise photo past the timeout: %d %s, want 504", w.Code, w.Body.String())
	}

	// The page, as a person would reach it.
	w := do(s, "GET", "/?image_id="+id, nil)
	if w.Code != 200 || strings.Count(w.Body.String(), `size=160"`) != DefaultK {
		t.Fatalf("page: %d\n%s", w.Code, w.Body.String())
	}
	var h map[string]any
	json.Unmarshal(do(s, "GET", "/healthz", nil).Body.Bytes(), &h)
	if h["images"] != float64(96) {
		t.Errorf("healthz: %v", h)
	}
}
