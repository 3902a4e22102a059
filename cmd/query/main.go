// Command query searches a finished bowline run with a photo or with an
// indexed image, and prints how many images match it and the best k with
// their scores (only matches: under a learner of bags of words, images of
// positive score; a photo without features is an error):
//
//	go run ./cmd/query --run /tmp/bowline-shapes --image photo.jpg [--k 10] [--learner solis-ada]
//	go run ./cmd/query --run gs://bucket/root --image_id class0/img1.png
//
// --run is a run directory (with manifest.json) or a root whose
// published.json names the run, local or gs://. The photo is described,
// quantised and weighted with the run's own settings; an indexed image
// queries with its bag of words, itself left out. Errors end in one line
// "query: <cause>" (exit status 1; 2 for a bad command line).
//
// --rerank N verifies the best N results spatially against the query's
// keypoints (the run's geometry files) and puts the verified first, most
// inliers first; --expand (or --expand=N, at most N, 10 by default)
// searches again with the query's bag of words averaged with its verified
// results' (average query expansion). Both print each result's inliers:
//
//	go run ./cmd/query --run /tmp/eth80 --image_id cup/cup1-066-225 --rerank 100 --expand
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/transforms/search"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks an error of the command line.
type usageError struct{ error }

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := query(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "query: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	if errors.As(err, new(usageError)) {
		return 2
	}
	return 1
}

func query(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runDir := fs.String("run", "", "the run: a finished run's directory (manifest.json) or a root holding published.json, local or gs://; required")
	image := fs.String("image", "", "search with this photo (JPEG, PNG, GIF or WebP; local or gs://)")
	imageID := fs.String("image_id", "", "search with this indexed image, itself left out")
	k := fs.Int("k", 10, "number of results")
	learner := fs.String("learner", "", "the learner whose index to search, or tfidf (default: the published serving learner, else solis-ada, else the first learned)")
	maxPixels := fs.Int64("max_pixels", 0, "refuse photos with more pixels than this (0: the run's --max_pixels)")
	rerank := fs.Int("rerank", 0, "verify the best `N` results spatially and put the verified first, most inliers first (0: the learner's ranking as it is)")
	var expand expandFlag
	fs.Var(&expand, "expand", fmt.Sprintf("average query expansion: search again with the query's bag of words averaged with its verified results', at most %d, or N with --expand=N (verifies the best --rerank, or %d)", search.DefaultExpand, search.DefaultRerank))
	near := fs.Int("near", 0, fmt.Sprintf("with --rerank: also verify the query's best `N` near-copy candidates, the images whose rarest words it holds most of, and put those verified among the re-ranked (finds the photo a copy was made from; %d is a good N)", search.DefaultNearCopies))
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: query --run <dir | gs://… | root with published.json> (--image photo.jpg | --image_id ID) [--k 10] [--learner solis-ada] [--rerank 100] [--expand[=N]] [--near 10]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("unexpected arguments %q: flags are written --name value", fs.Args())}
	case *runDir == "":
		return usageError{errors.New("--run is required")}
	case (*image == "") == (*imageID == ""):
		return usageError{errors.New("give one of --image and --image_id")}
	case *k < 1:
		return usageError{fmt.Errorf("--k %d: want at least 1", *k)}
	case *rerank < 0:
		return usageError{fmt.Errorf("--rerank %d: want 0 or more", *rerank)}
	case *near < 0:
		return usageError{fmt.Errorf("--near %d: want 0 or more", *near)}
	case *near > 0 && *rerank == 0:
		return usageError{fmt.Errorf("--near %d: needs --rerank, whose verification the near copies join", *near)}
	case expand.bad != "":
		return usageError{fmt.Errorf("--expand=%s: want a count of results, 0 or more, or true (%d)", expand.bad, search.DefaultExpand)}
	}
	refine := search.Refine{Rerank: *rerank, Expand: expand.n, NearCopies: *near}
	var photo []byte
	if *image != "" {
		// Read before loading the run, which takes longer to fail.
		data, _, err := blob.Read(ctx, *image)
		if err != nil {
			return err
		}
		photo = data
	}
	opt := search.Options{MaxPixels: *maxPixels}
	if *learner != "" {
		opt.Learners = []string{*learner}
	}
	ix, err := search.Open(ctx, *runDir, opt)
	if err != nil {
		return err
	}
	l := *learner
	if l == "" {
		l = ix.ServingLearner()
	}
	var res search.Result
	what := *imageID
	if photo != nil {
		what = *image
		res, err = ix.SearchImageRefined(ctx, l, photo, *k, refine)
	} else {
		res, err = ix.SearchIDRefined(l, *imageID, *k, refine)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d images, learner %s; %d matched, top %d for %s\n", ix.Run(), ix.Images(), l, res.Matched, len(res.Hits), what)
	if len(res.Hits) == 0 {
		fmt.Fprintf(stdout, "no image shares a weighted visual word with %s under %s\n", what, l)
		return nil
	}
	if refine == (search.Refine{}) {
		fmt.Fprintf(stdout, "%4s  %10s  %-12s  %s\n", "rank", "score", "label", "image_id")
		for i, h := range res.Hits {
			label, _ := ix.Label(h.ImageID)
			fmt.Fprintf(stdout, "%4d  %10.6f  %-12s  %s\n", i+1, h.Score, label, h.ImageID)
		}
		return nil
	}
	// Inliers of the verified; "-" for the others (fewer than a match, or
	// beyond the results verified).
	fmt.Fprintf(stdout, "%4s  %10s  %7s  %-12s  %s\n", "rank", "score", "inliers", "label", "image_id")
	for i, h := range res.Hits {
		label, _ := ix.Label(h.ImageID)
		in := "-"
		if h.Verified {
			in = strconv.Itoa(h.Inliers)
		}
		fmt.Fprintf(stdout, "%4d  %10.6f  %7s  %-12s  %s\n", i+1, h.Score, in, label, h.ImageID)
	}
	return nil
}

// expandFlag is --expand: a count, or alone the default count. A value
// that is neither is kept in bad and refused after parsing, in one line as
// --k's is (a flag's own error comes with the whole usage).
type expandFlag struct {
	n   int
	bad string
}

func (e *expandFlag) String() string {
	if e == nil {
		return "0"
	}
	return strconv.Itoa(e.n)
}

// Set takes a count, or true (the flag alone: search.DefaultExpand) or
// false (0).
func (e *expandFlag) Set(s string) error {
	// Not strconv.ParseBool: --expand=1 is one result, not true.
	e.bad = ""
	switch s {
	case "true":
		e.n = search.DefaultExpand
	case "false":
		e.n = 0
	default:
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			e.bad = s
		}
		e.n = n
	}
	return nil
}

// IsBoolFlag lets --expand stand alone; a count is given --expand=N.
func (e *expandFlag) IsBoolFlag() bool { return true }
