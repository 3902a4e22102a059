package bowline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/report"
)

// The job is a Beam graph: Build adds every stage to a pipeline, and the
// runner chosen by Beam's --runner flag runs it (here Prism, in-process).
// The run directory it writes is whole once report.json is there; its
// report holds each method's held-out figures.
func ExampleBuild() {
	out, err := os.MkdirTemp("", "bowline-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(out)
	c := bowline.DefaultConfig()
	c.Input = filepath.Join("..", "..", "testdata", "shapes", "labels.csv")
	c.Output = filepath.Join(out, "run")
	c.Vocab.K = 200
	c.Learning.Learners = []string{"solis-ada"}

	p, s := beam.NewPipelineWithRoot()
	if err := bowline.Build(s, c); err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := beamx.Run(ctx, p); err != nil {
		log.Fatal(err)
	}
	r, err := report.Load(ctx, fileio.RunDir(c.Output))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range []string{"tfidf", "solis-ada"} {
		row, _ := r.Method(m)
		fmt.Printf("%s: %d held-out queries, mAP %.4f\n", m, row.Queries, row.MAP)
	}
	// Output:
	// tfidf: 18 held-out queries, mAP 0.4432
	// solis-ada: 18 held-out queries, mAP 0.6138
}
