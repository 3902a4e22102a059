package main

import (
	"bufio"
	_ "embed"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

//go:embed faiss_ann.py
var faissANNScript []byte

// assignConfig is what -mode assign measures.
type assignConfig struct {
	ks             []int
	queries        int
	words          string // sample or lloyd
	wordsIters     int
	pool           int // descriptors the lloyd words are trained on
	jitter         float64
	seed           uint64
	trees, leaf    int
	checks, probes []int
	lists          int
	refChecks      int
	faiss          []string // ivf, hnsw
	faissProbes    []int
	faissEF        []int
	hnswM          int
	python         string
	faissThreads   int
	forestMaxK     int // skip the forest above this K (0: never)
	faissHNSWMaxK  int
	faissIVFMaxK   int
}

// splitQueries draws nq of the descriptors desc (at most half of them) as
// queries, in a random order, and returns them and the others, also
// shuffled.
func splitQueries(desc []byte, nq int, seed uint64) (queries, rest []byte) {
	m := len(desc) / dim
	rng := rand.New(rand.NewPCG(seed, 6))
	perm := rng.Perm(m)
	nq = min(nq, m/2)
	queries = make([]byte, 0, nq*dim)
	for _, i := range perm[:nq] {
		queries = append(queries, desc[i*dim:(i+1)*dim]...)
	}
	rest = make([]byte, 0, (m-nq)*dim)
	for _, i := range perm[nq:] {
		rest = append(rest, desc[i*dim:(i+1)*dim]...)
	}
	return queries, rest
}

// runAssign measures word assignment on one goroutine: for every K, the
// recall@1 and descriptors per CPU-second of the forest (one search per
// -sweep checks value), the IVF (one per -probes value) and FAISS's IVF and
// HNSW on the same words, against the exact nearest words of nn.Exact.
// The queries qb are real descriptors that none of the words was drawn or
// trained from; words come from rest (see augment).
func runAssign(qb, rest []byte, cfg assignConfig) {
	nq := len(qb) / dim
	qf := make([]float32, len(qb))
	for i, b := range qb {
		qf[i] = float32(b)
	}

	for _, k := range cfg.ks {
		var words []float32
		c := start()
		switch cfg.words {
		case "sample":
			// Every descriptor of rest once before any is reused, each reuse
			// jittered (augment), in a random order.
			words = augment(rest, k, cfg.jitter, cfg.seed+uint64(k))
		case "lloyd":
			pts := augment(rest, max(cfg.pool, k), cfg.jitter, cfg.seed)
			opt := kmeans.Options{K: k, MaxIter: cfg.wordsIters, Seed: cfg.seed, Reseed: kmeans.ReseedSplit}
			res, err := kmeans.Train(pts, dim, opt)
			if err != nil {
				fatalf("lloyd words: %v", err)
			}
			words = res.Centroids
		}
		wall, cpu := c.elapsed()
		fmt.Printf("\n== K = %d words (%s, %.1f s wall, %.1f s CPU), %d queries\n", k, cfg.words, wall, cpu, nq)

		// Exact answers, on one goroutine.
		exL := make([]int32, nq)
		exD := make([]float32, nq)
		c = start()
		nn.NewExact(words, dim).Assign(qf, exL, exD, nil)
		_, exCPU := c.elapsed()

		type row struct {
			name, settings     string
			recall, cpu, build float64 // cpu: seconds for all the queries
			bytes              int
		}
		var rows []row
		score := func(labels []int32) float64 {
			hit := 0
			for i, l := range labels {
				if l < 0 || int(l) >= k {
					continue
				}
				d := sqDistF(words[int(l)*dim:(int(l)+1)*dim], qf[i*dim:(i+1)*dim])
				if d <= exD[i] {
					hit++
				}
			}
			return float64(hit) / float64(nq)
		}
		rows = append(rows, row{name: "exact", settings: "nn.Exact", recall: 1, cpu: exCPU, bytes: 4 * len(words)})

		labels := make([]int32, nq)
		if cfg.forestMaxK == 0 || k <= cfg.forestMaxK {
			for _, ch := range cfg.checks {
				c := start()
				f, err := nn.NewForest(words, dim, nn.ForestOptions{Trees: cfg.trees, LeafSize: cfg.leaf, Checks: ch, Seed: cfg.seed})
				if err != nil {
					fatalf("forest: %v", err)
				}
				_, build := c.elapsed()
				var s nn.Search
				c = start()
				for i := range nq {
					l, _ := f.NearestBytes(qb[i*dim:(i+1)*dim], &s)
					labels[i] = int32(l)
				}
				_, cpu := c.elapsed()
				rows = append(rows, row{name: "forest", settings: fmt.Sprintf("trees=%d leaf=%d checks=%d", cfg.trees, cfg.leaf, ch), recall: score(labels), cpu: cpu, build: build, bytes: f.Bytes() + 4*len(words)})
			}
		}
		// One IVF per probes value: the default lists depend on them.
		for _, p := range cfg.probes {
			c := start()
			v, err := kmeans.TrainIVF(words, dim, nn.IVFOptions{Lists: cfg.lists, Probes: p, Seed: cfg.seed})
			if err != nil {
				fatalf("ivf: %v", err)
			}
			_, build := c.elapsed()
			var s nn.IVFScratch
			out := make([]uint32, 0, nq)
			c = start()
			out = v.QuantizeBytes(out, qb, &s)
			_, cpu := c.elapsed()
			for i, w := range out {
				labels[i] = int32(w)
			}
			o := v.Options()
			rows = append(rows, row{name: "ivf", settings: fmt.Sprintf("lists=%d probes=%d batch=%d", o.Lists, o.Probes, o.Batch), recall: score(labels), cpu: cpu, build: build, bytes: v.Bytes() + 4*len(words)})
		}
		var specs []string
		for _, f := range cfg.faiss {
			switch {
			case f == "ivf" && (cfg.faissIVFMaxK == 0 || k <= cfg.faissIVFMaxK):
				nl := cfg.lists
				if nl == 0 {
					nl = nn.DefaultLists(k, 8)
				}
				specs = append(specs, fmt.Sprintf("ivf:%d:%s", nl, joinInts(cfg.faissProbes)))
			case f == "hnsw" && (cfg.faissHNSWMaxK == 0 || k <= cfg.faissHNSWMaxK):
				specs = append(specs, fmt.Sprintf("hnsw:%d:%s", cfg.hnswM, joinInts(cfg.faissEF)))
			}
		}
		if len(specs) > 0 {
			res, err := faissANN(cfg.python, cfg.faissThreads, words, qf, strings.Join(specs, ";"))
			if err != nil {
				fatalf("faiss: %v", err)
			}
			for _, r := range res {
				rows = append(rows, row{name: "faiss", settings: r.name, recall: score(r.labels), cpu: r.cpu, build: r.build, bytes: r.bytes})
			}
		}

		var ref float64
		for _, r := range rows {
			if r.name == "forest" && strings.HasSuffix(r.settings, fmt.Sprintf("checks=%d", cfg.refChecks)) {
				ref = r.cpu
			}
		}
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "words\tstructure\tsettings\trecall@1\tµs/desc (1 core)\tdesc/CPU-s\tvs forest\tbuild CPU s\tindex MB\t")
		for _, r := range rows {
			vs := "-"
			if ref > 0 {
				vs = fmt.Sprintf("%.1f×", ref/r.cpu)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\t%.2f\t%.0f\t%s\t%.1f\t%.1f\t\n", k, r.name, r.settings, r.recall, 1e6*r.cpu/float64(nq), float64(nq)/r.cpu, vs, r.build, float64(r.bytes)/1e6)
		}
		tw.Flush()
		fmt.Printf("(vs forest: CPU time of the forest with checks=%d over this row's, same run; recall@1: the word returned is at the exact nearest distance; index MB: the words' float32 copy included, FAISS's as serialised)\n", cfg.refChecks)
		var ours, theirs []curvePoint
		for _, r := range rows {
			p := curvePoint{name: r.name + " " + r.settings, recall: r.recall, rate: float64(nq) / r.cpu}
			switch {
			case r.name == "ivf":
				ours = append(ours, p)
			case r.name == "faiss" && strings.HasPrefix(r.settings, "faiss ivf"):
				theirs = append(theirs, p)
			}
		}
		equalRecall(os.Stdout, ours, theirs)
	}
}

// sqDistF is the squared distance of a and b as Nearest (and so Exact)
// computes it, to the last bit.
func sqDistF(a, b []float32) float32 {
	_, d := nn.Nearest(a, len(a), b)
	return d
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// annResult is one search setting of faiss_ann.py.
type annResult struct {
	name       string
	build, cpu float64
	bytes      int // the index's serialised size
	labels     []int32
}

// faissANN runs faiss_ann.py on the words and queries with the given
// settings, on threads threads, and returns one result per search setting.
func faissANN(python string, threads int, words, queries []float32, specs string) ([]annResult, error) {
	dir, err := os.MkdirTemp("", "akmbench-ann")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "faiss_ann.py")
	wp, qp := filepath.Join(dir, "words.f32"), filepath.Join(dir, "queries.f32")
	if err := os.WriteFile(script, faissANNScript, 0o644); err != nil {
		return nil, err
	}
	if err := writeFloats(wp, words); err != nil {
		return nil, err
	}
	if err := writeFloats(qp, queries); err != nil {
		return nil, err
	}
	nq := len(queries) / dim
	cmd := exec.Command(python, script, wp, qp, strconv.Itoa(len(words)/dim), strconv.Itoa(nq), strconv.Itoa(dim), specs)
	cmd.Stderr = os.Stderr
	t := strconv.Itoa(threads)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+t, "OPENBLAS_NUM_THREADS="+t)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (it needs python3-faiss; give -python): %w", python, err)
	}
	var res []annResult
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4+nq {
			return nil, fmt.Errorf("faiss_ann.py: a line of %d fields, want %d", len(f), 4+nq)
		}
		r := annResult{name: strings.ReplaceAll(f[0], "_", " "), labels: make([]int32, nq)}
		if r.build, err = strconv.ParseFloat(f[1], 64); err != nil {
			return nil, err
		}
		if r.cpu, err = strconv.ParseFloat(f[2], 64); err != nil {
			return nil, err
		}
		if r.bytes, err = strconv.Atoi(f[3]); err != nil {
			return nil, err
		}
		for i, s := range f[4:] {
			l, err := strconv.Atoi(s)
			if err != nil {
				return nil, err
			}
			r.labels[i] = int32(l)
		}
		res = append(res, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("faiss_ann.py: %w", err)
	}
	return res, nil
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "akmbench: "+format+"\n", args...)
	os.Exit(1)
}
