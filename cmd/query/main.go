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
// inliers first; --expand (or --expand N, at most N, 10 by default)
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

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats/blob"
	"github.com/bowline/bowline/transforms/search"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

const synopsis = `Usage: query --run <run dir | root with published.json> (--image photo.jpg | --image_id ID) [flags]

Searches a finished run with a photo or with an indexed image, and prints how many
images match it and the best --k with their scores.`

var groups = []cmdline.Group{
	{Title: "The run and the query", Flags: []string{"run", "image", "image_id", "learner", "max_pixels"}},
	{Title: "Results", Flags: []string{"k", "rerank", "expand", "near"}},
}

// run is the command: it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := query(ctx, args, stdout)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "query: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	if errors.As(err, new(cmdline.UsageError)) {
		return cmdline.ExitUsage
	}
	return cmdline.ExitFailed
}

// options are the command line's.
type options struct {
	run, image, imageID, learner string
	k                            int
	maxPixels                    int64
	refine                       search.Refine
}

// parseFlags reads the command line, writing --help to help; its errors
// are cmdline.UsageErrors, one line naming the flag.
func parseFlags(args []string, help io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	fs.StringVar(&o.run, "run", "", "the run: a finished run's directory (manifest.json) or a root holding published.json, local or gs://; required")
	fs.StringVar(&o.image, "image", "", "search with this photo (JPEG, PNG, GIF or WebP; local or gs://)")
	fs.StringVar(&o.imageID, "image_id", "", "search with this indexed image, itself left out")
	fs.IntVar(&o.k, "k", 10, "number of results")
	fs.StringVar(&o.learner, "learner", "", "the learner whose index to search, or tfidf (default: the published serving learner, else solis-ada, else the first learned)")
	fs.Int64Var(&o.maxPixels, "max_pixels", 0, "refuse photos with more pixels than this (0: the run's --max_pixels)")
	fs.IntVar(&o.refine.Rerank, "rerank", 0, "verify the best `N` results spatially and put the verified first, most inliers first (0: the learner's ranking as it is)")
	expand := cmdline.Count{Default: search.DefaultExpand}
	fs.Var(&expand, "expand", fmt.Sprintf("average query expansion: search again with the query's bag of words averaged with at most N of its verified results' (--expand alone: %d; --expand N or --expand=N; 0: none); verifies the best --rerank, or %d", search.DefaultExpand, search.DefaultRerank))
	fs.IntVar(&o.refine.NearCopies, "near", 0, fmt.Sprintf("with --rerank: also verify the query's best `N` near-copy candidates, the images whose rarest words it holds most of, and put those verified among the re-ranked (finds the photo a copy was made from; %d is a good N)", search.DefaultNearCopies))
	if err := cmdline.ParseArgs(fs, args, help, synopsis, groups); err != nil {
		return o, err
	}
	o.refine.Expand = expand.N
	switch {
	case fs.NArg() > 0:
		return o, cmdline.Usagef("unexpected arguments %q: flags are written --name value%s", fs.Args(), cmdline.HelpHint)
	case o.run == "":
		return o, cmdline.Usagef("--run is required%s", cmdline.HelpHint)
	case (o.image == "") == (o.imageID == ""):
		return o, cmdline.Usagef("give one of --image and --image_id%s", cmdline.HelpHint)
	case o.refine.NearCopies > 0 && o.refine.Rerank == 0:
		return o, cmdline.Usagef("--near %d: needs --rerank, whose verification the near copies join", o.refine.NearCopies)
	}
	return o, nil
}

func query(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	refine := o.refine
	var photo []byte
	if o.image != "" {
		// Read before loading the run, which takes longer to fail.
		data, _, err := blob.Read(ctx, o.image)
		if err != nil {
			return err
		}
		photo = data
	}
	opt := search.Options{MaxPixels: o.maxPixels}
	if o.learner != "" {
		opt.Learners = []string{o.learner}
	}
	ix, err := search.Open(ctx, o.run, opt)
	if err != nil {
		return err
	}
	l := o.learner
	if l == "" {
		l = ix.ServingLearner()
	}
	var res search.Result
	what := o.imageID
	if photo != nil {
		what = o.image
		res, err = ix.SearchImageRefined(ctx, l, photo, o.k, refine)
	} else {
		res, err = ix.SearchIDRefined(l, o.imageID, o.k, refine)
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
