// Command retrain retrains and re-evaluates similarity learners on the bags
// of words and triplets of a finished bowline run, e.g. with more training
// shards or other hyper-parameters:
//
//	go run ./cmd/retrain --run /tmp/bowline-shapes --output /tmp/retrain --train_shards 4 --train_rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/pipelines/retrain"
)

func main() {
	c := retrain.Config{Shards: 4, Learning: bowline.DefaultLearning()}
	flag.StringVar(&c.Run, "run", "", "output directory of a finished bowline run (local or gs://)")
	flag.StringVar(&c.Output, "output", "", "where models, indexes and the report go")
	flag.IntVar(&c.Shards, "shards", c.Shards, "files per index")
	learnerList := flag.String("learners", strings.Join(c.Learning.Learners, ","), "learners to train, comma-separated, or \"all\" (of bags of words; learners of global features, named, need a run made with --global)")
	params := flag.String("learner_params", "", "hyper-parameters as learner.name=value,…")
	flag.IntVar(&c.Learning.Shards, "train_shards", c.Learning.Shards, "shards each training round is split over")
	flag.IntVar(&c.Learning.Rounds, "train_rounds", c.Learning.Rounds, "rounds of parameter averaging over one pass of the triplets")
	flag.IntVar(&c.Learning.Eval.MaxQueries, "eval_queries", c.Learning.Eval.MaxQueries, "evaluate with at most this many queries (0: all)")
	flag.Parse()
	beam.Init()
	ctx := context.Background()

	c.Learning.Learners = bowline.ParseLearners(*learnerList, false)
	p, err := bowline.ParseParams(*params)
	if err != nil {
		log.Fatal(err)
	}
	c.Learning.Params = p
	n, err := fileio.CountRows(ctx, fileio.Join(c.Run, "codebook-*.parquet"))
	if err != nil {
		log.Fatalf("retrain: reading the run's codebook: %v", err)
	}
	c.Vocabulary = int(n)
	c.Flags = map[string]string{}
	flag.VisitAll(func(f *flag.Flag) { c.Flags[f.Name] = f.Value.String() })

	if err := fileio.Remove(ctx, fileio.Join(c.Output, bowline.ReportJSON)); err != nil {
		log.Fatal(err)
	}
	pl, s := beam.NewPipelineWithRoot()
	if err := retrain.Build(s, c); err != nil {
		log.Fatal(err)
	}
	if err := beamx.Run(ctx, pl); err != nil {
		log.Fatalf("retrain: %v", err)
	}
	r, err := bowline.LoadReport(ctx, c.Output)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println()
	r.WriteTable(os.Stdout)
	fmt.Printf("\nreport: %s\n", fileio.Join(c.Output, bowline.ReportHTML))
}
