package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/progress"
	"github.com/bowline/bowline/transforms/search"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks an error of the command line.
type usageError struct{ error }

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := nearCopies(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "nearcopies: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

// config is what a measurement was asked: the command line, as --out
// records it.
type config struct {
	Run       string    `json:"run"`
	N         int       `json:"n"`
	Seed      uint64    `json:"seed"`
	Methods   []string  `json:"methods"`
	Rerank    int       `json:"rerank"`
	Expand    int       `json:"expand"`
	Near      int       `json:"near,omitempty"`
	NearWords int       `json:"near_words,omitempty"`
	Transform transform `json:"transform"`
	ImageRoot string    `json:"image_root,omitempty"`
}

// mode is one way of searching: a Refine and its suffix on the method's
// name, as the report names its rows (tfidf+sv).
type mode struct {
	suffix string
	refine search.Refine
}

// reranked reports whether the mode's order is spatial re-ranking's, whose
// ties rankOf must tell from the learner's.
func (m mode) reranked() bool { return m.refine.Rerank > 0 }

// query is one search of one copy.
type query struct {
	Method string `json:"method"` // with the mode's suffix: solis-ada+sv
	// Rank is the source's, ties counted against it (rankOf); a failed
	// query's is the last.
	Rank    int     `json:"rank"`
	Score   float64 `json:"score"`   // the source's, 0 if it did not match
	Inliers int     `json:"inliers"` // the source's, if it was verified against the copy
	// Top is the first result, and TopInliers its inliers if verified.
	Top        string  `json:"top,omitempty"`
	TopInliers int     `json:"top_inliers,omitempty"`
	Matched    int     `json:"matched"`
	Millis     float64 `json:"ms"`
	Error      string  `json:"error,omitempty"`
}

// copyResult is one near-copy and its searches.
type copyResult struct {
	ImageID string `json:"image_id"`
	// Crop is where the copy lies in the turned source: x0, y0, x1, y1.
	Crop    [4]int  `json:"crop"`
	Error   string  `json:"error,omitempty"` // the source could not be read or copied
	Queries []query `json:"queries,omitempty"`
}

// row sums the queries of one method and mode.
type row struct {
	Method     string  `json:"method"`
	Copies     int     `json:"copies"`
	First      int     `json:"first"`
	Top10      int     `json:"top10"`
	MedianRank float64 `json:"median_rank"`
	MeanRank   float64 `json:"mean_rank"`
	P50Millis  float64 `json:"p50_ms"`
	P95Millis  float64 `json:"p95_ms"`
	Failed     int     `json:"failed"`
}

// output is --out's JSON.
type output struct {
	Config config       `json:"config"`
	Images int          `json:"images"`
	Rows   []row        `json:"rows"`
	Copies []copyResult `json:"copies"`
}

func nearCopies(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nearcopies", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.Run, "run", "", "the run: a finished run's directory (manifest.json) or a root holding published.json, local or gs://; required")
	fs.IntVar(&c.N, "n", 100, "number of the run's images copied (all of them if it has fewer)")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the images drawn and of each copy's crop")
	methods := fs.String("methods", "solis-ada,tfidf", "comma-separated learners searched (tfidf: the baseline)")
	fs.IntVar(&c.Rerank, "rerank", search.DefaultRerank, "also search each copy with its best `N` results verified spatially and re-ranked (rows <method>+sv; 0: none)")
	fs.IntVar(&c.Expand, "expand", 0, "with --rerank: also rows <method>+sv+qe, each query averaged with at most `N` of its verified results and searched again (0: none)")
	fs.IntVar(&c.Near, "near", 0, "with --rerank: also rows <method>+sv+nc, whose verification also takes each copy's best `N` near-copy candidates (search.Refine.NearCopies; 0: none)")
	fs.IntVar(&c.NearWords, "near_words", search.DefaultNearCopyWords, "each image's rarest words its near-copy sketch holds (search.Options.NearCopyWords)")
	fs.IntVar(&c.Transform.Rotate, "rotate", 90, "turn of the copy in degrees, clockwise as displayed: a multiple of 90")
	fs.Float64Var(&c.Transform.Crop, "crop", 0.8, "fraction of each side of the turned photo the copy keeps, at a place drawn from the seed")
	fs.IntVar(&c.Transform.Quality, "quality", 75, "JPEG quality of the copy")
	fs.StringVar(&c.ImageRoot, "image_root", "", "directory that relative image paths of the run are read from: where the job ran, if its --input was relative (default: the working directory)")
	out := fs.String("out", "", "also write the table and every copy's ranks to this JSON file")
	every := fs.Duration("progress", 5*time.Second, "period of the progress lines on stderr")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: nearcopies --run <dir | gs://… | root with published.json> [--n 100] [--seed 1] [--methods solis-ada,tfidf] [--rerank 100] [--expand 0] [--rotate 90] [--crop 0.8] [--quality 75] [--out copies.json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	for _, m := range strings.Split(*methods, ",") {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(c.Methods, m) {
			c.Methods = append(c.Methods, m)
		}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected arguments %q: flags are written --name value", fs.Args())}
	case c.Run == "":
		return usageError{errors.New("--run is required")}
	case c.N < 1:
		return usageError{fmt.Errorf("--n %d: want at least 1", c.N)}
	case len(c.Methods) == 0:
		return usageError{errors.New("--methods names no learner")}
	case c.Rerank < 0:
		return usageError{fmt.Errorf("--rerank %d: want 0 or more", c.Rerank)}
	case c.Expand < 0:
		return usageError{fmt.Errorf("--expand %d: want 0 or more", c.Expand)}
	case c.NearWords < 1:
		return usageError{fmt.Errorf("--near_words %d: want 1 or more", c.NearWords)}
	case c.Near < 0:
		return usageError{fmt.Errorf("--near %d: want 0 or more", c.Near)}
	case c.Near > 0 && c.Rerank == 0:
		return usageError{fmt.Errorf("--near %d: needs --rerank, whose verification it joins", c.Near)}
	case c.Expand > 0 && c.Rerank == 0:
		return usageError{fmt.Errorf("--expand %d: needs --rerank, whose rows it extends", c.Expand)}
	case *every <= 0:
		return usageError{fmt.Errorf("--progress %v: want a positive period", *every)}
	}
	if err := c.Transform.validate(); err != nil {
		return usageError{err}
	}
	modes := []mode{{suffix: ""}}
	if c.Rerank > 0 {
		modes = append(modes, mode{"+sv", search.Refine{Rerank: c.Rerank}})
	}
	if c.Near > 0 {
		modes = append(modes, mode{"+sv+nc", search.Refine{Rerank: c.Rerank, NearCopies: c.Near}})
	}
	if c.Expand > 0 {
		modes = append(modes, mode{"+sv+qe", search.Refine{Rerank: c.Rerank, Expand: c.Expand}})
	}

	ix, err := search.Open(ctx, c.Run, search.Options{Learners: c.Methods, NearCopyWords: c.NearWords})
	if err != nil {
		return err
	}
	picked := sample(ix.Images(), c.N, c.Seed)
	if len(picked) < c.N {
		fmt.Fprintf(stderr, "nearcopies: the run has %d images, fewer than --n %d: copying all of them\n", len(picked), c.N)
	}
	res := output{Config: c, Images: ix.Images()}
	start, last := time.Now(), time.Now()
	for i, d := range picked {
		r, err := searchCopy(ctx, ix, c, modes, ix.ImageID(d))
		if err != nil {
			return err
		}
		if r.Error != "" {
			fmt.Fprintf(stderr, "nearcopies: %s: %s (a miss)\n", r.ImageID, r.Error)
		} else {
			for _, q := range r.Queries {
				if q.Error != "" {
					fmt.Fprintf(stderr, "nearcopies: %s, %s: %s (a miss)\n", r.ImageID, q.Method, q.Error)
				}
			}
		}
		res.Copies = append(res.Copies, r)
		if now := time.Now(); now.Sub(last) >= *every && i+1 < len(picked) {
			fmt.Fprintf(stderr, "nearcopies: %d of %d copies searched, %s\n", i+1, len(picked), progress.Duration(now.Sub(start)))
			last = now
		}
	}
	fmt.Fprintf(stderr, "nearcopies: %d of %d copies searched, %s\n", len(picked), len(picked), progress.Duration(time.Since(start)))
	res.Rows = summarise(res.Copies, c.Methods, modes)
	printTable(stdout, ix, c, res.Rows)
	if *out != "" {
		js, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := blob.Write(ctx, *out, append(js, '\n')); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	return nil
}

// searchCopy makes the copy of image id and searches it with every method
// in every mode. A source that cannot be read, decoded or copied, and a
// copy the run cannot search (search's errors of the photo), are misses
// with their reasons; any other error (ctx, a run without geometry) ends
// the measurement.
func searchCopy(ctx context.Context, ix *search.Index, c config, modes []mode, id string) (copyResult, error) {
	r := copyResult{ImageID: id}
	miss := func(reason string) copyResult {
		r.Error = reason
		for _, m := range c.Methods {
			for _, md := range modes {
				r.Queries = append(r.Queries, query{Method: m + md.suffix, Rank: ix.Images(), Error: reason})
			}
		}
		return r
	}
	uri, _ := ix.URI(id)
	if uri == "" {
		return miss("the run records no location of the image"), nil
	}
	if !blob.IsRemote(uri) && !filepath.IsAbs(uri) && c.ImageRoot != "" {
		uri = blob.Join(c.ImageRoot, uri)
	}
	data, _, err := blob.Read(ctx, uri)
	if err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		return miss(fmt.Sprintf("reading %s: %v", uri, err)), nil
	}
	img, _, err := ingest.Decode(data, 0)
	if err != nil {
		return miss(fmt.Sprintf("decoding %s: %v", uri, err)), nil
	}
	photo, cut, err := nearCopy(img, c.Transform, copyRNG(c.Seed, id))
	if err != nil {
		return miss(err.Error()), nil
	}
	r.Crop = [4]int{cut.Min.X, cut.Min.Y, cut.Max.X, cut.Max.Y}
	for _, m := range c.Methods {
		for _, md := range modes {
			q := query{Method: m + md.suffix}
			t0 := time.Now()
			// k = 0: every match, so that the source's rank is known
			// wherever it is.
			res, err := ix.SearchImageRefined(ctx, m, photo, 0, md.refine)
			q.Millis = float64(time.Since(t0).Microseconds()) / 1000
			switch {
			case errors.Is(err, search.ErrBadImage) || errors.Is(err, search.ErrTooLarge) || errors.Is(err, search.ErrNoFeatures):
				q.Rank, q.Error = ix.Images(), err.Error()
			case err != nil:
				return r, fmt.Errorf("image %s, %s: %w", id, q.Method, err)
			default:
				var hit search.Hit
				q.Rank, hit, _ = rankOf(res.Hits, id, md.reranked(), ix.Images())
				q.Score, q.Inliers, q.Matched = hit.Score, hit.Inliers, res.Matched
				if len(res.Hits) > 0 {
					q.Top, q.TopInliers = res.Hits[0].ImageID, res.Hits[0].Inliers
				}
			}
			r.Queries = append(r.Queries, q)
		}
	}
	return r, nil
}

// summarise makes the table's rows, method by method, each mode after the
// method's plain row. Failed queries count as misses at the last rank, and
// add no time.
func summarise(copies []copyResult, methods []string, modes []mode) []row {
	var rows []row
	for _, m := range methods {
		for _, md := range modes {
			name := m + md.suffix
			rw := row{Method: name}
			var ranks, ms []float64
			for _, c := range copies {
				for _, q := range c.Queries {
					if q.Method != name {
						continue
					}
					rw.Copies++
					ranks = append(ranks, float64(q.Rank))
					if q.Error != "" {
						rw.Failed++
						continue
					}
					ms = append(ms, q.Millis)
					if q.Rank == 1 {
						rw.First++
					}
					if q.Rank <= 10 {
						rw.Top10++
					}
				}
			}
			rw.MedianRank = median(ranks)
			var sum float64
			for _, r := range ranks {
				sum += r
			}
			rw.MeanRank = sum / float64(max(len(ranks), 1))
			rw.P50Millis, rw.P95Millis = percentile(ms, 50), percentile(ms, 95)
			rows = append(rows, rw)
		}
	}
	return rows
}

// printTable writes the rows as a table under a line saying what was
// measured.
func printTable(w io.Writer, ix *search.Index, c config, rows []row) {
	fmt.Fprintf(w, "%s: %d images; %d near-copies (turned %d°, %.0f%% of each side kept, JPEG quality %d; seed %d); rank of the source, ties against it\n",
		ix.Run(), ix.Images(), rowsCopies(rows), c.Transform.Rotate, 100*c.Transform.Crop, c.Transform.Quality, c.Seed)
	fmt.Fprintf(w, "%-22s  %6s  %6s  %6s  %8s  %9s  %8s  %8s  %6s\n", "method", "copies", "first", "top10", "median", "mean rank", "p50 ms", "p95 ms", "failed")
	for _, r := range rows {
		fmt.Fprintf(w, "%-22s  %6d  %6d  %6d  %8.1f  %9.1f  %8.1f  %8.1f  %6d\n",
			r.Method, r.Copies, r.First, r.Top10, r.MedianRank, r.MeanRank, r.P50Millis, r.P95Millis, r.Failed)
	}
}

// rowsCopies is the number of copies the rows count (each row counts
// every copy).
func rowsCopies(rows []row) int {
	if len(rows) == 0 {
		return 0
	}
	return rows[0].Copies
}
