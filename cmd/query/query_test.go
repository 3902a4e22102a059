package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/search"
	"github.com/bowline/bowline/transforms/split"
)

var job struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := ptest.MainRetWithDefault(m, prismretry.Runner)
	if job.dir != "" {
		os.RemoveAll(job.dir)
	}
	os.Exit(code)
}

// shapes is the project's own labelled test set.
var shapes = filepath.Join("..", "..", "testdata", "shapes", "labels.csv")

// jobArgs are the job's flags of the test run: settings away from the
// defaults — images downscaled, approximate k-means with few checks, soft
// assignment — so that a query that ignored any of them would not get the
// job's vectors.
var jobArgs = []string{"--input", shapes, "--vocab", "200", "--learners", "solis-ada,oasis-diag,itq,lsh,cca-itq",
	"--max_side", "128", "--akm", "--akm_checks", "16", "--soft_words", "2", "--seed", "3", "--global"}

// shapesRun runs the job on the shapes with jobArgs, once for all tests,
// and returns its output directory.
func shapesRun(t *testing.T) string {
	t.Helper()
	job.once.Do(func() {
		job.dir, job.err = os.MkdirTemp("", "query-test-")
		if job.err != nil {
			return
		}
		c := bowline.DefaultConfig()
		fs := flag.NewFlagSet("bowline", flag.ContinueOnError)
		j := cli.AddJobFlags(fs, &c)
		if job.err = fs.Parse(jobArgs); job.err != nil {
			return
		}
		if job.err = j.Apply(); job.err != nil {
			return
		}
		c.Output = job.dir
		c.Flags = cli.Settings(fs, cli.JobGroups())
		p, s := beam.NewPipelineWithRoot()
		if job.err = bowline.Build(s, c); job.err != nil {
			return
		}
		job.err = ptest.Run(p)
	})
	if job.err != nil {
		t.Fatalf("the job: %v", job.err)
	}
	return job.dir
}

// bows reads the run's bags of words, sorted by id.
func bows(t *testing.T, dir string) []formats.BoW {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "bow-*.parquet"))
	var out []formats.BoW
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := formats.Decode(context.Background(), bytes.NewReader(data), int64(len(data)), func(r *formats.BoW) error {
			out = append(out, *r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ImageID < out[j].ImageID })
	return out
}

// weightsOf reads a learner's weights from its model file.
func weightsOf(t *testing.T, dir, learner string, vocab int) []float32 {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "model-"+learner+"-*.parquet"))
	w := make([]float32, vocab)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := formats.Decode(context.Background(), bytes.NewReader(data), int64(len(data)), func(r *formats.ModelWeight) error {
			w[r.WordID] = r.Weight
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// The loaded index is the job's: every image's id query ranks the whole
// collection exactly as transforms/index does over the run's bags of words
// and model weights (the evaluation's index), and the held-out queries'
// average precisions over those rankings give the mAP report.json reports
// for every method of bags of words — and for the learners of binary codes,
// whose codes are computed at load from the features and the models.
func TestIDQueriesAreTheEvaluation(t *testing.T) {
	dir := shapesRun(t)
	ctx := context.Background()
	ix, err := search.Open(ctx, dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	docs := bows(t, dir)
	if ix.Images() != len(docs) {
		t.Fatalf("%d images, the run has %d bags of words", ix.Images(), len(docs))
	}
	ids := make([]string, len(docs))
	labels := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	count := map[string]int{}
	label := map[string]string{}
	for i, d := range docs {
		ids[i], labels[i], vecs[i] = d.ImageID, d.Label, sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
		count[d.Label]++
		label[d.ImageID] = d.Label
	}
	// The run's split: --seed 3, the default --query_fraction.
	sel, err := split.NewSelector(3, 0.2, count)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if err := sel.Offer(id, labels[i]); err != nil {
			t.Fatal(err)
		}
	}
	cut, err := sel.Cut()
	if err != nil {
		t.Fatal(err)
	}
	methods := 0
	for _, row := range rep.Methods {
		if row.Split != evaluate.HeldOut || (row.Input != "bow" && !slices.Contains(ix.Learners(), row.Method)) {
			continue
		}
		methods++
		if row.Input != "bow" {
			// Binary codes: the report's mAP from the library's rankings.
			var sum float64
			var queries int
			for q, id := range ids {
				if ok, isHeld := evaluate.Classify(id, labels[q], count, cut); !ok || !isHeld {
					continue
				}
				got, err := ix.RankID(row.Method, id)
				if err != nil {
					t.Fatal(err)
				}
				// The report's AP is tie-aware (Hamming distances tie
				// often): the ranking's runs of equal scores are its
				// tie groups.
				var r evaluate.TiedRanking
				for i, h := range got {
					if i == 0 || h.Score != got[i-1].Score {
						r.Groups = append(r.Groups, evaluate.TieGroup{Score: h.Score})
					}
					g := &r.Groups[len(r.Groups)-1]
					g.N++
					if label[h.ImageID] == labels[q] {
						g.Rel++
					}
				}
				sum += r.AveragePrecision(count[labels[q]] - 1)
				queries++
			}
			if got := sum / float64(queries); int64(queries) != row.Queries || math.Abs(got-row.MAP) > 1e-12 {
				t.Errorf("%s: held-out mAP %.15f over %d queries, the report says %.15f over %d", row.Method, got, queries, row.MAP, row.Queries)
			}
			continue
		}
		var w []float32
		if row.Method != search.TFIDF {
			w = weightsOf(t, dir, row.Method, 200)
		}
		ref, err := index.Build(ids, indexed(vecs, w), w, 200)
		if err != nil {
			t.Fatal(err)
		}
		srch := ref.NewSearcher()
		var sum float64
		var queries int
		for q, id := range ids {
			got, err := ix.RankID(row.Method, id)
			if err != nil {
				t.Fatal(err)
			}
			want := srch.Search(vecs[q], 0, q)
			if len(got) != len(want) {
				t.Fatalf("%s, query %s: %d hits, want %d", row.Method, id, len(got), len(want))
			}
			rel := make([]bool, len(got))
			for i := range got {
				if got[i].ImageID != want[i].ID || got[i].Score != want[i].Score {
					t.Fatalf("%s, query %s, rank %d: %v, the evaluation's index ranks %s %v", row.Method, id, i, got[i], want[i].ID, want[i].Score)
				}
				rel[i] = label[got[i].ImageID] == labels[q]
			}
			// Queries in id order, as evaluate.Rows sums them.
			if ok, isHeld := evaluate.Classify(id, labels[q], count, cut); ok && isHeld {
				sum += evaluate.AveragePrecision(rel, count[labels[q]]-1)
				queries++
			}
		}
		if int64(queries) != row.Queries {
			t.Fatalf("%s: %d held-out queries, the report has %d", row.Method, queries, row.Queries)
		}
		if got := sum / float64(queries); math.Abs(got-row.MAP) > 1e-12 {
			t.Errorf("%s: held-out mAP %.15f over the library's rankings, the report says %.15f", row.Method, got, row.MAP)
		}
	}
	if methods != 6 {
		t.Errorf("%d methods served in the report, want tfidf, solis-ada, oasis-diag, itq, lsh and cca-itq", methods)
	}
}

// A photo that is a corpus image's own file gets the run's own bag of words
// (the run's SIFT settings, vocabulary forest and soft assignment
// followed): it scores its self-similarity (first for TF-IDF), and the
// rest of its ranking is the id query's. So with ITQ's binary codes of the
// global features. A rotated and cropped copy, made
// here, finds its source in the top 3 with TF-IDF, which ranks near
// duplicates first (the learners favour the words a label shares).
func TestImageQueries(t *testing.T) {
	dir := shapesRun(t)
	ctx := context.Background()
	ix, err := search.Open(ctx, dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs := bows(t, dir)
	for _, learner := range []string{search.TFIDF, "solis-ada", "itq"} {
		var w []float32
		if learner == "solis-ada" {
			w = weightsOf(t, dir, learner, 200)
		}
		found := 0
		for i, d := range docs {
			if learner == "itq" && i%8 != 0 {
				continue // the global features take a while: a sample
			}
			uri, ok := ix.URI(d.ImageID)
			if !ok {
				t.Fatalf("no location of %s", d.ImageID)
			}
			data, err := os.ReadFile(uri)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ix.SearchImage(ctx, learner, data, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Hits
			// The query is the photo's bag; the indexed image is the bag as
			// the job indexes it (scaled, at the default --cosine).
			var self float64
			indexedBag := indexed([]sparse.Vector{{Idx: d.WordIDs, Val: d.Weights}}, w)[0]
			for k, word := range d.WordIDs {
				x, y := float64(d.Weights[k]), float64(indexedBag.Val[k])
				if w == nil {
					self += x * y
				} else {
					self += float64(w[word]) * x * y
				}
			}
			// Learned weights of either sign make no cosine of the image
			// with itself its best score: it is looked for at its place.
			at := slices.IndexFunc(got, func(h search.Hit) bool { return h.ImageID == d.ImageID })
			if learner == "itq" {
				self = got[at].Score // minus the distance of its query code from its item code
			}
			if at < 0 || math.Abs(got[at].Score-self) > 1e-12 || (learner == search.TFIDF && at != 0) {
				t.Fatalf("%s, %s: its own file ranks it at %d of %v, want score %v (first for TF-IDF)", learner, d.ImageID, at, got[:3], self)
			}
			byID, err := ix.SearchID(learner, d.ImageID, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(slices.Delete(got, at, at+1), byID.Hits) || res.Matched != byID.Matched+1 {
				t.Fatalf("%s, %s: the photo's ranking without itself differs from the id query's", learner, d.ImageID)
			}
			if learner != search.TFIDF || i%8 != 0 {
				continue
			}
			// Every 8th image, rotated a quarter turn and cropped.
			copied := rotatedCrop(t, data)
			copyRes, err := ix.SearchImage(ctx, learner, copied, 3)
			if err != nil {
				t.Fatal(err)
			}
			hits := copyRes.Hits
			if slices.ContainsFunc(hits, func(h search.Hit) bool { return h.ImageID == d.ImageID }) {
				found++
			} else {
				t.Logf("%s: rotated and cropped, %s finds %v", learner, d.ImageID, hits)
			}
		}
		// With the run's 200 words trained through an IVF, one of the 12
		// (class2-08) finds only images of another label first: allow it,
		// and no more.
		if tried := (len(docs) + 7) / 8; learner == search.TFIDF && found < tried-1 {
			t.Errorf("%s: %d of %d rotated and cropped copies find their source in the top 3", learner, found, tried)
		}
	}
}

// rotatedCrop returns a JPEG of the image data turned a quarter turn
// clockwise with a tenth of each side cut off.
func rotatedCrop(t *testing.T, data []byte) []byte {
	t.Helper()
	img, _, err := ingest.Decode(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	src := image.NewRGBA(b)
	draw.Draw(src, b, img, b.Min, draw.Src)
	w, h := b.Dx(), b.Dy()
	rot := image.NewRGBA(image.Rect(0, 0, h, w))
	for y := range h {
		for x := range w {
			rot.Set(h-1-y, x, src.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	cut := image.Rect(h/10, w/10, h-h/10, w-w/10)
	crop := image.NewRGBA(image.Rect(0, 0, cut.Dx(), cut.Dy()))
	draw.Draw(crop, crop.Bounds(), rot, cut.Min, draw.Src)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, crop, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The command prints the ranking, and every error as one line.
func TestCommand(t *testing.T) {
	dir := shapesRun(t)
	ctx := context.Background()
	docs := bows(t, dir)
	photo := filepath.Join(t.TempDir(), "photo.jpg")
	data, err := os.ReadFile(mustURI(t, dir, docs[3].ImageID))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(photo, rotatedCrop(t, data), 0o644); err != nil {
		t.Fatal(err)
	}
	// A uniform photo has no keypoint: an error, not k zero scores.
	featureless := filepath.Join(t.TempDir(), "grey.png")
	grey := image.NewGray(image.Rect(0, 0, 300, 200))
	for i := range grey.Pix {
		grey.Pix[i] = 128
	}
	var greyPNG bytes.Buffer
	if err := png.Encode(&greyPNG, grey); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(featureless, greyPNG.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		out  []string // lines of stdout that must appear
		err  string   // the one line of stderr
	}{
		{args: []string{"--run", dir, "--image_id", docs[0].ImageID, "--k", "3"}, out: []string{"learner solis-ada; ", " matched, top 3 for " + docs[0].ImageID, "   3  "}},
		{args: []string{"--run", dir, "--image", photo, "--learner", "tfidf", "--k", "2"}, out: []string{"learner tfidf; ", " matched, top 2 for " + photo}},
		{args: []string{"--run", dir, "--image", featureless}, code: 1, err: "query: no features found"},
		{args: []string{"--run", dir, "--image_id", "nope"}, code: 1, err: `query: image "nope": unknown image`},
		{args: []string{"--run", dir, "--image_id", docs[0].ImageID, "--learner", "lsh-ish"}, code: 1, err: "unknown learner"},
		{args: []string{"--run", dir, "--image", shapes}, code: 1, err: "query: not a decodable image"},
		{args: []string{"--run", dir, "--image", photo, "--max_pixels", "100"}, code: 1, err: "query: image too large"},
		{args: []string{"--run", t.TempDir(), "--image_id", "x"}, code: 1, err: "neither a finished run"},
		{args: []string{"--image_id", "x"}, code: 2, err: "query: --run is required"},
		{args: []string{"--run", dir}, code: 2, err: "query: give one of --image and --image_id"},
		{args: []string{"--run", dir, "--image_id", "x", "--k", "0"}, code: 2, err: "query: --k 0: must be 1 or more"},
		{args: []string{"--run", dir, "--image_id", "x", "--rerank", "-1"}, code: 2, err: "query: --rerank -1: must be 0 or more"},
		{args: []string{"--run", dir, "--image_id", "x", "--expand=-2"}, code: 2, err: `query: --expand "-2": want true, false or a whole number, 0 or more`},
		{args: []string{"--run", dir, "--image_id", "x", "--expand=t"}, code: 2, err: `query: --expand "t": want true, false or a whole number, 0 or more`},
		{args: []string{"--run", dir, "--image_id", docs[0].ImageID, "--learner", "itq", "--expand"}, code: 1, err: "query: learner itq ranks binary codes: query expansion and near-copy candidates need a learner of bags of words"},
		{args: []string{"--run", dir, "--image_id", "x", "--near", "10"}, code: 2, err: "query: --near 10: needs --rerank"},
		{args: []string{"--run", dir, "--image_id", "x", "--rerank", "5", "--near", "-1"}, code: 2, err: "query: --near -1: must be 0 or more"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d; stderr %q", tc.args, code, tc.code, stderr.String())
			continue
		}
		for _, o := range tc.out {
			if !strings.Contains(stdout.String(), o) {
				t.Errorf("%q: stdout lacks %q:\n%s", tc.args, o, stdout.String())
			}
		}
		if tc.code == 0 {
			if want := fmt.Sprintf("%d images", len(docs)); !strings.Contains(stdout.String(), want) {
				t.Errorf("%q: stdout lacks %q", tc.args, want)
			}
			continue
		}
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if stdout.Len() != 0 || len(lines) != 1 || !strings.Contains(lines[0], tc.err) || !strings.HasPrefix(lines[0], "query: ") {
			t.Errorf("%q: stderr %q, stdout %q; want one line with %q", tc.args, stderr.String(), stdout.String(), tc.err)
		}
	}
}

func mustURI(t *testing.T, dir, id string) string {
	t.Helper()
	ix, err := search.Open(context.Background(), dir, search.Options{Learners: []string{search.TFIDF}})
	if err != nil {
		t.Fatal(err)
	}
	uri, ok := ix.URI(id)
	if !ok {
		t.Fatalf("no location of %s", id)
	}
	return uri
}

// Re-ranking through the job's geometry files: a photo of an indexed
// image is verified with its own keypoints at the job's hard words (the
// run quantises through the forest, softly), so it finds its image first
// with every inlier, and then exactly the id query's re-ranking; a
// rotated crop finds its source verified. The command prints what the
// library returns, inliers and all.
func TestRefinedQueries(t *testing.T) {
	dir := shapesRun(t)
	ctx := context.Background()
	ix, err := search.Open(ctx, dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs := bows(t, dir)
	verified, found, tried := 0, 0, 0
	for i, d := range docs {
		if i%8 != 0 {
			continue
		}
		data, err := os.ReadFile(mustURI(t, dir, d.ImageID))
		if err != nil {
			t.Fatal(err)
		}
		photo, err := ix.SearchImageRefined(ctx, search.TFIDF, data, 0, search.Refine{Rerank: 21})
		if err != nil {
			t.Fatal(err)
		}
		byID, err := ix.SearchIDRefined(search.TFIDF, d.ImageID, 0, search.Refine{Rerank: 20})
		if err != nil {
			t.Fatal(err)
		}
		if len(photo.Hits) == 0 || photo.Hits[0].ImageID != d.ImageID || !photo.Hits[0].Verified ||
			!slices.Equal(photo.Hits[1:], byID.Hits) {
			t.Fatalf("%s: its own file finds %v, then not the id query's %v", d.ImageID, photo.Hits[:min(4, len(photo.Hits))], byID.Hits[:min(3, len(byID.Hits))])
		}
		for _, h := range byID.Hits {
			if h.Verified {
				verified++
			}
		}
		tried++
		crop, err := ix.SearchImageRefined(ctx, search.TFIDF, rotatedCrop(t, data), 3, search.Refine{Rerank: 50})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(crop.Hits, func(h search.Hit) bool { return h.ImageID == d.ImageID && h.Verified }) {
			found++
		} else {
			t.Logf("%s: rotated and cropped, re-ranked, finds %v", d.ImageID, crop.Hits)
		}
	}
	t.Logf("%d of %d rotated crops find their source verified in the top 3; %d verified hits of the id queries", found, tried, verified)
	if found < tried-1 {
		t.Errorf("%d of %d rotated and cropped copies find their source verified in the top 3", found, tried)
	}

	id := docs[5].ImageID
	for _, args := range [][]string{{"--rerank", "20"}, {"--rerank", "20", "--expand"}, {"--expand=3"}, {"--rerank", "20", "--near", "10"}} {
		var stdout, stderr bytes.Buffer
		if code := run(ctx, append([]string{"--run", dir, "--image_id", id, "--learner", "tfidf", "--k", "6"}, args...), &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
		}
		r := search.Refine{}
		if args[0] == "--rerank" {
			r.Rerank = 20
		}
		switch args[len(args)-1] {
		case "10":
			r.NearCopies = 10
		case "--expand":
			r.Expand = search.DefaultExpand
		case "--expand=3":
			r.Expand = 3
		}
		res, err := ix.SearchIDRefined(search.TFIDF, id, 6, r)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if len(lines) != 2+len(res.Hits) || !strings.Contains(lines[1], " inliers ") {
			t.Fatalf("%q: %d lines, want a header with inliers and %d results:\n%s", args, len(lines), len(res.Hits), stdout.String())
		}
		for i, h := range res.Hits {
			in := "-"
			if h.Verified {
				in = strconv.Itoa(h.Inliers)
			}
			if f := strings.Fields(lines[2+i]); len(f) != 5 || f[0] != strconv.Itoa(i+1) || f[2] != in || f[4] != h.ImageID {
				t.Fatalf("%q: line %q, want rank %d, inliers %s, %s", args, lines[2+i], i+1, in, h.ImageID)
			}
		}
	}
}

// --expand alone is the default count; --expand N and --expand=N are N,
// 1 included (not a boolean's true), as any other flag's value is, with
// the flags after it read as flags; false is none.
func TestExpandFlag(t *testing.T) {
	base := []string{"--run", "r", "--image_id", "x", "--rerank", "50"}
	for _, c := range []struct {
		args    []string
		want, k int
	}{{nil, 0, 10}, {[]string{"--expand"}, search.DefaultExpand, 10}, {[]string{"--expand=1"}, 1, 10}, {[]string{"--expand=0"}, 0, 10},
		{[]string{"--expand=12"}, 12, 10}, {[]string{"--expand=false"}, 0, 10}, {[]string{"--expand=true"}, search.DefaultExpand, 10},
		{[]string{"--expand", "3", "--k", "4"}, 3, 4}, {[]string{"-expand", "1"}, 1, 10}, {[]string{"--expand", "--k", "4"}, search.DefaultExpand, 4},
		{[]string{"--k", "4", "--expand", "0"}, 0, 4}} {
		o, err := parseFlags(append(append([]string(nil), base...), c.args...), io.Discard)
		if err != nil || o.refine.Expand != c.want || o.k != c.k {
			t.Errorf("%q: expand %d, k %d (%v), want %d and %d", c.args, o.refine.Expand, o.k, err, c.want, c.k)
		}
	}
	// A value of another flag that reads "--expand" is that flag's.
	if o, err := parseFlags([]string{"--run", "r", "--image_id", "--expand", "5"}, io.Discard); err == nil || o.imageID != "--expand" {
		t.Errorf("--image_id --expand 5: %+v, %v; want the image id --expand and 5 an unexpected argument", o, err)
	}
}

// TestFlags: a mistake of the command line is one line naming the flag,
// exit 2, without the usage; --help is the usage on stdout, its lines at
// most 100 characters, exit 0.
func TestFlags(t *testing.T) {
	ctx := context.Background()
	aFile, err := filepath.Abs("main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "query: unknown flag --nope (--help lists every flag)"},
		{[]string{"--run", "r", "--image_id", "x", "--k", "abc"}, `query: --k "abc": want a whole number (--help lists every flag)`},
		{[]string{"--run", "r", "--image_id", "x", "--k", "0"}, "query: --k 0: must be 1 or more (--help lists every flag)"},
		{[]string{"--run", "r", "--image_id", "x", "--max_pixels", "-1"}, "query: --max_pixels -1: must be 0 (no limit) or more (--help lists every flag)"},
		{[]string{"--run", "r", "--image_id", "x", "3"}, `query: unexpected arguments ["3"]: flags are written --name value (--help lists every flag)`},
		{[]string{"--image_id", "x"}, "query: --run is required (--help lists every flag)"},
		{[]string{"--run", aFile, "--image_id", "x"}, "query: --run " + aFile + ": is a file, not a directory (--help lists every flag)"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(ctx, c.args, &stdout, &stderr); code != 2 || stderr.String() != c.want+"\n" || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2 and %q", c.args, code, stderr.String(), stdout.String(), c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"--help"}, &stdout, &stderr); code != 0 || stderr.Len() != 0 || !strings.Contains(stdout.String(), "--expand [N]") {
		t.Fatalf("--help: exit %d, stderr %q, stdout:\n%s", code, stderr.String(), stdout.String())
	}
	for i, line := range strings.Split(stdout.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > cmdline.UsageWidth {
			t.Errorf("--help line %d has %d characters: %q", i+1, n, line)
		}
	}
}
