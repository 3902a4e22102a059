package kmeansbeam

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/progress"
)

// TestTrainProgress trains 60 words from k-means++ on a clock that moves a second each
// time it is read, with a 20 s period: the seeding is told every 20
// centroids and when done, and every iteration has its line.
func TestTrainProgress(t *testing.T) {
	const k, n, dim = 60, 600, 4
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	t0 := time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)
	clock := t0
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	var lines []string
	logf := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	opt := kmeans.Options{K: k, MaxIter: 5, Seed: 1, Init: kmeans.InitKMeansPP}
	opt.Progress = trainProgress(progress.New(20*time.Second), k, n, t0, now, logf)
	res, err := kmeans.Train(data, dim, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"vocabulary: choosing 60 initial centroids from 600 descriptors",
		"progress: vocabulary seeding: 20 of 60 centroids done, 20s since it started",
		"progress: vocabulary seeding: 40 of 60 centroids done, 40s since it started",
		"progress: vocabulary seeding: finished 60 centroids, 1m00s since it started",
	}
	for i := 0; i <= res.Iterations; i++ {
		want = append(want, fmt.Sprintf("vocabulary: iteration %d: mean squared distance", i))
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %q, want %q…", i, lines[i], w)
		}
	}
	if last := lines[len(lines)-1]; !strings.HasSuffix(last, fmt.Sprintf("1m%02ds since training started", res.Iterations+1)) {
		t.Errorf("the last iteration's line %q does not say the time since training started", last)
	}
}

// captureLog sends Beam's log to the returned function's lines for the
// test.
func captureLog(t *testing.T) func() string {
	c := &capture{}
	log.SetLogger(c)
	t.Cleanup(func() { log.SetLogger(&log.Structural{}) })
	return func() string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.b.String()
	}
}

type capture struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *capture) Log(_ context.Context, _ log.Severity, _ int, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.b.WriteString(msg + "\n")
}

// The vocabulary's DoFns log its progress: on one worker the seeding and

// TestTrainProgressRounds: k-means‖ seeding logs a line per round with
// its candidates before the k-means++ of the candidates.
func TestTrainProgressRounds(t *testing.T) {
	const k, n, dim = 20, 400, 4
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	t0 := time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC)
	var lines []string
	logf := func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) }
	opt := kmeans.Options{K: k, MaxIter: 1, Seed: 1, Init: kmeans.InitParallel, SeedRounds: 2}
	opt.Progress = trainProgress(progress.New(time.Hour), k, n, t0, func() time.Time { return t0 }, logf)
	if _, err := kmeans.Initialize(data, dim, opt); err != nil {
		t.Fatal(err)
	}
	if len(lines) < 3 || !strings.HasPrefix(lines[1], "vocabulary: seeding round 1 of 2: ") || !strings.HasPrefix(lines[2], "vocabulary: seeding round 2 of 2: ") ||
		!strings.Contains(lines[2], " candidate centroids") {
		t.Errorf("lines:\n%s\nwant the start, then rounds 1 and 2 of 2 with their candidates", strings.Join(lines, "\n"))
	}
}

// every iteration, distributed the seeding.
func TestVocabularyLogsProgress(t *testing.T) {
	const d, n = formats.DescriptorSize, 300
	rng := rand.New(rand.NewPCG(3, 4))
	smp := sample{Prio: make([]uint64, n), Desc: make([]byte, n*d)}
	for i := range smp.Desc {
		smp.Desc[i] = byte(rng.IntN(256))
	}
	opt := Options{K: 10, Sample: n, MaxIter: 3, Seed: 1}
	logged := captureLog(t)
	cb, err := (&trainFn{Opt: opt, Output: t.TempDir()}).ProcessElement(context.Background(), smp)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"vocabulary: choosing 10 initial centroids from 300 descriptors", "progress: vocabulary seeding: finished 10 centroids"}
	for i := 0; i <= cb.Iterations; i++ {
		want = append(want, fmt.Sprintf("vocabulary: iteration %d: mean squared distance", i))
	}
	for _, w := range want {
		if !strings.Contains(logged(), w) {
			t.Errorf("one worker: no line %q in\n%s", w, logged())
		}
	}
	if err := (&initFn{Opt: opt}).ProcessElement(context.Background(), smp, func(state) {}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(logged(), "progress: vocabulary seeding: finished 10 centroids"); got != 2 {
		t.Errorf("the distributed seeding was not told:\n%s", logged())
	}
}
