// Command siftbench compares transforms/sift with OpenCV's SIFT on real
// photographs: matching quality under known image transformations, and
// single-threaded speed. It prints both tables in a few minutes:
//
//	go run ./cmd/siftbench --images DIR
//
// where DIR is a directory of photos (searched recursively; the numbers in
// transforms/sift's package doc are for the ETH-80 photographs).
//
// OpenCV is only a reference to measure against: the driver runs
// opencv_sift.py (embedded in the binary) with --python, by default Debian's
// /usr/bin/python3 with python3-opencv (apt-get install python3-opencv).
//
// Test images are 4:3 "photos" made as 4×3 mosaics of different photos from
// --images, chosen by --seed: 640×480 mosaics of photos shrunk to 160×160
// tiles (Catmull-Rom, which x/image widens to antialias when shrinking), and
// 1024×768 mosaics of 256×256 ETH-80 photos at their own resolution. They
// are written as 8-bit gray PNGs under --work, and both extractors read the
// same files: ours through image/png and sift.FromImage, OpenCV through
// cv2.imread in opencv_sift.py, which uses cv2.SIFT_create() with default
// parameters and cv2.setNumThreads(1), and hands keypoints and descriptors
// back in a small binary file.
//
// Quality: each of --quality_n reference mosaics (--quality_size) is
// transformed by every member of seven families (rotation, scale, affine,
// perspective, blur, JPEG, light; see families), the geometric ones warped
// here from the exact homography (Keys bicubic, with a Gaussian prefilter
// where the warp shrinks). Every extractor's keypoints and descriptors are
// scored by the same Go code; evaluate documents the exact definitions of
// repeatability and matching score, and the output repeats them.
//
// Speed: --speed_n mosaics of each of --sizes, --reps repetitions; every
// image goes through our Extract and OpenCV's detectAndCompute back to back,
// in alternating order, on an image decoded beforehand, with GOMAXPROCS=1.
// Each pair gives a ratio OpenCV time / our time (above 1: ours is faster),
// both by thread CPU time (CLOCK_THREAD_CPUTIME_ID on both sides, which
// leaves out time spent waiting for a core on a busy machine) and by wall
// clock; printed are the medians and quartiles of the ratios, the median
// ms/image, keypoints per image and the scratch memory an Extractor keeps.
//
// Photos: with --photos, what a JPEG photo costs describe against OpenCV,
// decoding included, per size (photoSpeed):
//
//	go run ./cmd/siftbench --quality_n 0 --reps 0 --photos '/tmp/dec/flickr/images/*/*.jpg,/tmp/dec/cam/images/*/*.jpg'
package main

import (
	"flag"
	"fmt"
	"image/png"
	"log"
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
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/sift"
)

var (
	imagesDir   = flag.String("images", "../shared/data/eth80/images", "directory of photos (.jpg, .png; searched recursively)")
	qualityN    = flag.Int("quality_n", 6, "reference mosaics for the quality benchmark (0 skips it)")
	qualitySize = flag.String("quality_size", "640x480", "size of the quality benchmark's mosaics, WxH (W:H = 4:3)")
	speedN      = flag.Int("speed_n", 8, "mosaics per size for the speed benchmark")
	sizes       = flag.String("sizes", "640x480,1024x768", "comma-separated sizes for the speed benchmark")
	reps        = flag.Int("reps", 9, "speed repetitions (0 skips the speed benchmark)")
	seed        = flag.Uint64("seed", 1, "seed for choosing photos")
	rootSIFT    = flag.Bool("rootsift", true, "also score our extractor with Options.RootSIFT")
	detail      = flag.Bool("detail", false, "print a quality row for every transformation, not only per family")
	work        = flag.String("work", "", "directory for the images and OpenCV's outputs (default: a new temporary directory, removed at exit)")
	python      = flag.String("python", "/usr/bin/python3", "Python interpreter with cv2 (Debian's python3-opencv)")
	cpuProfile  = flag.String("cpuprofile", "", "write a CPU profile of our extractor's speed runs to this file")
	photoGlobs  = flag.String("photos", "", "comma-separated globs of JPEG photos for the decode + SIFT table against OpenCV (empty skips it)")
	photoReps   = flag.Int("photo_reps", 3, "repetitions of each photo in the decode + SIFT table")
	dctScale    = flag.Bool("dct_scale", describe.DefaultOptions().DCTScale, "decode + SIFT table: decode JPEGs DCT-domain scaled as describe's --dct_scale does (false: at full size)")
	siftDouble  = flag.Bool("sift_double", true, "decode + SIFT table: double the image before SIFT (describe's --sift_double)")
	maxSide     = flag.Int("max_side", 0, "decode + SIFT table: downscale photos whose longer side exceeds this, both sides (0: describe's default)")
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("siftbench: ")
	flag.Parse()

	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "siftbench-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	if strings.ContainsAny(dir, " \t\n") {
		log.Fatalf("--work %q: the OpenCV line protocol needs a path without spaces", dir)
	}
	if err := run(dir); err != nil {
		log.Print(err)
		if *work == "" {
			os.RemoveAll(dir)
		}
		os.Exit(1)
	}
}

func run(dir string) error {
	photos, err := listPhotos(*imagesDir)
	if err != nil {
		return err
	}
	cv, err := startOpenCV(*python, dir)
	if err != nil {
		return err
	}
	defer cv.close()
	fmt.Printf("siftbench: %d photos under %s; OpenCV %s; Go %s, GOARCH=%s\n\n",
		len(photos), *imagesDir, cv.version, runtime.Version(), runtime.GOARCH)

	if *qualityN > 0 {
		w, h, err := parseSize(*qualitySize)
		if err != nil {
			return err
		}
		if err := quality(cv, newPhotoPicker(photos, *seed), dir, w, h); err != nil {
			return err
		}
	}
	if *reps > 0 && *speedN > 0 {
		var ss [][2]int
		for _, s := range strings.Split(*sizes, ",") {
			w, h, err := parseSize(s)
			if err != nil {
				return err
			}
			ss = append(ss, [2]int{w, h})
		}
		// Its own picker, so that the speed images do not depend on the
		// quality flags.
		if err := speed(cv, newPhotoPicker(photos, *seed+1<<32), dir, ss); err != nil {
			return err
		}
	}
	if *photoGlobs != "" {
		if err := photoSpeed(cv, *photoGlobs, *photoReps); err != nil {
			return err
		}
	}
	return nil
}

func parseSize(s string) (int, int, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "x")
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || w < 64 || h < 48 || w%4 != 0 || h%3 != 0 {
		return 0, 0, fmt.Errorf("size %q: want WxH, W a multiple of 4 and H of 3, at least 64x48", s)
	}
	return w, h, nil
}

// readGray reads a PNG the way the pipeline reads images.
func readGray(path string) (*sift.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	im, err := png.Decode(f)
	if err != nil {
		return nil, err
	}
	return sift.FromImage(im, nil), nil
}

// extractor is one of the scored extractors.
type extractor struct {
	name string
	run  func(png string) (features, error)
}

func ours(name string, opt sift.Options) (extractor, error) {
	e, err := sift.NewExtractor(opt)
	if err != nil {
		return extractor{}, err
	}
	return extractor{name, func(png string) (features, error) {
		im, err := readGray(png)
		if err != nil {
			return features{}, err
		}
		kps, desc := e.Extract(im)
		return features{kps, desc}, nil
	}}, nil
}

func quality(cv *opencv, pick *photoPicker, dir string, w, h int) error {
	start := time.Now()
	exs := []extractor{}
	e, err := ours("ours", sift.DefaultOptions())
	if err != nil {
		return err
	}
	exs = append(exs, e)
	if *rootSIFT {
		opt := sift.DefaultOptions()
		opt.RootSIFT = true
		e, err := ours("ours RootSIFT", opt)
		if err != nil {
			return err
		}
		exs = append(exs, e)
	}
	exs = append(exs, extractor{"OpenCV", func(png string) (features, error) {
		return cv.extract(png, strings.TrimSuffix(png, ".png")+".cv.bin")
	}})

	vs := families(w, h)
	// scores[v][x] accumulates variant v for extractor x.
	scores := make([][]score, len(vs))
	for i := range scores {
		scores[i] = make([]score, len(exs))
	}
	for m := 0; m < *qualityN; m++ {
		ref, used, err := mosaic(pick, w, h)
		if err != nil {
			return err
		}
		if *detail {
			fmt.Fprintf(os.Stderr, "quality: mosaic %d from %s\n", m, strings.Join(used, " "))
		}
		refG := fromImage(ref)
		paths := []string{filepath.Join(dir, fmt.Sprintf("q%d-ref.png", m))}
		if err := writePNG(paths[0], ref); err != nil {
			return err
		}
		for i, v := range vs {
			g, err := v.make(refG)
			if err != nil {
				return fmt.Errorf("%s %s: %w", v.family, v.param, err)
			}
			p := filepath.Join(dir, fmt.Sprintf("q%d-%02d.png", m, i))
			if err := writePNG(p, g.toImage()); err != nil {
				return err
			}
			paths = append(paths, p)
		}
		// Each extractor runs on its own goroutine: the scoring is not
		// timed, and OpenCV runs in its own process anyway.
		feats := make([][]features, len(exs))
		errs := make([]error, len(exs))
		var wg sync.WaitGroup
		for x, ex := range exs {
			wg.Go(func() {
				for _, p := range paths {
					f, err := ex.run(p)
					if err != nil {
						errs[x] = fmt.Errorf("%s on %s: %w", ex.name, p, err)
						return
					}
					feats[x] = append(feats[x], f)
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		for i, v := range vs {
			for x := range exs {
				scores[i][x].add(evaluate(feats[x][0], feats[x][i+1], v.H, w, h))
			}
		}
		fmt.Fprintf(os.Stderr, "quality: mosaic %d/%d scored (%v)\n", m+1, *qualityN, time.Since(start).Round(time.Second))
	}

	fmt.Printf("Quality: %d reference %dx%d mosaics × %d transformations, each pair scored by the same Go code for every extractor.\n", *qualityN, w, h, len(vs))
	fmt.Printf("  A′, B′: keypoints of the reference and the transformed image whose mapping lies inside the other image, %g px from its edges;\n", margin)
	fmt.Printf("  a, b correspond if ‖H(a) − b‖ ≤ %g px and ‖a − H⁻¹(b)‖ ≤ %g px.\n", tol, tol)
	fmt.Println("  rep = size of a greedy one-to-one matching of corresponding A′, B′ keypoints (closest first) / min(|A′|, |B′|);")
	fmt.Printf("  MS  = a ∈ A′ whose nearest descriptor in B passes the ratio test (d₁ < %g·d₂) and corresponds / min(|A′|, |B′|);\n", ratio)
	fmt.Println("  both pooled over the pairs of a family (sums of numerators / sums of denominators); kp = mean keypoints per transformed image.")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "family\ttransformations\t"
	for _, metric := range []string{"rep", "MS", "kp"} {
		for _, ex := range exs {
			header += metric + " " + ex.name + "\t"
		}
	}
	fmt.Fprintln(tw, header)
	row := func(name, params string, s []score, pairs int) {
		line := name + "\t" + params + "\t"
		for _, x := range s {
			line += fmt.Sprintf("%.3f\t", x.Repeatability())
		}
		for _, x := range s {
			line += fmt.Sprintf("%.3f\t", x.MatchingScore())
		}
		for _, x := range s {
			line += fmt.Sprintf("%.0f\t", float64(x.nB)/float64(max(1, pairs)))
		}
		fmt.Fprintln(tw, line)
	}
	var order []string
	byFam := map[string][]int{}
	for i, v := range vs {
		if _, ok := byFam[v.family]; !ok {
			order = append(order, v.family)
		}
		byFam[v.family] = append(byFam[v.family], i)
	}
	all := make([]score, len(exs))
	for _, fam := range order {
		sum := make([]score, len(exs))
		var params []string
		for _, i := range byFam[fam] {
			params = append(params, vs[i].param)
			for x := range exs {
				sum[x].add(scores[i][x])
				all[x].add(scores[i][x])
			}
			if *detail {
				row("  "+fam, vs[i].param, scores[i], *qualityN)
			}
		}
		row(fam, strings.Join(params, ", "), sum, *qualityN*len(byFam[fam]))
	}
	row("all", "", all, *qualityN*len(vs))
	tw.Flush()
	fmt.Printf("(%v)\n\n", time.Since(start).Round(time.Second))
	return nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantiles returns the 25th, 50th and 75th percentiles of xs.
func quantiles(xs []float64) (q1, q2, q3 float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		f := p * float64(len(s)-1)
		i := int(f)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (f-float64(i))*(s[i+1]-s[i])
	}
	return at(0.25), at(0.5), at(0.75)
}

func speed(cv *opencv, pick *photoPicker, dir string, ss [][2]int) error {
	start := time.Now()
	// One thread for our side too (OpenCV has cv2.setNumThreads(1)), and
	// the same OS thread throughout, for its CPU clock.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, haveCPU := cpuclock.Thread()

	if *cpuProfile != "" {
		stop, err := startProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}

	fmt.Printf("Speed: single-threaded, %d mosaics per size × %d repetitions; every image through our Extract and OpenCV's detectAndCompute back to back, in alternating order, on the same decoded image\n", *speedN, *reps)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "size\tclock\tours ms/img\tOpenCV ms/img\tratio OpenCV/ours\t(quartiles)\tours kp/img\tOpenCV kp/img\tours scratch MB\t")
	for _, sz := range ss {
		w, h := sz[0], sz[1]
		var paths []string
		var imgs []*sift.Image
		for i := 0; i < *speedN; i++ {
			im, _, err := mosaic(pick, w, h)
			if err != nil {
				return err
			}
			p := filepath.Join(dir, fmt.Sprintf("s%dx%d-%d.png", w, h, i))
			if err := writePNG(p, im); err != nil {
				return err
			}
			g, err := readGray(p)
			if err != nil {
				return err
			}
			paths = append(paths, p)
			imgs = append(imgs, g)
		}

		// Scratch: what a fresh Extractor keeps after seeing these images.
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		e, err := sift.NewExtractor(sift.DefaultOptions())
		if err != nil {
			return err
		}
		ourKP, cvKP := 0, 0
		for i, im := range imgs {
			kps, _ := e.Extract(im)
			ourKP += len(kps)
			n, _, err := cv.time(paths[i], 1) // warms up OpenCV too
			if err != nil {
				return err
			}
			cvKP += n
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		scratch := float64(after.HeapAlloc) - float64(before.HeapAlloc)

		// One pair of runs per image and repetition; the ratio of each
		// pair is taken, as both ran within a fraction of a second of each
		// other, under the same load.
		var goWall, cvWall, goCPU, cvCPU, rWall, rCPU []float64
		for r := 0; r < *reps; r++ {
			for i, im := range imgs {
				var g, c timing
				for k := 0; k < 2; k++ {
					if (k == 0) == ((r+i)%2 == 0) {
						c0, _ := cpuclock.Thread()
						t0 := time.Now()
						e.Extract(im)
						g.wall = time.Since(t0)
						c1, _ := cpuclock.Thread()
						g.cpu = c1 - c0
					} else {
						_, ts, err := cv.time(paths[i], 1)
						if err != nil {
							return err
						}
						c = ts[0]
					}
				}
				goWall = append(goWall, g.wall.Seconds()*1000)
				cvWall = append(cvWall, c.wall.Seconds()*1000)
				rWall = append(rWall, c.wall.Seconds()/g.wall.Seconds())
				if haveCPU && g.cpu > 0 && c.cpu > 0 {
					goCPU = append(goCPU, g.cpu.Seconds()*1000)
					cvCPU = append(cvCPU, c.cpu.Seconds()*1000)
					rCPU = append(rCPU, c.cpu.Seconds()/g.cpu.Seconds())
				}
			}
		}
		runtime.KeepAlive(e)
		row := func(clock string, gs, cs, rs []float64, extra string) {
			q1, q2, q3 := quantiles(rs)
			fmt.Fprintf(tw, "%dx%d\t%s\t%.1f\t%.1f\t%.2f\t%.2f..%.2f\t%s\n", w, h, clock, median(gs), median(cs), q2, q1, q3, extra)
		}
		extra := fmt.Sprintf("%d\t%d\t%.1f\t", ourKP/len(imgs), cvKP/len(imgs), scratch/(1<<20))
		if len(rCPU) > 0 {
			row("thread CPU", goCPU, cvCPU, rCPU, extra)
			extra = "\t\t\t"
		}
		row("wall", goWall, cvWall, rWall, extra)
		fmt.Fprintf(os.Stderr, "speed: %dx%d done (%v)\n", w, h, time.Since(start).Round(time.Second))
	}
	tw.Flush()
	fmt.Printf("(medians over %d images × %d repetitions; the ratio is the median of per-pair ratios, > 1 means ours is faster; %v)\n", *speedN, *reps, time.Since(start).Round(time.Second))
	return nil
}
