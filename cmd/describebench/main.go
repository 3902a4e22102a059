// Command describebench measures what the Beam runner costs the most
// expensive stage, image description: it describes the same images with the
// describe.Extract transform on a runner (Prism in-process by default) and
// with describe.DescribeAll in a plain Go loop with the same number of
// workers, alternating the two, and prints the ratio of their times.
//
//	go run ./cmd/describebench --input ../shared/data/eth80/labels.csv --label_column object --n 800
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/describe/describebeam"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/ingest/ingestbeam"
)

func main() {
	input := flag.String("input", "testdata/shapes/labels.csv", "labels CSV or image directory")
	n := flag.Int("n", 400, "images to describe (the first n by id)")
	reps := flag.Int("reps", 3, "repetitions of each side")
	glob := flag.Bool("global", false, "also extract global features")
	cols := ingest.DefaultColumns()
	flag.StringVar(&cols.Label, "label_column", cols.Label, "labels CSV column that holds the class label")
	flag.Parse()
	beam.Init()
	ctx := context.Background()

	images, _, err := ingestbeam.List(ctx, *input, cols)
	if err != nil {
		log.Fatal(err)
	}
	sort.Slice(images, func(i, j int) bool { return images[i].ImageID < images[j].ImageID })
	if len(images) > *n {
		images = images[:*n]
	}
	opt := describe.DefaultOptions()
	opt.Global = *glob
	workers := runtime.GOMAXPROCS(0)

	var loops, runs []float64
	var keypoints int64
	for r := 0; r < *reps; r++ {
		start := time.Now()
		var kp int64
		err := describe.DescribeAll(ctx, opt, fileio.ReadBytes, images, nil, workers, 4*workers, func(res describe.Result) error {
			kp += int64(len(res.Features.X))
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
		loops = append(loops, time.Since(start).Seconds())
		keypoints = kp

		p, s := beam.NewPipelineWithRoot()
		dir, err := os.MkdirTemp("", "describebench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		list, err := ingestbeam.WriteParts(ctx, slices.Clone(images), opt.PartImages, dir)
		if err != nil {
			log.Fatal(err)
		}
		parts, _ := describebeam.Extract(s, beam.Reshuffle(s, beam.CreateList(s, list)), opt, dir)
		stats.CountElms(s, parts)
		start = time.Now()
		if err := beamx.Run(ctx, p); err != nil {
			log.Fatal(err)
		}
		runs = append(runs, time.Since(start).Seconds())
	}
	loop, run := median(loops), median(runs)
	fmt.Printf("%d images, %d keypoints, %d workers, global=%v, median of %d\n", len(images), keypoints, workers, *glob, *reps)
	fmt.Printf("plain Go loop  %7.2f s  (%.1f ms/image/worker)\n", loop, 1000*loop*float64(workers)/float64(len(images)))
	fmt.Printf("Beam runner    %7.2f s  (job start-up included)\n", run)
	fmt.Printf("runner / loop  %7.2f\n", run/loop)
}

func median(x []float64) float64 {
	sort.Float64s(x)
	return x[len(x)/2]
}
