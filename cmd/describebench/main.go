// Command describebench measures what the Beam runner costs the most
// expensive stage, image description: it describes the same images with the
// describe.Extract transform on a runner (Prism in-process by default) and
// with describe.DescribeAll in a plain Go loop with the same number of
// workers, alternating the two, and prints the ratio of their times, and
// the loop's CPU seconds an image (the cost model's description figure).
// --loop_only measures the loop alone; --sift_double and --max_side
// describe as the job's flags of those names do, and both sides run under
// the job's --memory_limit.
//
//	go run ./cmd/describebench --input ../shared/data/eth80/labels.csv --label_column object --n 800
//	go run ./cmd/describebench --input /tmp/corpus/labels.csv --n 500 --loop_only --sift_double=false
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

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/cpuclock"
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
	opt := describe.DefaultOptions()
	flag.Var(cmdline.Doubling{O: &opt.SIFT}, "sift_double", "double images before SIFT as the job's --sift_double does: true (every image), false (none) or `N` (those below N pixels after --max_side)")
	flag.IntVar(&opt.SIFT.MaxSide, "max_side", opt.SIFT.MaxSide, "longer side images are reduced to before SIFT, as the job's --max_side")
	loopOnly := flag.Bool("loop_only", false, "describe in the plain Go loop only, not also on the Beam runner")
	cols := ingest.DefaultColumns()
	flag.StringVar(&cols.Label, "label_column", cols.Label, "labels CSV column that holds the class label")
	memory := cli.AddMemoryLimitFlag(flag.CommandLine)
	flag.Parse()
	beam.Init()
	memory.Apply()
	ctx := context.Background()

	images, _, err := ingestbeam.List(ctx, *input, cols)
	if err != nil {
		log.Fatal(err)
	}
	sort.Slice(images, func(i, j int) bool { return images[i].ImageID < images[j].ImageID })
	if len(images) > *n {
		images = images[:*n]
	}
	if *glob {
		opt = opt.WithGlobal()
	}
	if err := opt.Validate(); err != nil {
		log.Fatal(err)
	}
	workers := runtime.GOMAXPROCS(0)

	var loops, cpus, runs []float64
	var keypoints int64
	for r := 0; r < *reps; r++ {
		sec, cpu, kp, err := describeLoop(ctx, opt, images, workers)
		if err != nil {
			log.Fatal(err)
		}
		loops, cpus, keypoints = append(loops, sec), append(cpus, cpu), kp
		if *loopOnly {
			continue
		}

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
		start := time.Now()
		if err := beamx.Run(ctx, p); err != nil {
			log.Fatal(err)
		}
		runs = append(runs, time.Since(start).Seconds())
	}
	loop, cpu := median(loops), median(cpus)
	fmt.Printf("%d images, %d keypoints, %d workers, global=%v, sift_double=%v, max_side=%d, median of %d\n",
		len(images), keypoints, workers, *glob, cmdline.Doubling{O: &opt.SIFT}, opt.SIFT.MaxSide, *reps)
	fmt.Printf("plain Go loop  %7.2f s  (%.1f ms/image/worker; %.1f CPU ms/image)\n",
		loop, 1000*loop*float64(workers)/float64(len(images)), 1000*cpu/float64(len(images)))
	if !*loopOnly {
		run := median(runs)
		fmt.Printf("Beam runner    %7.2f s  (job start-up included)\n", run)
		fmt.Printf("runner / loop  %7.2f\n", run/loop)
	}
}

// describeLoop describes images with describe.DescribeAll in a plain Go
// loop and returns its wall and CPU seconds (the process's user and
// system time over the loop, every thread's) and the keypoints found.
func describeLoop(ctx context.Context, opt describe.Options, images []formats.Image, workers int) (sec, cpu float64, keypoints int64, err error) {
	cpu0, err := processCPU()
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	err = describe.DescribeAll(ctx, opt, fileio.ReadBytes, images, nil, workers, 4*workers, func(res describe.Result) error {
		keypoints += int64(len(res.Features.X))
		return nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	sec = time.Since(start).Seconds()
	cpu1, err := processCPU()
	if err != nil {
		return 0, 0, 0, err
	}
	return sec, cpu1 - cpu0, keypoints, nil
}

// processCPU is the process's user plus system CPU seconds so far
// (cpuclock.Process).
func processCPU() (float64, error) {
	t, ok := cpuclock.Process()
	if !ok {
		return 0, fmt.Errorf("no process CPU clock here")
	}
	return t.Seconds(), nil
}

func median(x []float64) float64 {
	sort.Float64s(x)
	return x[len(x)/2]
}
