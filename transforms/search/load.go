package search

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/formats/published"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/kmeans"
)

// Open loads the finished run under path (local or gs://): a run directory
// (one with manifest.json), or a root holding published.json, whose
// published run is loaded. Only the files the manifest lists are read.
func Open(ctx context.Context, path string, opt Options) (*Index, error) {
	dir, serving, err := resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	ix, err := load(ctx, dir, opt)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	ix.serving = serving
	return ix, nil
}

// resolve returns the run directory path names, and the serving learner
// published.json names if it named the run.
func resolve(ctx context.Context, path string) (dir, serving string, err error) {
	gen, err := blob.Generation(ctx, blob.Join(path, run.ManifestName))
	if err != nil {
		return "", "", err
	}
	if gen != 0 {
		return path, "", nil
	}
	p, err := published.ReadPublished(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%s holds neither a finished run (%s) nor %s", path, run.ManifestName, run.PublishedName)
	}
	if err != nil {
		return "", "", err
	}
	dir = p.Dir(path)
	gen, err = blob.Generation(ctx, blob.Join(dir, run.ManifestName))
	if err != nil {
		return "", "", err
	}
	if gen == 0 {
		return "", "", fmt.Errorf("%s publishes %s, which has no %s", published.Path(path), dir, run.ManifestName)
	}
	return dir, p.ServingLearner, nil
}

// manifest reads the manifest of the run under dir, its settings set
// (run.Load).
func manifest(ctx context.Context, dir string) (run.Manifest, error) {
	return run.Load(ctx, func(ctx context.Context, name string) ([]byte, error) {
		data, _, err := blob.Read(ctx, blob.Join(dir, name))
		return data, err
	})
}

// tables returns the paths of the files m lists, by table name ("bow",
// "index-solis-ada", …), each sorted.
func tables(dir string, m run.Manifest) map[string][]string {
	names, _ := run.Tables(m.Names())
	out := make(map[string][]string, len(names))
	for t, ns := range names {
		for _, n := range ns {
			out[t] = append(out[t], blob.Join(dir, n))
		}
	}
	return out
}

// readTable calls fn for every row of every file of a table, in file
// order, from the calling goroutine. With more than one CPU the files are
// decoded ahead on GOMAXPROCS goroutines, each file's rows a few at a time
// (formats.Decode), at most that many files held decoded and waiting:
// memory is bounded by a few files, never the table.
func readTable[T any](ctx context.Context, paths []string, fn func(*T) error) error {
	workers := min(runtime.GOMAXPROCS(0), len(paths))
	if workers <= 1 {
		for _, p := range paths {
			if err := readFile(ctx, p, fn); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type file struct {
		rows []T
		err  error
	}
	files := make([]chan file, len(paths))
	for i := range files {
		files[i] = make(chan file, 1)
	}
	slots := make(chan struct{}, workers)
	go func() {
		for i, p := range paths {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				var f file
				f.err = readFile(ctx, p, func(r *T) error {
					f.rows = append(f.rows, *r)
					return nil
				})
				files[i] <- f
			}()
		}
	}()
	for i, p := range paths {
		var f file
		select {
		case f = <-files[i]:
		case <-ctx.Done():
			return ctx.Err()
		}
		if f.err != nil {
			return fmt.Errorf("%s: %w", p, f.err)
		}
		for j := range f.rows {
			if err := fn(&f.rows[j]); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		<-slots
	}
	return nil
}

func readFile[T any](ctx context.Context, path string, fn func(*T) error) error {
	if blob.IsRemote(path) {
		data, _, err := blob.Read(ctx, path)
		if err != nil {
			return err
		}
		return formats.Decode(ctx, bytes.NewReader(data), int64(len(data)), fn)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return formats.Decode(ctx, f, st.Size(), fn)
}

// load reads the run under dir.
func load(ctx context.Context, dir string, opt Options) (*Index, error) {
	m, err := manifest(ctx, dir)
	if err != nil {
		return nil, err
	}
	if m.Settings == nil {
		return nil, fmt.Errorf("no settings in %s and no %s: the run's settings are unknown", run.ManifestName, run.ReportName)
	}
	files := tables(dir, m)
	ix := &Index{run: dir, bow: map[string]*scored{}, codes: map[string]*codes{}}
	if ix.set, err = settingsOf(*m.Settings); err != nil {
		return nil, err
	}
	if d := &ix.set.describe; opt.MaxPixels > 0 && (d.MaxPixels <= 0 || opt.MaxPixels < d.MaxPixels) {
		d.MaxPixels = opt.MaxPixels
	}
	for _, t := range []string{"idf", "codebook", "bow", "images"} {
		if len(files[t]) == 0 {
			return nil, fmt.Errorf("no %s files", t)
		}
	}
	want := func(l string) bool { return len(opt.Learners) == 0 || slices.Contains(opt.Learners, l) }
	var learned []string
	for t := range files {
		if l, ok := strings.CutPrefix(t, "index-"); ok && want(l) {
			learned = append(learned, l)
		}
	}
	sort.Strings(learned)
	// The learners of binary codes; the other learners of global features
	// (Euclidean or dot-product embeddings) are not served.
	models := map[string]learners.DenseModel{}
	for t := range files {
		if l, ok := isDenseTable(files, t); ok && want(l) {
			m, err := loadModel(ctx, l, files[t])
			if err != nil {
				return nil, fmt.Errorf("learner %s: %w", l, err)
			}
			if m.Metric() == learners.Hamming {
				models[l] = m
			}
		}
	}
	for _, l := range opt.Learners {
		if _, ok := models[l]; l != TFIDF && !slices.Contains(learned, l) && !ok {
			return nil, fmt.Errorf("learner %q: %w", l, ErrUnknownLearner)
		}
	}

	df, err := ix.loadVocabulary(ctx, files)
	if err != nil {
		return nil, err
	}
	// A word's postings, and its entries in the bags of words, are at most
	// its document frequency; none for a word of zero IDF, which TF-IDF
	// drops.
	bound := make([]int64, ix.vocab)
	for w, n := range df {
		if ix.idf[w] != 0 {
			bound[w] = n
		}
	}
	arrived, err := ix.loadBoW(ctx, files["bow"], bound)
	if err != nil {
		return nil, err
	}
	if want(TFIDF) {
		p, err := ix.loadTFIDF(bound)
		if err != nil {
			return nil, err
		}
		ix.bow[TFIDF] = p
		ix.learners = append(ix.learners, TFIDF)
	}
	// The ordinal of every image, while the files naming images by id are
	// read; dropped after.
	ord := make(map[string]uint32, len(arrived))
	for d, a := range ix.arrival {
		ord[arrived[a]] = uint32(d)
	}
	if err := ix.loadImages(ctx, files["images"], ord); err != nil {
		return nil, err
	}
	if geo := files["geometry"]; len(geo) > 0 && !opt.NoGeometry {
		if opt.MaxKeypoints < 0 {
			return nil, fmt.Errorf("MaxKeypoints %d: want 0 (all) or more", opt.MaxKeypoints)
		}
		if err := ix.loadGeometry(ctx, geo, ord, opt.MaxKeypoints); err != nil {
			return nil, err
		}
		m := cmp.Or(opt.NearCopyWords, DefaultNearCopyWords)
		if m < 0 {
			return nil, fmt.Errorf("NearCopyWords %d: want 0 (the default) or more", opt.NearCopyWords)
		}
		if ix.sketch, err = ix.loadSketch(df, m); err != nil {
			return nil, err
		}
	}
	for _, l := range learned {
		p, err := ix.loadLearner(ctx, l, files["model-"+l], files["index-"+l], df, ord)
		if err != nil {
			return nil, fmt.Errorf("learner %s: %w", l, err)
		}
		ix.bow[l] = p
		ix.learners = append(ix.learners, l)
	}
	if len(models) > 0 {
		if err := ix.loadCodes(ctx, files["features"], models, ord); err != nil {
			return nil, err
		}
		coded := slices.Sorted(maps.Keys(models))
		ix.learners = append(ix.learners, coded...)
	}
	return ix, nil
}

// loadVocabulary reads the IDF and the codebook, and builds the forest an
// approximate k-means run quantised with. It returns the document
// frequencies.
func (ix *Index) loadVocabulary(ctx context.Context, files map[string][]string) ([]int64, error) {
	var stats []formats.WordStat
	if err := readTable(ctx, files["idf"], func(r *formats.WordStat) error {
		stats = append(stats, *r)
		return nil
	}); err != nil {
		return nil, err
	}
	ix.vocab = len(stats)
	ix.idf = make([]float32, ix.vocab)
	df := make([]int64, ix.vocab)
	seen := make([]bool, ix.vocab)
	for _, s := range stats {
		if int64(s.WordID) >= int64(ix.vocab) || seen[s.WordID] {
			return nil, fmt.Errorf("idf: word %d repeated or outside the %d words", s.WordID, ix.vocab)
		}
		seen[s.WordID] = true
		ix.idf[s.WordID], df[s.WordID] = s.IDF, s.DF
	}
	// The centroids' dimension is the first row's; the table then
	// refuses a word outside the idf's, twice, of another length or not
	// finite, and a word missing.
	var dim int
	var tab *formats.CentroidTable
	if err := readTable(ctx, files["codebook"], func(r *formats.Word) error {
		if tab == nil {
			dim = len(r.Centroid)
			if dim == 0 {
				return fmt.Errorf("codebook: word %d has an empty centroid", r.WordID)
			}
			tab = formats.NewCentroidTable(ix.vocab, dim)
		}
		if err := tab.Add(r); err != nil {
			return fmt.Errorf("codebook of the idf's %d words: %w", ix.vocab, err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if tab == nil {
		return nil, fmt.Errorf("codebook of no words, idf of %d", ix.vocab)
	}
	cent, err := tab.Centroids()
	if err != nil {
		return nil, fmt.Errorf("codebook of the idf's %d words: %w", ix.vocab, err)
	}
	ix.centroids = cent
	if ix.forest, ix.ivf, err = kmeans.QuantizerIndexes(ix.centroids, dim, ix.set.words); err != nil {
		return nil, fmt.Errorf("codebook: %w", err)
	}
	return df, nil
}

// loadBoW reads the bags of words into ix.words and ix.vals, in the order
// they come, numbering the images by arrival; it then numbers them by id
// (ix.ids, ix.arrival) and returns the ids in arrival order.
func (ix *Index) loadBoW(ctx context.Context, paths []string, bound []int64) ([]string, error) {
	var total int64
	for _, b := range bound {
		total += b
	}
	ix.words, ix.vals = make([]uint32, 0, total), make([]float32, 0, total)
	ix.off = []int64{0}
	var ids []string
	var labels []uint32
	label := map[string]uint32{}
	err := readTable(ctx, paths, func(r *formats.BoW) error {
		if err := checkQuery(r.WordIDs, r.Weights, ix.vocab); err != nil {
			return fmt.Errorf("image %s: %w", r.ImageID, err)
		}
		if len(ix.words)+len(r.WordIDs) > cap(ix.words) {
			return fmt.Errorf("image %s: the bags of words hold more words than the document frequencies count", r.ImageID)
		}
		if len(ids) == math.MaxInt32 {
			// The indexes number images with int32 ordinals.
			return fmt.Errorf("more than %d images", math.MaxInt32)
		}
		ix.words = append(ix.words, r.WordIDs...)
		ix.vals = append(ix.vals, r.Weights...)
		ix.off = append(ix.off, int64(len(ix.words)))
		l, ok := label[r.Label]
		if !ok {
			l = uint32(len(ix.names))
			label[r.Label] = l
			ix.names = append(ix.names, r.Label)
		}
		ids = append(ids, r.ImageID)
		labels = append(labels, l)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ix.off = slices.Clip(ix.off)
	// Ordinals in id order: the order the evaluation breaks ties in.
	order := make([]uint32, len(ids))
	for a := range order {
		order[a] = uint32(a)
	}
	slices.SortFunc(order, func(a, b uint32) int { return strings.Compare(ids[a], ids[b]) })
	sorted := make([]string, len(ids))
	ix.labels = make([]uint32, len(ids))
	for d, a := range order {
		sorted[d], ix.labels[d] = ids[a], labels[a]
		if d > 0 && sorted[d] == sorted[d-1] {
			return nil, fmt.Errorf("image %s has two bags of words", sorted[d])
		}
	}
	ix.ids, ix.arrival = packStrings(sorted), order
	return ids, nil
}

// loadTFIDF indexes the bags of words under unit weights, at most bound[w]
// postings for word w: the TF-IDF baseline. It reads them image by image
// in ordinal order, so every posting list comes out ascending. As
// index.Build does, it keeps no posting for a value of zero.
func (ix *Index) loadTFIDF(bound []int64) (*scored, error) {
	ones := make([]float32, ix.vocab)
	for w := range ones {
		ones[w] = 1
	}
	b := newPostingsBuilder(ones, bound)
	for d, a := range ix.arrival {
		lo, hi := ix.off[a], ix.off[a+1]
		vals := ix.vals[lo:hi]
		for t, w := range ix.words[lo:hi] {
			if vals[t] == 0 {
				continue
			}
			if err := b.add(w, int32(d), vals[t]); err != nil {
				return nil, fmt.Errorf("image %s: %w", ix.ids[d], err)
			}
		}
	}
	p, err := newScored(ix.ids, b.finish())
	if err != nil {
		return nil, fmt.Errorf("learner %s: %w", TFIDF, err)
	}
	return p, nil
}

// loadImages reads the images' locations; images without a bag of words
// (dead letters) are not indexed and are skipped.
func (ix *Index) loadImages(ctx context.Context, paths []string, ord map[string]uint32) error {
	ix.uris = newArena(len(ord))
	return readTable(ctx, paths, func(r *formats.Image) error {
		if d, ok := ord[r.ImageID]; ok {
			ix.uris.set(int(d), r.URI)
		}
		return nil
	})
}

// loadLearner reads a learner of bags of words: its weights from its model
// files and its postings from its index files.
func (ix *Index) loadLearner(ctx context.Context, learner string, model, index []string, df []int64, ord map[string]uint32) (*scored, error) {
	if len(model) == 0 {
		return nil, fmt.Errorf("no model files")
	}
	weight := make([]float32, ix.vocab)
	if err := readTable(ctx, model, func(r *formats.ModelWeight) error {
		if r.Learner != learner {
			return fmt.Errorf("a weight of learner %q", r.Learner)
		}
		if int64(r.WordID) >= int64(ix.vocab) {
			return fmt.Errorf("weight of word %d outside the %d words", r.WordID, ix.vocab)
		}
		if f := float64(r.Weight); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("weight %v of word %d", r.Weight, r.WordID)
		}
		weight[r.WordID] = r.Weight
		return nil
	}); err != nil {
		return nil, err
	}
	bound := make([]int64, ix.vocab)
	for w, n := range df {
		if weight[w] != 0 && ix.idf[w] != 0 {
			bound[w] = n
		}
	}
	b := newPostingsBuilder(weight, bound)
	if err := readTable(ctx, index, func(r *formats.Posting) error {
		switch {
		case r.Learner != learner:
			return fmt.Errorf("a posting list of learner %q", r.Learner)
		case int64(r.WordID) >= int64(ix.vocab):
			return fmt.Errorf("posting list of word %d outside the %d words", r.WordID, ix.vocab)
		case r.Weight != weight[r.WordID]:
			return fmt.Errorf("word %d has weight %v in the index, %v in the model", r.WordID, r.Weight, weight[r.WordID])
		case len(r.Images) != len(r.Values):
			return fmt.Errorf("word %d: %d images, %d values", r.WordID, len(r.Images), len(r.Values))
		}
		for i, id := range r.Images {
			d, ok := ord[id]
			if !ok {
				return fmt.Errorf("word %d: image %s has no bag of words", r.WordID, id)
			}
			if err := b.add(r.WordID, int32(d), r.Values[i]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return newScored(ix.ids, b.finish())
}
