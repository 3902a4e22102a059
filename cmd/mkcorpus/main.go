// Command mkcorpus writes a benchmark corpus of photo-like JPEGs made from
// ETH-80's photos: each of its --n images puts one ETH-80 object (sometimes
// two) into a procedural scene of --size pixels, warped (scale,
// rotation, perspective, crop, mirror), recoloured, blurred or sharpened,
// with sensor noise and a JPEG quality from the --quality range. ETH-80's
// own photos are 256×256 objects on a plain cloth, about 70 SIFT keypoints
// each; these carry the descriptor counts of real photos, so that the job
// can be measured at scale on real objects rather than on synthetic
// descriptors.
//
// Every image is a 4:2:0 JPEG (image/jpeg's encoder subsamples chroma as
// cameras do). The default 640×480 at quality 60–95 is the size of the
// job's recorded figures; a corpus of camera originals is
// --size 4000x3000 --quality 90-95, of Flickr-size photos
// --size 1024x768. The number of leaves and the object's share of the
// frame scale with the size; blur and sensor noise are in pixels, as a
// sensor's are.
//
// Image i is a pure function of the settings (corpus.json), the source
// photos and i: a re-run writes identical bytes, any image can be made
// alone, so a corpus is made in parallel (--workers) and extended by a
// larger --n. Each file appears whole or not at all (written under a
// temporary name and renamed), an image file that exists is not made
// again, and labels.csv is written last: when it is there, the corpus is
// complete. A smaller --n lists fewer images; the files of the others
// stay and are used again by a larger one.
//
// Identical bytes need the same generator (corpus.json's format_version),
// CPU architecture and Go release: Go may fuse a multiply and an add into
// one instruction on arm64, ppc64 and s390x (not on amd64), which rounds
// differently, and a Go release may change image/jpeg's encoder.
//
//	go run ./cmd/mkcorpus --source ../shared/data/eth80/labels.csv --n 20000 --out /tmp/eth80x
//	go run ./cmd/mkcorpus --source ../shared/data/eth80/labels.csv --n 1000 --size 4000x3000 --quality 90-95 --out /tmp/camera
//	go run ./cmd/bowline --input /tmp/eth80x/labels.csv --label_column category --output /tmp/run
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bowline/bowline/transforms/ingest"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mkcorpus: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "mkcorpus: %v\n", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	Source   string
	Out      string
	N        int
	Workers  int
	Settings Settings
	// progress is how often a progress line is printed.
	progress time.Duration
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("mkcorpus", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.Source, "source", "", "ETH-80's labels.csv (image_id,path,object,category; paths relative to it)")
	fs.StringVar(&c.Out, "out", "", "output directory (local): labels.csv, corpus.json and images/")
	fs.IntVar(&c.N, "n", 1000, "number of images")
	fs.Uint64Var(&c.Settings.Seed, "seed", 1, "random seed: image i is a function of the seed and i")
	size := fs.String("size", "640x480", "image size WxH in pixels, 64..8192 each (camera originals: 4000x3000 with --quality 90-95)")
	quality := fs.String("quality", "60-95", "JPEG quality range lo-hi (or one value), drawn per image")
	fs.Float64Var(&c.Settings.TwoObjects, "two_objects", 0.25, "fraction of images with a second, smaller object of another object (recorded in second_object)")
	fs.IntVar(&c.Workers, "workers", runtime.GOMAXPROCS(0), "images made at once")
	fs.DurationVar(&c.progress, "progress", 10*time.Second, "interval between progress lines")
	// Help to stdout, where a pager reads it; a mistake in one line.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fmt.Println("mkcorpus --source <ETH-80 labels.csv> --out <dir> [--n 1000] [flags]")
			fs.PrintDefaults()
			return c, err
		}
		return c, fmt.Errorf("%w (--help lists every flag)", err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	lo, hi, err := parseRange(*quality)
	if err != nil {
		return c, fmt.Errorf("--quality %q: %w", *quality, err)
	}
	c.Settings.QualityMin, c.Settings.QualityMax = lo, hi
	if c.Settings.Width, c.Settings.Height, err = parseSize(*size); err != nil {
		return c, fmt.Errorf("--size %q: %w", *size, err)
	}
	c.Settings.FormatVersion = formatVersion
	switch {
	case c.Source == "":
		return c, errors.New("--source is required (ETH-80's labels.csv)")
	case c.Out == "":
		return c, errors.New("--out is required")
	case strings.Contains(c.Out, "://"):
		return c, fmt.Errorf("--out %s: a local directory, not a URL", c.Out)
	case c.N < 1:
		return c, fmt.Errorf("--n %d: want at least 1", c.N)
	case !(c.Settings.TwoObjects >= 0 && c.Settings.TwoObjects <= 1):
		return c, fmt.Errorf("--two_objects %v: want a fraction in [0, 1]", c.Settings.TwoObjects)
	case c.Workers < 1:
		return c, fmt.Errorf("--workers %d: want at least 1", c.Workers)
	case c.progress <= 0:
		return c, fmt.Errorf("--progress %v: want a positive interval", c.progress)
	}
	return c, nil
}

// parseRange reads "lo-hi" or "q" as a JPEG quality range.
func parseRange(s string) (lo, hi int, err error) {
	a, b, two := strings.Cut(s, "-")
	if lo, err = strconv.Atoi(strings.TrimSpace(a)); err != nil {
		return 0, 0, errors.New("want lo-hi, e.g. 60-95")
	}
	hi = lo
	if two {
		if hi, err = strconv.Atoi(strings.TrimSpace(b)); err != nil {
			return 0, 0, errors.New("want lo-hi, e.g. 60-95")
		}
	}
	if lo < 1 || hi > 100 || lo > hi {
		return 0, 0, errors.New("want 1 <= lo <= hi <= 100")
	}
	return lo, hi, nil
}

// parseSize reads "WxH" as an image size, each side in 64..8192: smaller
// frames cannot hold an object and its scene, larger ones need more than a
// gigabyte of frame a worker.
func parseSize(s string) (w, h int, err error) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	if ok {
		w, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			h, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil {
		return 0, 0, errors.New("want WxH, e.g. 4000x3000")
	}
	if w < 64 || h < 64 || w > 8192 || h > 8192 {
		return 0, 0, errors.New("want 64..8192 pixels each side")
	}
	return w, h, nil
}

// readSources reads the source labels CSV with the job's own reader, once
// per label column, so that both the object and the category travel.
// Sources are kept in the CSV's order; the digest of its bytes goes into
// corpus.json, since another CSV (or order) makes other images.
func readSources(path string) ([]Source, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", path, err)
	}
	base := filepath.Dir(path)
	read := func(label string) ([]Source, error) {
		cols := ingest.Columns{ID: "image_id", Path: "path", Label: label}
		imgs, dead, err := ingest.ParseLabels(bytes.NewReader(data), base, cols)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", path, err)
		}
		if len(dead) > 0 {
			return nil, fmt.Errorf("source %s: %d unusable rows, the first: %s", path, len(dead), dead[0].Reason)
		}
		out := make([]Source, len(imgs))
		for k, im := range imgs {
			if im.Label == "" {
				return nil, fmt.Errorf("source %s: image %s has no %s", path, im.ImageID, label)
			}
			out[k] = Source{ID: im.ImageID, Path: im.URI, Object: im.Label}
		}
		return out, nil
	}
	srcs, err := read("object")
	if err != nil {
		return nil, "", err
	}
	cats, err := read("category")
	if err != nil {
		return nil, "", err
	}
	for k := range srcs {
		srcs[k].Category = cats[k].Object
	}
	if len(srcs) == 0 {
		return nil, "", fmt.Errorf("source %s: no images", path)
	}
	sum := sha256.Sum256(data)
	return srcs, hex.EncodeToString(sum[:]), nil
}

// imagePath is image i's path relative to --out: a thousand files per
// directory, so that no directory of a million-image corpus is too large to
// list.
func imagePath(i int) string {
	return filepath.Join("images", fmt.Sprintf("%04d", i/1000), imageID(i)+".jpg")
}

func imageID(i int) string { return fmt.Sprintf("p%07d", i) }

// loadSource decodes source j with the job's own decoder (EXIF orientation,
// CMYK), so that the object looks as the job would have seen it.
func loadSource(sources []Source, j int) (image.Image, error) {
	data, err := os.ReadFile(sources[j].Path)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", sources[j].ID, err)
	}
	img, _, err := ingest.Decode(data, 64<<20)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", sources[j].ID, err)
	}
	return img, nil
}

// run makes the corpus; log gets the progress lines.
func run(ctx context.Context, c config, log io.Writer) error {
	sources, digest, err := readSources(c.Source)
	if err != nil {
		return err
	}
	s := c.Settings
	s.SourceDigest = digest
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := claim(c.Out, s); err != nil {
		return err
	}
	if err := removeTemps(c.Out); err != nil {
		return err
	}
	order := Order(s.Seed, len(sources))
	var made, skipped atomic.Int64
	start := time.Now()
	next := make(chan int)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for range c.Workers {
		wg.Go(func() {
			for i := range next {
				dst := filepath.Join(c.Out, imagePath(i))
				if _, err := os.Stat(dst); err == nil {
					// Files appear only by rename: one that exists is whole.
					skipped.Add(1)
					continue
				}
				p := PlanImage(s, order, sources, i)
				data, err := Render(s, p, func(j int) (image.Image, error) { return loadSource(sources, j) })
				if err == nil {
					err = writeAtomic(dst, func(w io.Writer) error { _, err := w.Write(data); return err })
				}
				if err != nil {
					cancel(fmt.Errorf("image %s: %w", imageID(i), err))
					return
				}
				made.Add(1)
			}
		})
	}
	tick := time.NewTicker(c.progress)
	defer tick.Stop()
	report := func() {
		m, sk := made.Load(), skipped.Load()
		el := time.Since(start)
		rate := float64(m) / el.Seconds()
		eta := "?"
		if rate > 0 {
			eta = (time.Duration(float64(int64(c.N)-m-sk)/rate) * time.Second).Round(time.Second).String()
		}
		fmt.Fprintf(log, "mkcorpus: %d/%d images (%d made, %d already there), %.1f images/s, %s left\n",
			m+sk, c.N, m, sk, rate, eta)
	}
feed:
	for i := range c.N {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		case <-tick.C:
			report()
			select {
			case next <- i:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("interrupted after %d images made; the same command resumes", made.Load())
		}
		return err
	}
	if err := writeAtomic(filepath.Join(c.Out, "labels.csv"), func(w io.Writer) error {
		return writeLabels(w, s, order, sources, c.N)
	}); err != nil {
		return err
	}
	report()
	fmt.Fprintf(log, "mkcorpus: %s\n", filepath.Join(c.Out, "labels.csv"))
	return nil
}

// labelsHeader is the job's layout (image_id,path,label) with label the
// category, then both label columns so that --label_column picks object or
// category, the source photo, and the second object of a two-object photo.
var labelsHeader = []string{"image_id", "path", "label", "object", "category", "source_id", "second_object", "second_category"}

// writeLabels writes the CSV of images 0..n-1 from their plans, without
// rendering any.
func writeLabels(w io.Writer, s Settings, order []int, sources []Source, n int) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	if err := cw.Write(labelsHeader); err != nil {
		return err
	}
	for i := range n {
		p := PlanImage(s, order, sources, i)
		m := sources[p.Main]
		row := []string{imageID(i), filepath.ToSlash(imagePath(i)), m.Category, m.Object, m.Category, m.ID, "", ""}
		if p.Second >= 0 {
			row[6], row[7] = sources[p.Second].Object, sources[p.Second].Category
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// claim writes corpus.json with the settings, or checks that the one
// there has the same: extending or resuming a corpus made with other
// settings would mix two corpora under one labels.csv.
func claim(out string, s Settings) error {
	path := filepath.Join(out, "corpus.json")
	want, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	want = append(want, '\n')
	have, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeAtomic(path, func(w io.Writer) error { _, err := w.Write(want); return err })
	case err != nil:
		return fmt.Errorf("--out: %w", err)
	}
	var old Settings
	if err := json.Unmarshal(have, &old); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if old != s {
		return fmt.Errorf("%s holds a corpus made with other settings or sources (%s); give another --out", path, strings.Join(strings.Fields(string(have)), " "))
	}
	return nil
}

// removeTemps removes the temporary files of a killed run, which are
// never renamed into place.
func removeTemps(out string) error {
	return filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), tempPrefix) {
			return os.Remove(p)
		}
		return nil
	})
}

// tempPrefix starts the name of a file being written.
const tempPrefix = ".tmp-"

// writeAtomic writes path under a temporary name in its directory and
// renames it into place, so that the file is whole or absent.
func writeAtomic(path string, body func(w io.Writer) error) (err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := body(tmp); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
