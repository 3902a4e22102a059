// Command akmbench compares approximate k-means (AKM: assignment through a
// nn.Forest) with exact Lloyd k-means on 128-dimensional SIFT
// descriptors, from the same initial centroids, in one run.
//
// Data (-data):
//   - eth80 (default): SIFT descriptors of the ETH-80 photographs (-eth80,
//     about 220K descriptors, extracted once with sift.DefaultOptions and
//     cached in -cache). If -n exceeds what the images give, the descriptors
//     are reused in turn, each copy jittered by N(0, -jitter²) per
//     coordinate, rounded and clamped to [0, 255]; the first copy of each
//     descriptor is unjittered. Jittered copies sit closer to their original
//     than real descriptors sit to each other, so augmented sets are easier
//     to cluster than real ones of the same size.
//   - synthetic: -n byte descriptors around n/50 centres drawn uniformly
//     in [0, 128)¹²⁸, with N(0, 20²) noise per coordinate.
//
// For each K in -k it reports
//
//   - the initialisation (kmeans.Initialize, -init, -init_sample) and its
//     time;
//   - Lloyd: AKM (-trees, -leaf, one run per -checks value) for -iters
//     iterations and exact Lloyd for -exact_iters, all from that
//     initialisation with Tol = 0 and split re-seeding, so that they differ
//     only in the assignment. Time per iteration is the training time over
//     the iterations + 1 assignment passes, forest builds and updates
//     included. -exact_iters 0 skips exact Lloyd and extrapolates its time
//     from the exhaustive assignment of the -queries points (exact at
//     K = 10⁵ on 10⁶ descriptors is hours here). -exact faiss runs exact
//     Lloyd with the same updates but each pass's exhaustive search done by
//     FAISS (faiss_assign.py, with Debian's python3-faiss and
//     libopenblas0, through -python, on -faiss_threads threads): BLAS
//     matrix products make K = 10⁵ measurable, and its CPU time, counted
//     with ours, is the time of a well-optimised exact scan. -exact
//     faiss,go runs both, one after the other from the same start, and
//     prints each one's exhaustive search in descriptors per CPU-second
//     (FAISS's as its process counts it, ours as the Lloyd pass's, updates
//     included): the comparison of nn.Exact with BLAS in one run. The
//     first method listed is the reference of the speed-up column. The objective
//     J is shown as each trainer measured it (AKM's with its own
//     approximate assignment, an upper bound) and recomputed exactly on
//     -eval points;
//   - assignment: descriptors per second on one goroutine, for the
//     exhaustive scan of nn.Nearest and nn.Exact, and recall@1 (the
//     forest's centroid is at the exact nearest distance), the ratio of
//     mean squared distances to the exact ones, and the distances computed
//     per query, for every -sweep checks value, on -queries training
//     descriptors against the first AKM run's centroids, with exhaustive
//     search measured on the same descriptors in the same run.
//
// -index ivf (or forest,ivf) adds AKM runs through an nn.IVF, one per
// -probes value, to the Lloyd table, so that the objective of each
// structure is compared with exact Lloyd's from the same start.
//
// -mode assign measures word assignment alone, on one goroutine: for each K
// in -k, words are drawn from the ETH-80 descriptors (-words sample: real
// descriptors, reused with jitter past the first copy, the stand-in for a
// vocabulary where k-means at 10⁶ words is out of reach; -words lloyd:
// exact Lloyd on -n of them for -words_iters iterations), and -queries
// other real descriptors (none of them a word or trained on) are assigned
// exactly (nn.Exact), by the forest (one row per -sweep checks value),
// by the IVF (one per -probes value) and by FAISS's IndexIVFFlat and
// IndexHNSWFlat (-faiss, faiss_ann.py, through -python on -faiss_threads
// threads; Debian's python3-faiss). Each row gives recall@1, µs per
// descriptor of CPU time and the speed-up over the forest with -ref_checks
// checks, measured in the same run.
//
// -features <run>/features-*.parquet makes -mode assign draw its words and
// queries from a bowline run's SIFT descriptors instead of ETH-80's: the
// queries (-queries) from one photo in ten, the words (the largest -k) a
// uniform sample of the other photos' descriptors, so that at 10⁶ words
// every word is a distinct real descriptor and none is jittered. After the
// table it prints our IVF's and FAISS's IVF throughput at equal recall@1,
// each curve interpolated at the other's recalls.
//
// -mode objective measures vocabularies (-codebook, the codebook Parquet
// files of bowline runs) by their k-means objective on -eval SIFT
// descriptors of the images under -eth80: give it photos none of the runs
// described (e.g. cmd/mkcorpus with another -seed) for a held-out
// objective.
//
// Times are given as wall time and as process CPU time. The machine may be
// shared, and its load changes during a run: quote AKM against exact as
// ratios of CPU time taken in the same run.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"io/fs"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/bowline/bowline/transforms/cpuclock"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
	"github.com/bowline/bowline/transforms/sift"
)

const dim = 128

func main() {
	var (
		n          = flag.Int("n", 200_000, "number of descriptors")
		ks         = flag.String("k", "10000", "comma-separated vocabulary sizes")
		iters      = flag.Int("iters", 5, "AKM Lloyd iterations")
		exactIters = flag.Int("exact_iters", 5, "exact Lloyd iterations (0: extrapolate exact's time from the exhaustive assignment of -queries points)")
		exactWith  = flag.String("exact", "go", "comma-separated exact Lloyd's assignments, the first the reference of the speed-ups: go (nn.Exact), faiss (exhaustive search by python3-faiss with BLAS, see faiss_assign.py)")
		python     = flag.String("python", "/usr/bin/python3", "Python interpreter with the faiss module (Debian's python3-faiss), for -exact faiss")
		faissThr   = flag.Int("faiss_threads", 1, "threads of FAISS and OpenBLAS, for -exact faiss (a second thread made it no faster here and doubled its CPU time)")
		checks     = flag.String("checks", "128,256", "comma-separated forest checks of the AKM runs (the first also gives the centroids of the assignment table)")
		trees      = flag.Int("trees", 8, "forest trees")
		leaf       = flag.Int("leaf", 8, "forest leaf size")
		sweep      = flag.String("sweep", "16,32,64,128,256,512", "comma-separated checks values for the recall/throughput table")
		queries    = flag.Int("queries", 2000, "points for the recall/throughput table")
		eval       = flag.Int("eval", 20000, "points for the exact objective of the final centroids")
		initName   = flag.String("init", "auto", "initialisation: auto, kmeans||, kmeans++ or random")
		initSample = flag.Int("init_sample", 0, "points k-means++ sees (0: all)")
		workers    = flag.Int("workers", 0, "goroutines for Lloyd (0: GOMAXPROCS)")
		seed       = flag.Uint64("seed", 1, "seed of data augmentation, initialisation and forests")
		data       = flag.String("data", "eth80", "eth80 or synthetic")
		eth80      = flag.String("eth80", "../shared/data/eth80/images", "ETH-80 image directory")
		cache      = flag.String("cache", filepath.Join(os.TempDir(), "akmbench-eth80.sift"), "cache of the extracted ETH-80 descriptors")
		jitter     = flag.Float64("jitter", 8, "standard deviation of the jitter of reused ETH-80 descriptors")
		mode       = flag.String("mode", "lloyd", "lloyd (AKM against exact Lloyd), assign (recall@1 and speed of word assignment: forest, IVF and FAISS on the same words) or objective (a vocabulary's objective on held-out descriptors)")
		index      = flag.String("index", "forest", "comma-separated structures of the AKM runs: forest (one run per -checks value), ivf (one run per -probes value)")
		probes     = flag.String("probes", "4,8,16", "comma-separated IVF probes (AKM runs of -index ivf, and -mode assign)")
		lists      = flag.Int("lists", 0, "IVF lists (0: nn.DefaultLists, √(probes·K))")
		wordsFrom  = flag.String("words", "sample", "-mode assign's words: sample (real descriptors, reused with jitter past the first copy) or lloyd (exact Lloyd on -n of them for -words_iters)")
		wordsIters = flag.Int("words_iters", 3, "-mode assign: Lloyd iterations of -words lloyd")
		refChecks  = flag.Int("ref_checks", 256, "-mode assign: the forest checks the speed-ups are measured against")
		faissANNs  = flag.String("faiss", "ivf,hnsw", "-mode assign: FAISS anchors, comma-separated (ivf, hnsw; empty for none)")
		faissPr    = flag.String("faiss_probes", "8,16", "-mode assign: nprobe of FAISS's IVF (its lists as ours: -lists or the default for 8 probes)")
		faissEF    = flag.String("faiss_ef", "32,64,128", "-mode assign: efSearch of FAISS's HNSW")
		hnswM      = flag.Int("hnsw_m", 32, "-mode assign: M of FAISS's HNSW")
		forestMaxK = flag.Int("forest_max_k", 0, "-mode assign: no forest above this K (0: always)")
		hnswMaxK   = flag.Int("hnsw_max_k", 100000, "-mode assign: no FAISS HNSW above this K, whose one-thread build takes long (0: always)")
		codebooks  = flag.String("codebook", "", "-mode objective: comma-separated globs of runs' codebook Parquet files (<run>/codebook-*.parquet), each measured on -eval descriptors of the images under -eth80 (photos none of the vocabularies was trained on)")
		features   = flag.String("features", "", "-mode assign: draw queries and words from the SIFT descriptors of these features Parquet files (a glob, e.g. <run>/features-*.parquet) instead of ETH-80: -queries from one photo in 10, words from the others")
	)
	flag.Parse()
	log.SetFlags(0)
	kList, err := ints(*ks)
	if err != nil {
		log.Fatalf("-k: %v", err)
	}
	sweepList, err := ints(*sweep)
	if err != nil {
		log.Fatalf("-sweep: %v", err)
	}
	initMethod, err := kmeans.ParseInit(*initName)
	if err != nil {
		log.Fatalf("-init: %v", err)
	}
	exactList := strings.Split(*exactWith, ",")
	for _, m := range exactList {
		if m != "go" && m != "faiss" {
			log.Fatalf("-exact %q: want go, faiss or both, comma-separated", *exactWith)
		}
	}
	if *faissThr < 1 {
		log.Fatalf("-faiss_threads %d: want at least 1", *faissThr)
	}

	probeList, err := ints(*probes)
	if err != nil {
		log.Fatalf("-probes: %v", err)
	}
	if *mode == "objective" {
		if *codebooks == "" {
			log.Fatalf("-mode objective needs -codebook")
		}
		desc, err := eth80Descriptors(*eth80, *cache)
		if err != nil {
			log.Fatal(err)
		}
		pts := subset(augment(desc, len(desc)/dim, 0, *seed), *eval, *seed+1)
		fmt.Printf("held-out: %d of the %d SIFT descriptors of the images under %s; command: %s\n", len(pts)/dim, len(desc)/dim, *eth80, strings.Join(os.Args, " "))
		for _, p := range strings.Split(*codebooks, ",") {
			if err := heldOutObjective(p, pts, *workers); err != nil {
				log.Fatal(err)
			}
		}
		return
	}
	if *mode == "assign" {
		if *data != "eth80" {
			log.Fatalf("-mode assign needs -data eth80 (or -features)")
		}
		if *wordsFrom != "sample" && *wordsFrom != "lloyd" {
			log.Fatalf("-words %q: want sample or lloyd", *wordsFrom)
		}
		cfg := assignConfig{ks: kList, queries: *queries, words: *wordsFrom, wordsIters: *wordsIters, pool: *n, jitter: *jitter, seed: *seed,
			trees: *trees, leaf: *leaf, probes: probeList, lists: *lists, refChecks: *refChecks, hnswM: *hnswM,
			python: *python, faissThreads: *faissThr, forestMaxK: *forestMaxK, faissHNSWMaxK: *hnswMaxK}
		if cfg.checks, err = ints(*sweep); err != nil {
			log.Fatalf("-sweep: %v", err)
		}
		if cfg.faissProbes, err = ints(*faissPr); err != nil {
			log.Fatalf("-faiss_probes: %v", err)
		}
		if cfg.faissEF, err = ints(*faissEF); err != nil {
			log.Fatalf("-faiss_ef: %v", err)
		}
		if *faissANNs != "" {
			cfg.faiss = strings.Split(*faissANNs, ",")
		}
		var qb, rest []byte
		if *features != "" {
			pool := slices.Max(kList)
			if *wordsFrom == "lloyd" {
				pool = max(pool, *n)
			}
			c := start()
			var photos, total int
			qb, rest, photos, total, err = featureDescriptors(*features, *queries, pool, *seed)
			if err != nil {
				log.Fatal(err)
			}
			wall, cpu := c.elapsed()
			fmt.Printf("assignment: %d queries from one photo in %d, words from %d descriptors of the others (-words %s); %d descriptors of %d photos read from %s in %.1f s wall, %.1f s CPU\n",
				len(qb)/dim, queryImageShare, len(rest)/dim, *wordsFrom, total, photos, *features, wall, cpu)
		} else {
			desc, err := eth80Descriptors(*eth80, *cache)
			if err != nil {
				log.Fatal(err)
			}
			qb, rest = splitQueries(desc, *queries, *seed)
			fmt.Printf("assignment: %d real ETH-80 descriptors as queries; words from the other %d (-words %s)\n", len(qb)/dim, len(rest)/dim, *wordsFrom)
		}
		fmt.Printf("machine: GOMAXPROCS=%d; command: %s\n", runtime.GOMAXPROCS(0), strings.Join(os.Args, " "))
		runAssign(qb, rest, cfg)
		return
	} else if *mode != "lloyd" {
		log.Fatalf("-mode %q: want lloyd or assign", *mode)
	}
	indexList := strings.Split(*index, ",")
	for _, x := range indexList {
		if x != "forest" && x != "ivf" {
			log.Fatalf("-index %q: want forest, ivf or both, comma-separated", *index)
		}
	}

	t0 := time.Now()
	var pts []float32
	switch *data {
	case "eth80":
		desc, err := eth80Descriptors(*eth80, *cache)
		if err != nil {
			log.Fatal(err)
		}
		pts = augment(desc, *n, *jitter, *seed)
		fmt.Printf("data: %d descriptors from %d ETH-80 SIFT descriptors (jitter σ=%g on reuse), %.1fs\n", *n, len(desc)/dim, *jitter, time.Since(t0).Seconds())
	case "synthetic":
		pts = synthetic(*n, *seed)
		fmt.Printf("data: %d synthetic descriptors around %d centres\n", *n, max(1, *n/50))
	default:
		log.Fatalf("-data %q: want eth80 or synthetic", *data)
	}
	fmt.Printf("machine: GOMAXPROCS=%d; command: %s\n", runtime.GOMAXPROCS(0), strings.Join(os.Args, " "))
	checkList, err := ints(*checks)
	if err != nil {
		log.Fatalf("-checks: %v", err)
	}

	for _, k := range kList {
		fmt.Printf("\n== K = %d, N = %d\n", k, len(pts)/dim)
		fopt := nn.ForestOptions{Trees: *trees, LeafSize: *leaf, Checks: checkList[0], Seed: *seed}
		opt := kmeans.Options{K: k, MaxIter: *iters, Seed: *seed, Workers: *workers, Init: initMethod, InitSample: *initSample, Reseed: kmeans.ReseedSplit, Forest: fopt}
		c := start()
		cent, err := kmeans.Initialize(pts, dim, opt)
		if err != nil {
			log.Fatal(err)
		}
		wall, cpu := c.elapsed()
		fmt.Printf("init %s (sample %d): %.1f s wall, %.1f s CPU\n", *initName, *initSample, wall, cpu)
		evalPts := subset(pts, *eval, *seed+1)

		type run struct {
			name              string
			res               kmeans.Result
			wall, cpu         float64 // per assignment pass
			evalJ             float64
			extrapolated, set bool
		}
		train := func(name string, o kmeans.Options) run {
			c := start()
			res, err := kmeans.TrainFrom(pts, dim, cent, o)
			if err != nil {
				log.Fatal(err)
			}
			wall, cpu := c.elapsed()
			passes := float64(res.Iterations + 1)
			return run{name: name, res: res, wall: wall / passes, cpu: cpu / passes, evalJ: objective(res.Centroids, evalPts, *workers), set: true}
		}
		var akm []run
		for _, x := range indexList {
			if x == "ivf" {
				for _, p := range probeList {
					o := opt
					o.Approx, o.Index, o.IVF = true, kmeans.IndexIVF, nn.IVFOptions{Lists: *lists, Probes: p, Seed: *seed}
					akm = append(akm, train(fmt.Sprintf("akm ivf probes=%d", p), o))
				}
				continue
			}
			for _, ch := range checkList {
				o := opt
				o.Approx = true
				o.Forest.Checks = ch
				akm = append(akm, train(fmt.Sprintf("akm checks=%d", ch), o))
			}
		}
		// exacts holds one run per -exact method, in order; the first is
		// the reference of the speed-ups.
		var exacts []run
		for _, m := range exactList {
			if *exactIters == 0 {
				break
			}
			n := float64(len(pts) / dim)
			switch m {
			case "faiss":
				ref, err := startFAISS(*python, *faissThr, pts, dim)
				if err != nil {
					log.Fatal(err)
				}
				c := start()
				res, refCPU, err := lloydFAISS(ref, pts, cent, dim, k, *exactIters)
				if err != nil {
					log.Fatal(err)
				}
				wall, cpu := c.elapsed()
				if err := ref.close(); err != nil {
					log.Fatalf("faiss: %v", err)
				}
				passes := float64(res.Iterations + 1)
				r := run{name: "exact (faiss)", res: res, wall: wall / passes, cpu: (cpu + refCPU) / passes, evalJ: objective(res.Centroids, evalPts, *workers), set: true}
				exacts = append(exacts, r)
				fmt.Printf("faiss exhaustive assignment: %.0f desc/s wall, %.0f desc/CPU-s (its CPU time: %.1f s of %.1f s per pass)\n",
					n/r.wall, n/(refCPU/passes), refCPU/passes, r.cpu)
			case "go":
				o := opt
				o.MaxIter = *exactIters
				r := train("exact (go)", o)
				exacts = append(exacts, r)
				fmt.Printf("go exhaustive assignment (nn.Exact): %.0f desc/s wall, %.0f desc/CPU-s (%.1f s CPU per pass, update included)\n",
					n/r.wall, n/r.cpu, r.cpu)
			}
		}

		// Assignment throughput and recall against the centroids of the
		// first AKM run, on one goroutine.
		final := akm[0].res.Centroids
		q := subset(pts, *queries, *seed+2)
		nq := len(q) / dim
		exLab := make([]int32, nq)
		exDist := make([]float32, nq)
		for i := range exLab {
			exLab[i] = -1
		}
		c = start()
		for i := range exLab {
			c, d := nn.Nearest(final, dim, q[i*dim:(i+1)*dim])
			exLab[i], exDist[i] = int32(c), d
		}
		exWall, exCPU := c.elapsed()
		bLab, bDist := make([]int32, nq), make([]float32, nq)
		c = start()
		nn.NewExact(final, dim).Assign(q, bLab, bDist, nil)
		bWall, bCPU := c.elapsed()
		if !slices.Equal(bLab, exLab) || !slices.Equal(bDist, exDist) {
			log.Fatalf("nn.Exact and nn.Nearest disagree on the %d queries", nq)
		}
		var exact run
		if len(exacts) > 0 {
			exact = exacts[0]
		} else {
			// One exact pass costs N exhaustive searches; spread over the
			// workers for wall time.
			w := *workers
			if w == 0 {
				w = runtime.GOMAXPROCS(0)
			}
			n := float64(len(pts) / dim)
			exact = run{name: "exact (extrapolated)", cpu: bCPU / float64(nq) * n, wall: bCPU / float64(nq) * n / float64(w), extrapolated: true}
			exacts = []run{exact}
		}

		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "lloyd\titers\twall s/iter\tCPU s/iter\tCPU speed-up\tJ (own)\tJ exact on eval\tvs exact lloyd\t")
		for _, r := range append(akm, exacts...) {
			iters, own, ev, vs := "-", "-", "-", "-"
			if !r.extrapolated {
				iters = strconv.Itoa(r.res.Iterations)
				own = fmt.Sprintf("%.1f", r.res.Objective)
				ev = fmt.Sprintf("%.1f", r.evalJ)
				if !exact.extrapolated {
					vs = fmt.Sprintf("%+.2f%%", 100*(r.evalJ/exact.evalJ-1))
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t\n", r.name, iters, r.wall, r.cpu, ratio(exact.cpu, r.cpu), own, ev, vs)
		}
		tw.Flush()
		fmt.Printf("(s/iter: training time over iterations+1 assignment passes, forest builds and updates included; J exact on %d points)\n", len(evalPts)/dim)

		tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "assign (1 goroutine)\tdesc/s wall\tdesc/CPU-s\tCPU speed-up\trecall@1\tmean dist ratio\tdistances/query\t")
		fmt.Fprintf(tw, "exhaustive (Assign)\t%.0f\t%.0f\t1.0\t1.000\t1.0000\t%d\t\n", float64(nq)/exWall, float64(nq)/exCPU, k)
		fmt.Fprintf(tw, "exhaustive (Exact)\t%.0f\t%.0f\t%s\t1.000\t1.0000\t%d\t\n", float64(nq)/bWall, float64(nq)/bCPU, ratio(exCPU, bCPU), k)
		for _, ch := range sweepList {
			o := fopt
			o.Checks = ch
			f, err := nn.NewForest(final, dim, o)
			if err != nil {
				log.Fatal(err)
			}
			var s nn.Search
			hit, checked := 0, 0
			var sum, exSum float64
			c = start()
			for i := range nq {
				_, d := f.Nearest(q[i*dim:(i+1)*dim], &s)
				if d == exDist[i] {
					hit++
				}
				checked += s.Checked
				sum += float64(d)
				exSum += float64(exDist[i])
			}
			wall, cpu := c.elapsed()
			fmt.Fprintf(tw, "forest checks=%d\t%.0f\t%.0f\t%s\t%.3f\t%.4f\t%d\t\n", ch, float64(nq)/wall, float64(nq)/cpu, ratio(exCPU, cpu), float64(hit)/float64(nq), sum/exSum, checked/nq)
		}
		tw.Flush()
		f, _ := nn.NewForest(final, dim, fopt)
		fmt.Printf("(%d training descriptors as queries against the centroids of %s)\n", nq, akm[0].name)
		fmt.Printf("memory: centroids %.1f MB, forest %.1f MB (%d trees, leaves ≤ %d)\n", float64(4*len(final))/1e6, float64(f.Bytes())/1e6, *trees, *leaf)
	}
}

// clock measures wall and process CPU time from its start.
type clock struct {
	wall time.Time
	cpu  time.Duration
}

func start() clock {
	cpu, _ := cpuclock.Process() // 0 where unavailable: the tables then show wall time only
	return clock{time.Now(), cpu}
}

// elapsed returns the wall and CPU seconds since c started.
func (c clock) elapsed() (wall, cpu float64) {
	now, _ := cpuclock.Process()
	return time.Since(c.wall).Seconds(), (now - c.cpu).Seconds()
}

// ratio formats a/b, or "-" without b.
func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", a/b)
}

// objective returns the exact mean squared distance from pts to cent.
func objective(cent, pts []float32, workers int) float64 {
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	n := len(pts) / dim
	lab := make([]int32, n)
	dist := make([]float32, n)
	e := nn.NewExact(cent, dim)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { e.Assign(pts[lo*dim:hi*dim], lab[lo:hi], dist[lo:hi], nil) })
	}
	wg.Wait()
	var s float64
	for _, d := range dist {
		s += float64(d)
	}
	return s / float64(n)
}

// subset returns m points of pts drawn without replacement (all if m ≥ n).
func subset(pts []float32, m int, seed uint64) []float32 {
	n := len(pts) / dim
	if m >= n {
		return pts
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	idx := rng.Perm(n)[:m]
	slices.Sort(idx)
	out := make([]float32, 0, m*dim)
	for _, i := range idx {
		out = append(out, pts[i*dim:(i+1)*dim]...)
	}
	return out
}

// ints parses a comma-separated list of positive integers.
func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// augment returns n descriptors as float32: desc in turn, every reuse
// jittered.
func augment(desc []byte, n int, sigma float64, seed uint64) []float32 {
	m := len(desc) / dim
	rng := rand.New(rand.NewPCG(seed, 4))
	out := make([]float32, n*dim)
	for i := range n {
		src := desc[(i%m)*dim : (i%m+1)*dim]
		dst := out[i*dim : (i+1)*dim]
		for j, b := range src {
			v := float64(b)
			if i >= m {
				v = math.Round(v + sigma*rng.NormFloat64())
				v = min(max(v, 0), 255)
			}
			dst[j] = float32(v)
		}
	}
	return out
}

// synthetic returns n byte-valued descriptors around n/50 random centres.
func synthetic(n int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 5))
	c := max(1, n/50)
	cent := make([]float64, c*dim)
	for i := range cent {
		cent[i] = 128 * rng.Float64()
	}
	out := make([]float32, n*dim)
	for i := range n {
		k := rng.IntN(c)
		for j := range dim {
			v := math.Round(cent[k*dim+j] + 20*rng.NormFloat64())
			out[i*dim+j] = float32(min(max(v, 0), 255))
		}
	}
	return out
}

// eth80Descriptors returns the SIFT descriptors of every image under dir,
// in path order, reading them from cache if it exists and writing it
// otherwise.
func eth80Descriptors(dir, cache string) ([]byte, error) {
	if b, err := os.ReadFile(cache); err == nil && len(b) > 0 && len(b)%dim == 0 {
		return b, nil
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && slices.Contains([]string{".jpg", ".jpeg", ".png", ".gif"}, strings.ToLower(filepath.Ext(p))) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, errors.New("no images under " + dir + " (give -eth80, or -data synthetic)")
	}
	slices.Sort(files)
	log.Printf("extracting SIFT from %d images (once; cached in %s)", len(files), cache)
	per := make([][]byte, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	w := runtime.GOMAXPROCS(0)
	for g := range w {
		wg.Go(func() {
			e, err := sift.NewExtractor(sift.DefaultOptions())
			if err != nil {
				errs[g] = err
				return
			}
			var im *sift.Image
			for i := g; i < len(files); i += w {
				r, err := os.Open(files[i])
				if err != nil {
					errs[i] = err
					continue
				}
				img, _, err := image.Decode(bufio.NewReader(r))
				r.Close()
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", files[i], err)
					continue
				}
				im = sift.FromImage(img, im)
				_, per[i] = e.Extract(im)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var all []byte
	for _, d := range per {
		all = append(all, d...)
	}
	if err := os.WriteFile(cache, all, 0o644); err != nil {
		log.Printf("not caching descriptors: %v", err)
	}
	return all, nil
}
