package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bowline/bowline/transforms/cpuclock"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/sift"
)

// photoTiming is one run of one side on one photo.
type photoTiming struct {
	decode, sift timing
	keypoints    int
	size         string // the decoded photo's WxH
}

// photo runs OpenCV's photo command: reps runs of cv2.imread (grey),
// the MaxSide area resize and detectAndCompute on path.
func (cv *opencv) photo(path string, maxSide, reps int) ([]photoTiming, error) {
	f, err := cv.call("photo %s %d %d", path, maxSide, reps)
	if err != nil {
		return nil, err
	}
	if len(f) != 3+4*reps {
		return nil, fmt.Errorf("opencv_sift.py: photo: %d fields", len(f))
	}
	var ints [3]int
	for i := range ints {
		if ints[i], err = strconv.Atoi(f[i]); err != nil {
			return nil, fmt.Errorf("opencv_sift.py: photo: bad field %q", f[i])
		}
	}
	out := make([]photoTiming, reps)
	for r := range out {
		var t [4]time.Duration
		for i, s := range f[3+4*r : 3+4*r+4] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("opencv_sift.py: photo: bad time %q", s)
			}
			t[i] = time.Duration(v * 1e9)
		}
		out[r] = photoTiming{timing{t[0], t[1]}, timing{t[2], t[3]}, ints[0], fmt.Sprintf("%dx%d", ints[1], ints[2])}
	}
	return out, nil
}

// photoOptions are the options of our side of the photo table:
// describe's defaults, but doubling every image, as OpenCV's SIFT does, so
// that both sides run the same algorithm whatever describe's bound on
// doubling.
func photoOptions() describe.Options {
	opt := describe.DefaultOptions()
	opt.SIFT.DoubleImage, opt.SIFT.DoubleBelow = true, 0
	return opt
}

// photoSpeed prints, for the JPEGs the globs match, grouped by size, what
// a photo costs describe and OpenCV on one core: decoding (ours: reading
// the file and describe.Options.Decode: ingest.Decoder.DecodeLuma, at
// full size or DCT-scaled as describe does with --dct_scale;
// OpenCV: cv2.imread with IMREAD_GRAYSCALE, which reads the file too),
// SIFT (ours: sift.Extractor.ExtractImage of the decode, scaled or not, as
// describe calls it, with describe's default options, every image doubled as OpenCV
// doubles it unless --sift_double=false;
// OpenCV: the INTER_AREA resize to the same MaxSide and
// detectAndCompute), both together, and keypoints. Every photo and
// repetition runs both sides back to back, in alternating order; times
// are medians of thread CPU time (and wall time), ratios medians of the
// per-pair ratios OpenCV/ours (above 1: ours is faster).
func photoSpeed(cv *opencv, globs string, reps int) error {
	var paths []string
	for _, g := range strings.Split(globs, ",") {
		m, err := filepath.Glob(strings.TrimSpace(g))
		if err != nil {
			return err
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return fmt.Errorf("--photos %q matches no files", globs)
	}
	start := time.Now()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, ok := cpuclock.Thread(); !ok {
		return fmt.Errorf("photo speed: no thread CPU clock here")
	}

	opt := photoOptions()
	opt.DCTScale, opt.SIFT.DoubleImage = *dctScale, *siftDouble
	if *maxSide > 0 {
		opt.SIFT.MaxSide = *maxSide
	}
	e, err := sift.NewExtractor(opt.SIFT)
	if err != nil {
		return err
	}
	ours := func(path string) (photoTiming, error) {
		var t photoTiming
		c0, _ := cpuclock.Thread()
		t0 := time.Now()
		data, err := os.ReadFile(path)
		if err != nil {
			return t, err
		}
		l, err := opt.Decode(data)
		if err != nil {
			return t, fmt.Errorf("%s: %w", path, err)
		}
		t1 := time.Now()
		c1, _ := cpuclock.Thread()
		kps, _, err := e.ExtractImage(context.Background(), l.Image, l.Width, l.Height)
		l.Release()
		if err != nil {
			return t, fmt.Errorf("%s: %w", path, err)
		}
		t2 := time.Now()
		c2, _ := cpuclock.Thread()
		t.decode = timing{t1.Sub(t0), c1 - c0}
		t.sift = timing{t2.Sub(t1), c2 - c1}
		t.keypoints = len(kps)
		t.size = fmt.Sprintf("%dx%d", l.Width, l.Height)
		return t, nil
	}

	// Per size: every run of each side, and the per-pair ratios.
	type series struct {
		photos               int
		our, cv              []photoTiming
		rDecode, rSIFT, rAll []float64
	}
	bySize := map[string]*series{}
	var sizes []string
	for i, p := range paths {
		// Warm-up: each side once, untimed.
		warm, err := ours(p)
		if err != nil {
			return err
		}
		warmCV, err := cv.photo(p, opt.SIFT.MaxSide, 1)
		if err != nil {
			return err
		}
		if warm.size != warmCV[0].size {
			return fmt.Errorf("%s: ours decodes %s, OpenCV %s", p, warm.size, warmCV[0].size)
		}
		s := bySize[warm.size]
		if s == nil {
			s = &series{}
			bySize[warm.size] = s
			sizes = append(sizes, warm.size)
		}
		s.photos++
		for r := 0; r < reps; r++ {
			var g, c photoTiming
			for k := 0; k < 2; k++ {
				if (k == 0) == ((r+i)%2 == 0) {
					if g, err = ours(p); err != nil {
						return err
					}
				} else {
					ts, err := cv.photo(p, opt.SIFT.MaxSide, 1)
					if err != nil {
						return err
					}
					c = ts[0]
				}
			}
			s.our = append(s.our, g)
			s.cv = append(s.cv, c)
			s.rDecode = append(s.rDecode, c.decode.cpu.Seconds()/g.decode.cpu.Seconds())
			s.rSIFT = append(s.rSIFT, c.sift.cpu.Seconds()/g.sift.cpu.Seconds())
			s.rAll = append(s.rAll, (c.decode.cpu+c.sift.cpu).Seconds()/(g.decode.cpu+g.sift.cpu).Seconds())
		}
		fmt.Fprintf(os.Stderr, "photo speed: %s done (%v)\n", p, time.Since(start).Round(time.Second))
	}

	fmt.Printf("Photos: per photo, one core (GOMAXPROCS=1, cv2.setNumThreads(1)), thread CPU time (wall in brackets), medians over photos × %d repetitions; ours: os.ReadFile + ingest.Decoder.DecodeLuma (DCT-scaled: %v), then sift.Extractor.ExtractImage with describe's options (MaxSide %d, every image doubled as OpenCV's: %v); OpenCV %s: cv2.imread(IMREAD_GRAYSCALE), then the INTER_AREA resize to MaxSide and SIFT.detectAndCompute. (×r): the median per-pair ratio OpenCV/ours, above 1: ours is faster.\n\n",
		reps, opt.DCTScale, opt.SIFT.MaxSide, opt.SIFT.DoubleImage, cv.version)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "| size | photos | side\t| decode ms\t| SIFT ms\t| decode + SIFT ms\t| keypoints\t|")
	fmt.Fprintln(tw, "|---|---|---\t|---\t|---\t|---\t|---\t|")
	ms := func(ts []photoTiming, f func(photoTiming) time.Duration) float64 {
		xs := make([]float64, len(ts))
		for i, t := range ts {
			xs[i] = f(t).Seconds() * 1000
		}
		return median(xs)
	}
	for _, size := range sizes {
		s := bySize[size]
		for _, side := range []struct {
			name string
			ts   []photoTiming
		}{{"ours", s.our}, {"OpenCV", s.cv}} {
			dc := ms(side.ts, func(t photoTiming) time.Duration { return t.decode.cpu })
			dw := ms(side.ts, func(t photoTiming) time.Duration { return t.decode.wall })
			sc := ms(side.ts, func(t photoTiming) time.Duration { return t.sift.cpu })
			sw := ms(side.ts, func(t photoTiming) time.Duration { return t.sift.wall })
			ac := ms(side.ts, func(t photoTiming) time.Duration { return t.decode.cpu + t.sift.cpu })
			aw := ms(side.ts, func(t photoTiming) time.Duration { return t.decode.wall + t.sift.wall })
			kp := make([]float64, len(side.ts))
			for i, t := range side.ts {
				kp[i] = float64(t.keypoints)
			}
			ratio := func(rs []float64) string {
				if side.name == "OpenCV" {
					return ""
				}
				return fmt.Sprintf(" (×%.2f)", median(rs))
			}
			fmt.Fprintf(tw, "| %s | %d | %s\t| %.1f [%.1f]%s\t| %.1f [%.1f]%s\t| %.1f [%.1f]%s\t| %.0f\t|\n",
				size, s.photos, side.name, dc, dw, ratio(s.rDecode), sc, sw, ratio(s.rSIFT), ac, aw, ratio(s.rAll), median(kp))
		}
	}
	tw.Flush()
	fmt.Printf("(%v)\n", time.Since(start).Round(time.Second))
	runtime.KeepAlive(e)
	return nil
}
