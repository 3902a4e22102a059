package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/itq"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/index"
)

// corpus is a run's content made up for a test: bags of words and the
// learners' weights.
type corpus struct {
	docs    []formats.BoW // sorted by id
	vocab   int
	df      []int64
	idf     []float32
	weights map[string][]float32
}

// randomCorpus makes n images of TF-IDF bags of words over vocab words
// (one of them empty), and two learners: "dense" with positive weights,
// "sparse" with half its weights zero and some negative.
func randomCorpus(n, vocab int, seed uint64) corpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	counts := make([]sparse.Vector, n)
	df := make([]int64, vocab)
	for i := range counts {
		if i == n/2 {
			continue // an image without words
		}
		words := map[uint32]float32{}
		for range 1 + rng.IntN(12) {
			words[uint32(rng.IntN(vocab))] += float32(1 + rng.IntN(3))
		}
		var v sparse.Vector
		for w := range words {
			v.Idx = append(v.Idx, w)
		}
		slices.Sort(v.Idx)
		for _, w := range v.Idx {
			v.Val = append(v.Val, words[w])
			df[w]++
		}
		counts[i] = v
	}
	c := corpus{vocab: vocab, df: df, idf: bow.IDF(df, int64(n)), weights: map[string][]float32{}}
	for i, cnt := range counts {
		v := bow.TFIDF(cnt, c.idf)
		c.docs = append(c.docs, formats.BoW{ImageID: idOf(i), Label: []string{"a", "b", "c"}[i%3], WordIDs: v.Idx, Weights: v.Val})
	}
	sort.Slice(c.docs, func(i, j int) bool { return c.docs[i].ImageID < c.docs[j].ImageID })
	dense, sp := make([]float32, vocab), make([]float32, vocab)
	for w := range vocab {
		dense[w] = 0.5 + rng.Float32()
		switch rng.IntN(4) {
		case 0:
			sp[w] = -rng.Float32()
		case 1:
			sp[w] = rng.Float32()
		}
	}
	c.weights["dense"], c.weights["sparse"] = dense, sp
	return c
}

func idOf(i int) string {
	return "img/" + string(rune('a'+i%26)) + "-" + string(rune('0'+i/26%10)) + string(rune('0'+i/260))
}

// writeRun writes c as a finished run under dir in parts files a table,
// as the job lays them out, with report.json holding cfg.
func writeRun(t *testing.T, dir string, c corpus, parts int, cfg map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var names []string
	write := func(name string, rows any) {
		t.Helper()
		var buf bytes.Buffer
		if err := formats.EncodeOf(ctx, &buf, rows); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	var stats []formats.WordStat
	var words []formats.Word
	rng := rand.New(rand.NewPCG(3, 3))
	for w := range c.vocab {
		stats = append(stats, formats.WordStat{WordID: uint32(w), DF: c.df[w], IDF: c.idf[w]})
		cent := make([]float32, formats.DescriptorSize)
		for j := range cent {
			cent[j] = float32(rng.IntN(256))
		}
		words = append(words, formats.Word{WordID: uint32(w), Centroid: cent})
	}
	write(formats.ShardName("idf", 0, 1), stats)
	write(formats.ShardName("codebook", 0, 1), words)
	for p := range parts {
		var bows []formats.BoW
		var imgs []formats.Image
		for _, d := range c.docs {
			if formats.ShardOf(d.ImageID, parts) == p {
				bows = append(bows, d)
				imgs = append(imgs, formats.Image{ImageID: d.ImageID, URI: "/images/" + d.ImageID + ".jpg", Label: d.Label})
			}
		}
		write(formats.ShardName("bow", p, parts), bows)
		write(formats.ShardName("images", p, parts), imgs)
		for l, w := range c.weights {
			byWord := map[uint32][]index.Entry{}
			for _, b := range bows {
				for k, word := range b.WordIDs {
					if index.Posts(w, word, b.Weights[k]) {
						byWord[word] = append(byWord[word], index.Entry{ImageID: b.ImageID, Value: b.Weights[k]})
					}
				}
			}
			var lists []formats.Posting
			for word := range c.vocab {
				if e := byWord[uint32(word)]; len(e) > 0 {
					lists = append(lists, index.PostingList(l, w, uint32(word), e))
				}
			}
			write(formats.ShardName("index-"+l, p, parts), lists)
		}
	}
	for l, w := range c.weights {
		var rows []formats.ModelWeight
		for word, v := range w {
			if v != 0 {
				rows = append(rows, formats.ModelWeight{Learner: l, Params: "{}", WordID: uint32(word), Weight: v})
			}
		}
		write(formats.ShardName("model-"+l, 0, 1), rows)
	}
	js, err := json.Marshal(map[string]any{"config": cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, run.ReportName), js, 0o644); err != nil {
		t.Fatal(err)
	}
	names = append(names, run.ReportName)
	writeManifest(t, dir, names)
}

func writeManifest(t *testing.T, dir string, names []string) {
	t.Helper()
	type file struct {
		Name  string `json:"name"`
		Bytes int64  `json:"bytes"`
	}
	m := struct {
		Job   string `json:"job"`
		Files []file `json:"files"`
	}{Job: "bowline"}
	sort.Strings(names)
	for _, n := range names {
		st, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		m.Files = append(m.Files, file{n, st.Size()})
	}
	js, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, run.ManifestName), js, 0o644); err != nil {
		t.Fatal(err)
	}
}

func openRun(t *testing.T, dir string, opt Options) *Index {
	t.Helper()
	ix, err := Open(context.Background(), dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// The loaded index ranks every id query exactly as transforms/index, the
// evaluation's index built from the same bags of words and weights, does
// — scores, order and ties — for every learner and the baseline, whatever
// k.
func TestSearchIDIsTheIndex(t *testing.T) {
	c := randomCorpus(300, 40, 1)
	dir := t.TempDir()
	writeRun(t, dir, c, 4, nil)
	ix := openRun(t, dir, Options{})
	if got, want := ix.Learners(), []string{TFIDF, "dense", "sparse"}; !slices.Equal(got, want) {
		t.Fatalf("learners %v, want %v", got, want)
	}
	if ix.Images() != len(c.docs) {
		t.Fatalf("%d images, want %d", ix.Images(), len(c.docs))
	}
	ids := make([]string, len(c.docs))
	vecs := make([]sparse.Vector, len(c.docs))
	for i, d := range c.docs {
		ids[i], vecs[i] = d.ImageID, sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
	}
	for _, l := range ix.Learners() {
		w := c.weights[l] // nil for TF-IDF
		ref, err := index.Build(ids, vecs, w, c.vocab)
		if err != nil {
			t.Fatal(err)
		}
		if got := ix.Postings(l); got != int64(ref.NNZ()) {
			t.Errorf("%s: %d postings, the index has %d", l, got, ref.NNZ())
		}
		srch := ref.NewSearcher()
		same := func(what string, got []Hit, want []index.Hit) {
			t.Helper()
			if len(got) != len(want) {
				t.Fatalf("%s: %d hits, want %d", what, len(got), len(want))
			}
			for i := range got {
				if got[i].ImageID != want[i].ID || got[i].Score != want[i].Score {
					t.Fatalf("%s, rank %d: %v, want %s %v", what, i, got[i], want[i].ID, want[i].Score)
				}
			}
		}
		for q, id := range ids {
			all := srch.Search(vecs[q], 0, q)
			ranked, err := ix.RankID(l, id)
			if err != nil {
				t.Fatal(err)
			}
			same(fmt.Sprintf("%s, query %s, ranking", l, id), ranked, all)
			// The matches are the images of positive score: the head of
			// the ranking, never a zero score.
			matched := 0
			for matched < len(all) && all[matched].Score > 0 {
				matched++
			}
			for _, k := range []int{1, 7, 60, 0} {
				want := srch.Search(vecs[q], k, q)
				want = want[:min(len(want), matched)]
				got, err := ix.SearchID(l, id, k)
				if err != nil {
					t.Fatal(err)
				}
				if got.Matched != matched {
					t.Fatalf("%s, query %s: %d matched, want %d", l, id, got.Matched, matched)
				}
				same(fmt.Sprintf("%s, query %s, k=%d", l, id, k), got.Hits, want)
			}
		}
	}
	d := c.docs[5]
	if uri, ok := ix.URI(d.ImageID); !ok || uri != "/images/"+d.ImageID+".jpg" {
		t.Errorf("URI(%s) = %q, %v", d.ImageID, uri, ok)
	}
	if label, ok := ix.Label(d.ImageID); !ok || label != d.Label {
		t.Errorf("Label(%s) = %q, %v; want %q", d.ImageID, label, ok, d.Label)
	}
	if _, ok := ix.URI("nope"); ok {
		t.Error("URI of an unknown image")
	}
	// Postings (8 bytes each), bags of words (8 bytes a word) and more.
	if m, min := ix.MemoryBytes(), 8*(ix.Postings(TFIDF)+ix.Postings("dense")+ix.Postings("sparse")+ix.Postings(TFIDF)); m < min {
		t.Errorf("MemoryBytes %d, below the %d bytes of the arrays", m, min)
	}
}

// Options.Learners loads only the learners named.
func TestLoadSomeLearners(t *testing.T) {
	c := randomCorpus(60, 20, 2)
	dir := t.TempDir()
	writeRun(t, dir, c, 2, nil)
	all := openRun(t, dir, Options{})
	some := openRun(t, dir, Options{Learners: []string{"sparse"}})
	if got := some.Learners(); !slices.Equal(got, []string{"sparse"}) {
		t.Fatalf("learners %v, want [sparse]", got)
	}
	if some.MemoryBytes() >= all.MemoryBytes() {
		t.Errorf("one learner holds %d bytes, all %d", some.MemoryBytes(), all.MemoryBytes())
	}
	if _, err := some.SearchID(TFIDF, c.docs[0].ImageID, 3); !errors.Is(err, ErrUnknownLearner) {
		t.Errorf("TF-IDF not loaded: %v, want ErrUnknownLearner", err)
	}
	if some.ServingLearner() != "sparse" {
		t.Errorf("serving %q", some.ServingLearner())
	}
	if _, err := Open(context.Background(), dir, Options{Learners: []string{"nope"}}); !errors.Is(err, ErrUnknownLearner) {
		t.Errorf("Open with an unknown learner: %v", err)
	}
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	img.Set(1, 1, color.White)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestErrors(t *testing.T) {
	c := randomCorpus(30, 10, 3)
	dir := t.TempDir()
	writeRun(t, dir, c, 1, map[string]string{"max_pixels": "10000"})
	ix := openRun(t, dir, Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"unknown id", second(ix.SearchID("dense", "nope", 3)), ErrUnknownImage},
		{"unknown learner", second(ix.SearchID("nope", c.docs[0].ImageID, 3)), ErrUnknownLearner},
		{"unknown learner, image", second(ix.SearchImage(ctx, "nope", pngOf(t, 20, 20), 3)), ErrUnknownLearner},
		{"text", second(ix.SearchImage(ctx, "dense", []byte("<html>not found</html>"), 3)), ErrBadImage},
		{"empty", second(ix.SearchImage(ctx, "dense", nil, 3)), ErrBadImage},
		{"truncated", second(ix.SearchImage(ctx, "dense", pngOf(t, 50, 50)[:60], 3)), ErrBadImage},
		{"over the run's max_pixels", second(ix.SearchImage(ctx, "dense", pngOf(t, 101, 100), 3)), ErrTooLarge},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	// Within the limit, a photo is searched (the made-up vocabulary
	// ranks something; what is the photos' test in cmd/query).
	if res, err := ix.SearchImage(ctx, "dense", texturePNG(t, 100, 100), 3); err != nil || len(res.Hits) > 3 || len(res.Hits) != min(3, res.Matched) {
		t.Errorf("a 100x100 photo: %v, %v", res, err)
	}
	lower := openRun(t, dir, Options{MaxPixels: 2500})
	if _, err := lower.SearchImage(ctx, "dense", pngOf(t, 51, 50), 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over Options.MaxPixels: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ix.SearchImage(cancelled, "dense", pngOf(t, 20, 20), 3); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// Open refuses runs it cannot serve exactly.
func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	c := randomCorpus(30, 10, 4)
	if _, err := Open(ctx, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "neither a finished run") {
		t.Errorf("an empty directory: %v", err)
	}

	// An index whose weights are not the model's.
	dir := t.TempDir()
	c.weights["dense"][int(c.docs[0].WordIDs[0])] += 1
	writeRun(t, dir, c, 1, nil)
	model := filepath.Join(dir, formats.ShardName("model-dense", 0, 1))
	var rows []formats.ModelWeight
	for w, v := range c.weights["dense"] {
		if w == int(c.docs[0].WordIDs[0]) {
			v -= 1
		}
		rows = append(rows, formats.ModelWeight{Learner: "dense", WordID: uint32(w), Weight: v})
	}
	var buf bytes.Buffer
	if err := formats.Encode(ctx, &buf, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(model, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dir, Options{}); err == nil || !strings.Contains(err.Error(), "in the model") {
		t.Errorf("index and model disagree: %v", err)
	}

	// A run without report.json: its settings are unknown.
	dir = t.TempDir()
	writeRun(t, dir, randomCorpus(30, 10, 5), 1, nil)
	names, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	writeManifest(t, dir, names)
	if _, err := Open(ctx, dir, Options{}); err == nil || !strings.Contains(err.Error(), run.ReportName) {
		t.Errorf("no report.json: %v", err)
	}

	// A setting that does not parse.
	dir = t.TempDir()
	writeRun(t, dir, randomCorpus(30, 10, 6), 1, map[string]string{"max_side": "many"})
	if _, err := Open(ctx, dir, Options{}); err == nil || !strings.Contains(err.Error(), "max_side") {
		t.Errorf("a bad setting: %v", err)
	}
}

// A codebook whose word 1 is written twice in place of word 2 holds as
// many rows as the idf has words: the index refuses it, naming the word,
// rather than quantise photos against a zero centroid.
func TestOpenRefusesADuplicatedWord(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := randomCorpus(30, 10, 7)
	writeRun(t, dir, c, 1, nil)
	var words []formats.Word
	for w := range c.vocab {
		id := uint32(w)
		if id == 2 {
			id = 1
		}
		words = append(words, formats.Word{WordID: id, Centroid: make([]float32, formats.DescriptorSize)})
	}
	var buf bytes.Buffer
	if err := formats.Encode(ctx, &buf, words); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, formats.ShardName("codebook", 0, 1)), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	writeManifest(t, dir, append(names, run.ReportName))
	if _, err := Open(ctx, dir, Options{}); err == nil || !strings.Contains(err.Error(), "word 1 twice") {
		t.Errorf("a codebook with word 1 twice and no word 2: err %v, want one naming word 1 twice", err)
	}
}

// A root with published.json opens the run it names.
func TestOpenPublished(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, published.RunsDir, "r1")
	writeRun(t, dir, randomCorpus(40, 12, 7), 2, nil)
	run := published.Run{Run: published.RunsDir + "/r1", PublishedAt: time.Now(), ServingLearner: "sparse"}
	js, err := run.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(published.Path(root), js, 0o644); err != nil {
		t.Fatal(err)
	}
	ix := openRun(t, root, Options{})
	if ix.Run() != dir || ix.ServingLearner() != "sparse" || ix.Images() != 40 {
		t.Errorf("run %s, serving %s, %d images", ix.Run(), ix.ServingLearner(), ix.Images())
	}
	direct := openRun(t, dir, Options{})
	if direct.ServingLearner() != "dense" {
		t.Errorf("a run opened directly serves %q, want the first learned, dense", direct.ServingLearner())
	}
	// published.json naming a run that did not finish.
	run.Run = published.RunsDir + "/r2"
	js, _ = run.JSON()
	if err := os.WriteFile(published.Path(root), js, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), root, Options{}); err == nil || !strings.Contains(err.Error(), "r2") {
		t.Errorf("an unfinished published run: %v", err)
	}
}

// The builder allocates once from the bounds, refuses a word beyond its
// bound, closes the gaps of the words below theirs, and sorts a word's
// postings that came in several runs (one per part of a
// document-partitioned index).
func TestPostingsBuilder(t *testing.T) {
	weight := []float32{1, 2, 0, 3}
	b := newPostingsBuilder(weight, []int64{2, 3, 0, 40})
	for _, p := range []struct {
		w uint32
		d int32
		v float32
	}{{0, 5, 1}, {1, 2, 2}, {3, 1, 3}, {0, 7, 4}, {3, 8, 5}, {3, 0, 6}} {
		if err := b.add(p.w, p.d, p.v); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.add(0, 9, 1); err == nil {
		t.Error("a third posting of a word bounded at 2")
	}
	if err := b.add(2, 9, 1); err == nil {
		t.Error("a posting of a word bounded at 0")
	}
	if err := b.add(4, 9, 1); err == nil {
		t.Error("a word outside the vocabulary")
	}
	p := b.finish()
	if !slices.Equal(p.start, []int{0, 2, 3, 3, 6}) || !slices.Equal(p.docs, []int32{5, 7, 2, 0, 1, 8}) || !slices.Equal(p.vals, []float32{1, 4, 2, 6, 3, 5}) {
		t.Errorf("start %v docs %v vals %v", p.start, p.docs, p.vals)
	}
	if cap(p.docs) != 6 {
		t.Errorf("the arrays keep a capacity of %d for 6 postings of 45 reserved", cap(p.docs))
	}
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	sc, err := newScored(ids, p)
	if err != nil {
		t.Fatal(err)
	}
	got, matched := sc.search(sparse.Vector{Idx: []uint32{0, 3}, Val: []float32{1, 1}}, 3, 7)
	if want := []index.Hit{{Doc: 0, ID: "a", Score: 18}, {Doc: 8, ID: "i", Score: 15}, {Doc: 1, ID: "b", Score: 9}}; !slices.Equal(got, want) || matched < 3 {
		t.Errorf("search ranks %v (%d matched), want %v", got, matched, want)
	}
}

// Concurrent searches share the index safely (run with -race).
func TestConcurrentSearches(t *testing.T) {
	c := randomCorpus(100, 20, 8)
	dir := t.TempDir()
	writeRun(t, dir, c, 2, nil)
	ix := openRun(t, dir, Options{})
	want := map[string]Result{}
	for _, d := range c.docs {
		want[d.ImageID], _ = ix.SearchID("sparse", d.ImageID, 5)
	}
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range c.docs {
				d := c.docs[(i+g*25)%len(c.docs)]
				got, err := ix.SearchID("sparse", d.ImageID, 5)
				if w := want[d.ImageID]; err == nil && (!slices.Equal(got.Hits, w.Hits) || got.Matched != w.Matched) {
					err = errors.New("a different ranking under concurrency for " + d.ImageID)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// randomCodes returns n random embeddings of dim values, a third of them
// repeating an earlier one (ties), and their codes with every has[d]
// image coded.
func randomCodes(n, dim int, has []bool, seed uint64) ([][]float64, *codes) {
	rng := rand.New(rand.NewPCG(seed, 9))
	emb := make([][]float64, n)
	c := &codes{words: (dim + 63) / 64, has: has}
	for d := range emb {
		if d > 0 && rng.IntN(3) == 0 {
			emb[d] = emb[rng.IntN(d)]
		} else {
			emb[d] = make([]float64, dim)
			for j := range emb[d] {
				emb[d][j] = rng.NormFloat64()
			}
		}
		code := itq.Pack(emb[d], nil)
		c.item = append(c.item, code...)
		c.query = append(c.query, code...)
		if has[d] {
			c.count++
		}
	}
	return emb, c
}

// Hamming search by popcount ranks exactly as the evaluation's brute
// force (evaluate.Brute under learners.Hamming) over the coded images,
// ties by ordinal, for every k, with and without the query's own image.
func TestHammingIsBruteForce(t *testing.T) {
	const n, dim = 400, 70 // two words a code
	has := make([]bool, n)
	for d := range has {
		has[d] = d%7 != 3 // some images without global features
	}
	emb, c := randomCodes(n, dim, has, 1)
	var kept [][]float64
	var ord []int // brute-force index → ordinal
	for d, ok := range has {
		if ok {
			kept, ord = append(kept, emb[d]), append(ord, d)
		}
	}
	brute, err := evaluate.NewBrute(learners.Hamming, kept)
	if err != nil {
		t.Fatal(err)
	}
	var w worker
	var bs evaluate.BruteScratch
	rng := rand.New(rand.NewPCG(2, 2))
	for qi := range 60 {
		// Queries from the collection (excluded) and from outside.
		exclude, self := -1, -1
		q := make([]float64, dim)
		if qi%2 == 0 {
			self = rng.IntN(len(kept))
			exclude, q = ord[self], kept[self]
		} else {
			for j := range q {
				q[j] = rng.NormFloat64()
			}
		}
		want := brute.Rank(nil, q, self, &bs)
		qc := itq.Pack(q, nil)
		for _, k := range []int{1, 5, 33, 0} {
			got := w.hamming(c, qc, k, exclude)
			wk := want
			if k > 0 {
				wk = want[:k]
			}
			if len(got) != len(wk) {
				t.Fatalf("query %d, k=%d: %d hits, want %d", qi, k, len(got), len(wk))
			}
			for i, h := range got {
				dist := itq.Hamming(qc, itq.Pack(kept[wk[i]], nil))
				if int(h.doc) != ord[wk[i]] || h.score != float64(-dist) {
					t.Fatalf("query %d, k=%d, rank %d: %d at %v, brute force ranks %d at %d", qi, k, i, h.doc, h.score, ord[wk[i]], -dist)
				}
			}
		}
	}
}

// A run on Cloud Storage (an emulator), through its root's published.json,
// loads as the same run does locally.
func TestOpenGCS(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "bucket")
	c := randomCorpus(50, 12, 9)
	local := t.TempDir()
	writeRun(t, local, c, 2, nil)
	names, err := os.ReadDir(local)
	if err != nil {
		t.Fatal(err)
	}
	root := "gs://bucket/root"
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(local, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := blob.Write(ctx, blob.Join(root, "runs/r1/"+n.Name()), data); err != nil {
			t.Fatal(err)
		}
	}
	js, _ := published.Run{Run: "runs/r1", PublishedAt: time.Now(), ServingLearner: "dense"}.JSON()
	if err := blob.Write(ctx, published.Path(root), js); err != nil {
		t.Fatal(err)
	}
	remote := openRun(t, root, Options{})
	want := openRun(t, local, Options{})
	if remote.Run() != root+"/runs/r1" || remote.Images() != want.Images() {
		t.Fatalf("run %s of %d images", remote.Run(), remote.Images())
	}
	for _, d := range c.docs {
		got, err := remote.SearchID("sparse", d.ImageID, 5)
		if err != nil {
			t.Fatal(err)
		}
		if w, _ := want.SearchID("sparse", d.ImageID, 5); !slices.Equal(got.Hits, w.Hits) || got.Matched != w.Matched {
			t.Fatalf("%s: %v from gs://, %v locally", d.ImageID, got, w)
		}
	}
}
