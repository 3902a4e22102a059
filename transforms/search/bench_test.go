package search

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/spatial"
)

// The benchmarks of the serving side, one core:
//
//	go test ./transforms/search -run '^$' -bench . -cpu 1 -benchtime 2000x
//
// BenchmarkIDQueries searches a 1M-image index by indexed image with
// SOLIS-ADA's weights and with TF-IDF's: the index of the finished run
// under $SEARCH_BENCH_RUN (a synthetic run of the job with SOLIS-ADA, e.g.
// --input 'synthetic:1000000?descriptors=100' --vocab 10000 --akm
// --learners solis-ada), or without it a synthetic index built here
// (syntheticIndex). BenchmarkImageQueries needs $SEARCH_BENCH_IMAGE_RUN, a
// run of photos (ETH-80): its photos, scaled to 640×480, query it, SIFT
// and all (and, if the run has geometry files, re-ranked and expanded);
// BenchmarkPhotoQueries queries it with photos at their own size
// ($SEARCH_BENCH_PHOTOS). BenchmarkRerank times re-ranking and expansion
// by id. Each reports the p50 and p99 latency of single queries and the
// loaded index's memory per million images.

var bench struct {
	once sync.Once
	ix   *Index
	err  error
	load time.Duration
}

// benchIndex loads (once) the index the id benchmarks search.
func benchIndex(b *testing.B) *Index {
	bench.once.Do(func() {
		start := time.Now()
		if run := os.Getenv("SEARCH_BENCH_RUN"); run != "" {
			bench.ix, bench.err = Open(context.Background(), run, Options{Learners: []string{TFIDF, "solis-ada"}})
		} else {
			bench.ix = syntheticIndex(1_000_000, 10_000, 100, 0.024)
		}
		bench.load = time.Since(start)
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.ix
}

// syntheticIndex builds in memory an index of n images of about words
// distinct words each, drawn Zipf-like from a vocabulary of vocab, TF-IDF
// weighted and normalised, with a "solis-ada" of the given share of
// non-zero weights: the shape of the job's synthetic corpus, without the
// job.
func syntheticIndex(n, vocab, words int, nonzero float64) *Index {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(3, 4)), 1.05, 8, uint64(vocab-1))
	docs := make([][]uint32, n)
	df := make([]int64, vocab)
	for d := range docs {
		seen := map[uint32]bool{}
		for range words {
			seen[uint32(zipf.Uint64())] = true
		}
		ws := make([]uint32, 0, len(seen))
		for w := range seen {
			ws = append(ws, w)
			df[w]++
		}
		slices.Sort(ws)
		docs[d] = ws
	}
	ix := &Index{bow: map[string]*scored{}, vocab: vocab, idf: make([]float32, vocab)}
	for w := range vocab {
		if df[w] > 0 {
			ix.idf[w] = float32(math.Log(float64(n) / float64(df[w])))
		}
	}
	ids := make([]string, n)
	ix.arrival = make([]uint32, n)
	ix.labels = make([]uint32, n)
	ix.names = []string{""}
	ix.uris = newArena(n)
	ix.off = make([]int64, 1, n+1)
	ones := make([]float32, vocab)
	solis := make([]float32, vocab)
	for w := range vocab {
		ones[w] = 1
		if rng.Float64() < nonzero {
			solis[w] = rng.Float32()
		}
	}
	tfidf := newPostingsBuilder(ones, df)
	bound := make([]int64, vocab)
	for w := range vocab {
		if solis[w] != 0 {
			bound[w] = df[w]
		}
	}
	learned := newPostingsBuilder(solis, bound)
	for d, ws := range docs {
		ids[d] = fmt.Sprintf("img%08d", d)
		ix.arrival[d] = uint32(d)
		var ss float64
		for _, w := range ws {
			ss += float64(ix.idf[w]) * float64(ix.idf[w])
		}
		for _, w := range ws {
			v := float32(float64(ix.idf[w]) / math.Sqrt(ss))
			ix.words, ix.vals = append(ix.words, w), append(ix.vals, v)
			if err := tfidf.add(w, int32(d), v); err != nil {
				panic(err)
			}
			if solis[w] != 0 {
				if err := learned.add(w, int32(d), v); err != nil {
					panic(err)
				}
			}
		}
		ix.off = append(ix.off, int64(len(ix.words)))
		docs[d] = nil
	}
	ix.ids = packStrings(ids)
	for l, b := range map[string]*postingsBuilder{TFIDF: tfidf, "solis-ada": learned} {
		p, err := newScored(ix.ids, b.finish())
		if err != nil {
			panic(err)
		}
		ix.bow[l] = p
	}
	ix.learners = []string{TFIDF, "solis-ada"}
	return ix
}

// latencies runs query once per b.N iteration, timing each, and reports
// their p50 and p99 in milliseconds; it returns the p50.
func latencies(b *testing.B, query func(i int) error) float64 {
	times := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := query(i); err != nil {
			b.Fatal(err)
		}
		times = append(times, float64(time.Since(start).Nanoseconds())/1e6)
	}
	b.StopTimer()
	slices.Sort(times)
	p50, p99 := times[len(times)/2], times[min(len(times)-1, len(times)*99/100)]
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	return p50
}

// BenchmarkIDQueries: top-10 searches by indexed image, a fixed sample of
// 1,000 query images cycled through, with each learner's index.
func BenchmarkIDQueries(b *testing.B) {
	ix := benchIndex(b)
	n := ix.Images()
	queries := make([]string, 1000)
	for i := range queries {
		queries[i] = ix.ids[int(uint64(i)*uint64(n)/uint64(len(queries)))]
	}
	b.Logf("%d images loaded in %.1fs (GOMAXPROCS %d); %.2f GB held, %.2f GB per million images; postings: tfidf %d, solis-ada %d",
		n, bench.load.Seconds(), runtime.GOMAXPROCS(0), float64(ix.MemoryBytes())/1e9, float64(ix.MemoryBytes())/1e9*1e6/float64(n),
		ix.Postings(TFIDF), ix.Postings("solis-ada"))
	p50 := map[string]float64{}
	for _, l := range []string{"solis-ada", TFIDF} {
		b.Run(l, func(b *testing.B) {
			p50[l] = latencies(b, func(i int) error {
				_, err := ix.SearchID(l, queries[i%len(queries)], 10)
				return err
			})
			b.ReportMetric(float64(ix.MemoryBytes())*1e6/float64(n)/1e9, "GB/Mimages")
		})
	}
	if p50["solis-ada"] > 0 {
		b.Logf("p50: solis-ada %.3f ms, tfidf %.3f ms: %.1fx faster", p50["solis-ada"], p50[TFIDF], p50[TFIDF]/p50["solis-ada"])
	}
}

// BenchmarkImageQueries: top-10 searches by photo, 640×480 JPEGs made from
// the run's own photos (every 1/20th of the collection), decode and SIFT
// included.
func BenchmarkImageQueries(b *testing.B) {
	run := os.Getenv("SEARCH_BENCH_IMAGE_RUN")
	if run == "" {
		b.Skip("SEARCH_BENCH_IMAGE_RUN names no run of photos")
	}
	ctx := context.Background()
	ix, err := Open(ctx, run, Options{})
	if err != nil {
		b.Fatal(err)
	}
	var photos [][]byte
	for i := range 20 {
		id := ix.ids[i*ix.Images()/20]
		uri, _ := ix.URI(id)
		data, _, err := blob.Read(ctx, uri)
		if err != nil {
			b.Fatal(err)
		}
		img, _, err := ingest.Decode(data, 0)
		if err != nil {
			b.Fatal(err)
		}
		dst := image.NewRGBA(image.Rect(0, 0, 640, 480))
		xdraw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), xdraw.Src, nil)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 90}); err != nil {
			b.Fatal(err)
		}
		photos = append(photos, buf.Bytes())
	}
	b.Logf("%d images, %d words; learners %v", ix.Images(), ix.vocab, ix.Learners())
	for _, l := range []string{ix.ServingLearner(), TFIDF} {
		b.Run(l, func(b *testing.B) {
			latencies(b, func(i int) error {
				_, err := ix.SearchImage(ctx, l, photos[i%len(photos)], 10)
				return err
			})
		})
		if ix.geo == nil {
			continue
		}
		// Re-ranked and expanded: the photo's keypoints come from the
		// description above, so this adds verification and a second search.
		b.Run(l+"+sv+qe", func(b *testing.B) {
			latencies(b, func(i int) error {
				_, err := ix.SearchImageRefined(ctx, l, photos[i%len(photos)], 10, Refine{Rerank: DefaultRerank, Expand: DefaultExpand})
				return err
			})
		})
	}
}

// BenchmarkPhotoQueries: top-10 TF-IDF searches of the run under
// $SEARCH_BENCH_IMAGE_RUN by photos at their own size, decode and SIFT
// included, one sub-benchmark a glob of $SEARCH_BENCH_PHOTOS (globs
// separated by commas, e.g. a directory of 1024×768 photos and one of
// 4000×3000), named by its first photo's size: what a user's photo costs
// cmd/query and cmd/serve.
func BenchmarkPhotoQueries(b *testing.B) {
	run, globs := os.Getenv("SEARCH_BENCH_IMAGE_RUN"), os.Getenv("SEARCH_BENCH_PHOTOS")
	if run == "" || globs == "" {
		b.Skip("SEARCH_BENCH_IMAGE_RUN names no run or SEARCH_BENCH_PHOTOS no photos")
	}
	ctx := context.Background()
	ix, err := Open(ctx, run, Options{Learners: []string{TFIDF}})
	if err != nil {
		b.Fatal(err)
	}
	for _, glob := range strings.Split(globs, ",") {
		paths, err := filepath.Glob(glob)
		if err != nil || len(paths) == 0 {
			b.Fatalf("%s: no photos (%v)", glob, err)
		}
		var photos [][]byte
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			photos = append(photos, data)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(photos[0]))
		if err != nil {
			b.Fatalf("%s: %v", paths[0], err)
		}
		b.Run(fmt.Sprintf("%dx%d", cfg.Width, cfg.Height), func(b *testing.B) {
			latencies(b, func(i int) error {
				_, err := ix.SearchImage(ctx, TFIDF, photos[i%len(photos)], 10)
				return err
			})
		})
	}
}

// BenchmarkHammingQueries: top-10 searches of 1M random 64-bit codes by
// popcount over all of them (the learners of binary codes; whether that
// needs multi-index hashing at 1M).
func BenchmarkHammingQueries(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(5, 5))
	c := &codes{words: 1, item: make([]uint64, n), has: make([]bool, n), count: n}
	for d := range n {
		c.item[d], c.has[d] = rng.Uint64(), true
	}
	c.query = c.item
	var w worker
	latencies(b, func(i int) error {
		d := (i * 7919) % n
		w.hamming(c, c.query[d:d+1], 10, d)
		return nil
	})
	b.ReportMetric(float64(c.bytes())*1e6/n/1e9, "GB/Mimages")
}

// syntheticGeometry gives every image of ix kps keypoints in a 640×480
// frame, their words drawn from the image's own bag of words (every word
// once, then again at random: bursts as a photo's), and plants a scene of
// 60 keypoints under a similarity of its own in every image of one group
// in 50 (d mod 50), so that some candidates verify.
func syntheticGeometry(ix *Index, kps int) {
	rng := rand.New(rand.NewPCG(9, 9))
	const w, h = 640, 480
	n := ix.Images()
	g := &geometries{at: make([]uint64, n), n: make([]uint32, n), size: make([]int32, 2*n)}
	scenes := make([]formats.Geometry, 50)
	for i := range scenes {
		var f formats.Features
		var words []uint32
		for range 60 {
			words = append(words, uint32(rng.IntN(ix.vocab)))
			f.X, f.Y = append(f.X, 60+520*rng.Float32()), append(f.Y, 40+400*rng.Float32())
			f.Scale, f.Angle = append(f.Scale, 1.6*float32(math.Exp2(3*rng.Float64()))), append(f.Angle, 6.28*rng.Float32())
		}
		f.Width, f.Height = w, h
		var err error
		if scenes[i], err = formats.GeometryOf(&f, words); err != nil {
			panic(err)
		}
	}
	var p packer
	for d := range n {
		bag := ix.bagOf(d).Idx
		var f formats.Features
		f.Width, f.Height = w, h
		var words []uint32
		sc := scenes[d%50]
		var sk spatial.Geometry
		unpack(p.pack(&sc, 0), w, h, &sk)
		t := spatial.Similarity(0.8+0.4*rng.Float64(), 0.5*rng.Float64()-0.25, 20*rng.Float64()-10, 20*rng.Float64()-10)
		for i := range sk.Len() {
			if rng.IntN(3) == 0 {
				continue
			}
			x, y := t.Apply(float64(sk.X[i]), float64(sk.Y[i]))
			words = append(words, sk.Words[i])
			f.X, f.Y = append(f.X, float32(x)), append(f.Y, float32(y))
			f.Scale, f.Angle = append(f.Scale, sk.Scale[i]*float32(t.Scale())), append(f.Angle, sk.Angle[i]+float32(t.Rotation()))
		}
		for i := len(words); i < kps; i++ {
			word := bag[rng.IntN(len(bag))]
			if i < len(bag) {
				word = bag[i]
			}
			words = append(words, word)
			f.X, f.Y = append(f.X, w*rng.Float32()), append(f.Y, h*rng.Float32())
			f.Scale, f.Angle = append(f.Scale, 1.6*float32(math.Exp2(3*rng.Float64()))), append(f.Angle, 6.28*rng.Float32())
		}
		row, err := formats.GeometryOf(&f, words)
		if err != nil {
			panic(err)
		}
		g.add(d, p.pack(&row, 0), row.Width, row.Height)
	}
	ix.geo = g
}

// BenchmarkRerank: searches by indexed image re-ranked by spatial
// verification of the best 100 (and expanded with up to 50 verified), and
// the verification of 100 candidates alone, one query at a time, against
// the plain search: with $SEARCH_BENCH_GEOMETRY_RUN a run with geometry
// files (ETH-80), or else 20,000 synthetic images of
// $SEARCH_BENCH_KEYPOINTS keypoints (300) over 10,000 words. Verification
// reads 100 images' keypoints whatever the collection's size, so its time
// at a million images is this one's plus 100 cache misses; the memory per
// million images is the geometry's bytes per image times a million.
//
// rerank100+near10 adds the near-copy candidates (Refine.NearCopies), and
// near10 times their search alone, whose postings lists grow with the
// collection: its time at a million images is this one's times a million
// over the images here.
//
// Measured (one core of a loaded 2-core machine): ETH-80 (object labels,
// 10K words, 70 keypoints an image) verifies 100 candidates in 0.23 ms
// p50, 0.72 GB of geometry per million images; the synthetic 300
// keypoints an image in 1.7 ms p50, 3.4 GB per million.
func BenchmarkRerank(b *testing.B) {
	var ix *Index
	if run := os.Getenv("SEARCH_BENCH_GEOMETRY_RUN"); run != "" {
		var err error
		if ix, err = Open(context.Background(), run, Options{}); err != nil {
			b.Fatal(err)
		}
		if ix.geo == nil {
			b.Fatalf("%s has no geometry files", run)
		}
	} else {
		kps := 300
		if s := os.Getenv("SEARCH_BENCH_KEYPOINTS"); s != "" {
			fmt.Sscan(s, &kps)
		}
		ix = syntheticIndex(20_000, 10_000, 100, 0.024)
		syntheticGeometry(ix, kps)
		df := make([]int64, ix.vocab)
		for _, w := range ix.words {
			df[w]++
		}
		var err error
		if ix.sketch, err = ix.loadSketch(df, DefaultNearCopyWords); err != nil {
			b.Fatal(err)
		}
	}
	n := ix.Images()
	var kp int64
	for _, c := range ix.geo.n {
		kp += int64(c)
	}
	b.Logf("%d images, %.0f keypoints an image; geometry %.1f MB, %.2f GB per million images; near-copy sketch %.2f GB per million; the whole index %.2f GB per million",
		n, float64(kp)/float64(n), float64(ix.geo.bytes())/1e6, float64(ix.geo.bytes())/float64(n)*1e6/1e9,
		float64(ix.sketch.bytes)/float64(n)*1e6/1e9, float64(ix.MemoryBytes())/float64(n)*1e6/1e9)
	queries := make([]string, min(n, 500))
	for i := range queries {
		queries[i] = ix.ids[int(uint64(i)*uint64(n)/uint64(len(queries)))]
	}
	learner := ix.ServingLearner()
	for _, c := range []struct {
		name string
		r    Refine
	}{{"plain", Refine{}}, {"rerank100", Refine{Rerank: 100}}, {"rerank100+expand50", Refine{Rerank: 100, Expand: 50}},
		{"rerank100+near10", Refine{Rerank: 100, NearCopies: DefaultNearCopies}}} {
		b.Run(c.name, func(b *testing.B) {
			verified := 0
			latencies(b, func(i int) error {
				res, err := ix.SearchIDRefined(learner, queries[i%len(queries)], 10, c.r)
				for _, h := range res.Hits {
					if h.Verified {
						verified++
					}
				}
				return err
			})
			b.ReportMetric(float64(verified)/float64(b.N), "verified/query")
		})
	}
	// Verification alone: 100 candidates of each query (its best 100 of
	// the learner), decoded and verified.
	cands := make([][]cand, len(queries))
	for i, id := range queries {
		d, _ := slices.BinarySearch(ix.ids, id)
		cands[i], _ = ix.searchBoW(ix.bow[learner], ix.bagOf(d), 100, d)
	}
	// The near-copy candidates alone: the sketch's search, which reads
	// postings lists that grow with the collection.
	b.Run("near10", func(b *testing.B) {
		w := ix.worker()
		latencies(b, func(i int) error {
			d, _ := slices.BinarySearch(ix.ids, queries[i%len(queries)])
			ix.nearCopies(w, ix.bagOf(d), DefaultNearCopies, d)
			return nil
		})
	})
	b.Run("verify100", func(b *testing.B) {
		w := ix.worker()
		latencies(b, func(i int) error {
			q := i % len(queries)
			d, _ := slices.BinarySearch(ix.ids, queries[q])
			ix.geo.decode(d, &w.qg)
			ix.verify(w, cands[q], map[int32]verdict{})
			return nil
		})
	})
}

// BenchmarkVerificationGraph measures what spatial verification can know
// about a labelled run with geometry ($SEARCH_BENCH_GEOMETRY_RUN; skipped
// without): every pair of images of a label is verified, both ways, and
// the pairs that verify (either way) make a graph of each label's images.
// It reports, per image, its verified neighbours (what +sv could ever
// promote, were every image of its label verified) and the others of its
// connected component (what an expansion that follows chains of verified
// matches could reach, Chum et al.'s transitive closure, at best), the
// share of 40 pairs of other labels a label that verify, and the mAP of
// TF-IDF's ranking of every image as a query against the same ranking
// with the verified neighbours, or the component, moved to the top.
//
// Measured on ETH-80 with --label_column object at 10K words (80 objects
// × 41 views, 70 keypoints an image): 1.49 verified neighbours and 5.88
// connected images of the 40 views of an object, 3 false matches in 3,200
// pairs of other objects; mAP 0.1554 for TF-IDF, 0.1613 with the
// verified neighbours first, 0.2377 with the component first.
func BenchmarkVerificationGraph(b *testing.B) {
	run := os.Getenv("SEARCH_BENCH_GEOMETRY_RUN")
	if run == "" {
		b.Skip("needs $SEARCH_BENCH_GEOMETRY_RUN, a labelled run with geometry files")
	}
	ix, err := Open(context.Background(), run, Options{Learners: []string{"tfidf"}})
	if err != nil {
		b.Fatal(err)
	}
	if ix.geo == nil {
		b.Fatalf("%s has no geometry files", run)
	}
	m, err := spatial.NewMatcher(spatial.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	labels := make([]string, ix.Images())
	byLabel := map[string][]int{}
	for d := range labels {
		labels[d], _ = ix.Label(ix.ImageID(d))
		byLabel[labels[d]] = append(byLabel[labels[d]], d)
	}
	names := slices.Sorted(maps.Keys(byLabel))
	var ga, gb spatial.Geometry
	verifies := func(a, c int) bool {
		ix.geo.decode(a, &ga)
		ix.geo.decode(c, &gb)
		return m.Verify(&ga, &gb).Verified
	}
	// ap is the average precision of rank for a query of label l.
	var rel []bool
	ap := func(rank []int, l string) float64 {
		rel = rel[:0]
		for _, d := range rank {
			rel = append(rel, labels[d] == l)
		}
		return evaluate.AveragePrecision(rel, len(byLabel[l])-1)
	}
	for b.Loop() {
		var neighbours, connected, views, falseMatches, others, apTFIDF, apVerified, apConnected float64
		for li, l := range names {
			ds := byLabel[l]
			n := len(ds)
			edge := make([][]bool, n)
			for i := range edge {
				edge[i] = make([]bool, n)
			}
			for i := range ds {
				for j := range ds {
					if i != j && verifies(ds[i], ds[j]) {
						edge[i][j], edge[j][i] = true, true
					}
				}
			}
			at := map[int]int{} // position in ds by ordinal
			for j, d := range ds {
				at[d] = j
			}
			for i, q := range ds {
				reached := make([]bool, n)
				reached[i] = true
				for stack := []int{i}; len(stack) > 0; {
					x := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					for y, e := range edge[x] {
						if e && !reached[y] {
							reached[y] = true
							stack = append(stack, y)
						}
					}
				}
				hits, err := ix.RankID("tfidf", ix.ImageID(q))
				if err != nil {
					b.Fatal(err)
				}
				rank := make([]int, len(hits))
				for k, h := range hits {
					rank[k], _ = slices.BinarySearch(ix.ids, h.ImageID)
				}
				// first moves the images of the label that keep to the top,
				// in their order.
				first := func(keep func(j int) bool) []int {
					var top, rest []int
					for _, d := range rank {
						if j, ok := at[d]; ok && keep(j) {
							top = append(top, d)
						} else {
							rest = append(rest, d)
						}
					}
					return append(top, rest...)
				}
				for j := range ds {
					if edge[i][j] {
						neighbours++
					}
					if reached[j] && j != i {
						connected++
					}
				}
				views++
				apTFIDF += ap(rank, l)
				apVerified += ap(first(func(j int) bool { return edge[i][j] }), l)
				apConnected += ap(first(func(j int) bool { return reached[j] && j != i }), l)
			}
			for k := range 40 { // pairs of other labels
				o := byLabel[names[(li+1+k)%len(names)]]
				if labels[o[k%len(o)]] != l {
					if verifies(ds[k%n], o[k%len(o)]) {
						falseMatches++
					}
					others++
				}
			}
		}
		b.ReportMetric(neighbours/views, "verified/image")
		b.ReportMetric(connected/views, "connected/image")
		b.ReportMetric(falseMatches/max(others, 1), "false-match-share")
		b.ReportMetric(apTFIDF/views, "mAP-tfidf")
		b.ReportMetric(apVerified/views, "mAP-verified-first")
		b.ReportMetric(apConnected/views, "mAP-connected-first")
	}
}
