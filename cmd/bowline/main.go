// Command bowline runs the main job: SIFT, vocabulary, bags of words,
// triplets, SOLIS-ADA, inverted index and evaluation, on the runner named by
// --runner (Prism, in-process, by default; Dataflow or Flink for the real
// thing).
//
//	go run ./cmd/bowline --input testdata/shapes/labels.csv --output /tmp/bowline
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/report"
)

func main() {
	c := bowline.DefaultConfig()
	flag.StringVar(&c.Input, "input", "testdata/shapes/labels.csv", "labels CSV (image_id,path,label[,tags]) or image directory; local or gs://")
	flag.StringVar(&c.Output, "output", "", "output directory, local or gs:// (default: a new directory under the system's temp dir)")
	flag.StringVar(&c.Columns.Label, "label_column", c.Columns.Label, "labels CSV column that holds the class label")
	flag.IntVar(&c.Shards, "shards", c.Shards, "files per large output")
	flag.IntVar(&c.Vocab.K, "vocab", c.Vocab.K, "visual words in the vocabulary")
	flag.IntVar(&c.Vocab.Sample, "vocab_sample", c.Vocab.Sample, "descriptors sampled to build the vocabulary")
	flag.IntVar(&c.Vocab.MaxIter, "vocab_iter", c.Vocab.MaxIter, "maximum k-means iterations")
	flag.IntVar(&c.SIFT.SIFT.MaxKeypoints, "max_keypoints", c.SIFT.SIFT.MaxKeypoints, "keep at most this many strongest keypoints per image (0: all)")
	flag.IntVar(&c.SIFT.SIFT.MaxSide, "max_side", c.SIFT.SIFT.MaxSide, "downscale images whose longer side exceeds this (0: never)")
	flag.BoolVar(&c.SIFT.SIFT.DoubleImage, "sift_double", c.SIFT.SIFT.DoubleImage, "upsample images ×2 before SIFT, as Lowe does")
	flag.Int64Var(&c.SIFT.MaxPixels, "max_pixels", c.SIFT.MaxPixels, "refuse images with more pixels than this, before decoding")
	flag.IntVar(&c.Triplets.PerQuery, "triplets_per_query", c.Triplets.PerQuery, "training triplets sampled per labelled image")
	flag.Float64Var(&c.ADA.Eta, "ada_eta", c.ADA.Eta, "SOLIS-ADA learning rate η")
	flag.Float64Var(&c.ADA.Lambda, "ada_lambda", c.ADA.Lambda, "SOLIS-ADA L1 strength λ")
	flag.Float64Var(&c.ADA.Delta, "ada_delta", c.ADA.Delta, "SOLIS-ADA δ in H = δI + diag(G)^½")
	flag.IntVar(&c.Eval.MaxQueries, "eval_queries", c.Eval.MaxQueries, "evaluate with at most this many queries, a fixed hash-chosen subset (0: every labelled image)")
	seed := flag.Uint64("seed", 1, "seed for sampling, k-means and triplets")
	flag.Parse()
	beam.Init()

	c.Vocab.Seed, c.Triplets.Seed, c.Eval.Seed = *seed, *seed, *seed
	if c.Output == "" {
		dir, err := os.MkdirTemp("", "bowline-")
		if err != nil {
			fatal(err)
		}
		c.Output = dir
	}
	c.Flags = map[string]string{}
	flag.VisitAll(func(f *flag.Flag) { c.Flags[f.Name] = f.Value.String() })

	ctx := context.Background()
	if err := run(ctx, c); err != nil {
		fatal(err)
	}
}

func run(ctx context.Context, c bowline.Config) error {
	// A report left by an earlier run would claim this one finished.
	if err := formats.Remove(ctx, formats.Join(c.Output, bowline.ReportJSON)); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	if err := bowline.Build(s, c); err != nil {
		return err
	}
	start := time.Now()
	if err := beamx.Run(ctx, p); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	js, err := formats.ReadBytes(ctx, formats.Join(c.Output, bowline.ReportJSON))
	if err != nil {
		return fmt.Errorf("the pipeline finished but wrote no report: %w", err)
	}
	var r report.Report
	if err := json.Unmarshal(js, &r); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Printf("\n%d images (%d dead letters), %d keypoints, %d words, %d triplets, %.1fs\n\n",
		r.Counts.Images, r.Counts.DeadLetters, r.Counts.Keypoints, r.Counts.Vocabulary, r.Counts.Triplets, time.Since(start).Seconds())
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tqueries\tmAP\tP@10\tNDCG@10\tsparsity\tpostings\t")
	for _, m := range r.Methods {
		fmt.Fprintf(tw, "%s\t%d\t%.4f\t%.4f\t%.4f\t%.1f%%\t%d\t\n", m.Method, m.Queries, m.MAP, m.PrecisionAt10, m.NDCGAt10, 100*m.Sparsity, m.IndexPostings)
	}
	tw.Flush()
	fmt.Printf("\nreport: %s\n        %s\n", formats.Join(c.Output, bowline.ReportHTML), formats.Join(c.Output, bowline.ReportJSON))
	return nil
}

func fatal(err error) {
	log.Exitf(context.Background(), "bowline: %v", strings.TrimSpace(err.Error()))
}
