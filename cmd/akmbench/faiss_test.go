package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

// faissPython returns an interpreter that imports faiss. Without one the
// test is skipped on a developer's machine but fails under CI, whose
// .ci/run installs python3-faiss.
func faissPython(t *testing.T) string {
	t.Helper()
	python := "/usr/bin/python3"
	if p := os.Getenv("AKMBENCH_PYTHON"); p != "" {
		python = p
	}
	if err := exec.Command(python, "-c", "import faiss").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s cannot import faiss (.ci/run installs python3-faiss): %v", python, err)
		}
		t.Skipf("%s cannot import faiss (apt-get install python3-faiss): %v", python, err)
	}
	return python
}

// TestLloydFAISSIsExactLloyd checks that Lloyd with FAISS's exhaustive
// search is kmeans.TrainFrom's exact Lloyd with split re-seeding: same
// iterations, same objective up to float rounding (FAISS's distances are
// computed as ‖x‖² + ‖c‖² − 2x·c and may order near-ties differently), and
// the same centroids.
func TestLloydFAISSIsExactLloyd(t *testing.T) {
	python := faissPython(t)
	const n, k, iters = 4000, 80, 6
	pts := synthetic(n, 7)
	opt := kmeans.Options{K: k, MaxIter: iters, Seed: 3, Init: kmeans.InitRandom, Reseed: kmeans.ReseedSplit}
	cent, err := kmeans.Initialize(pts, dim, opt)
	if err != nil {
		t.Fatal(err)
	}
	want, err := kmeans.TrainFrom(pts, dim, cent, opt)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := startFAISS(python, 1, pts, dim)
	if err != nil {
		t.Fatal(err)
	}
	got, cpu, err := lloydFAISS(ref, pts, cent, dim, k, iters)
	if cerr := ref.close(); cerr != nil {
		t.Errorf("closing faiss: %v", cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if cpu <= 0 {
		t.Errorf("faiss reported %v CPU seconds", cpu)
	}
	if got.Iterations != want.Iterations || got.Converged != want.Converged {
		t.Errorf("faiss Lloyd: %d iterations (converged %v), exact Lloyd %d (%v)", got.Iterations, got.Converged, want.Iterations, want.Converged)
	}
	if rel := math.Abs(got.Objective/want.Objective - 1); rel > 1e-5 {
		t.Errorf("objective %v, exact Lloyd %v (relative difference %.2g)", got.Objective, want.Objective, rel)
	}
	var worst float64
	for i, v := range got.Centroids {
		worst = max(worst, math.Abs(float64(v-want.Centroids[i])))
	}
	if worst > 1e-2 {
		t.Errorf("centroids differ by up to %v", worst)
	}
	// The initial centroids are random points, so Lloyd must have moved them.
	if got.Objective >= objective(cent, pts, 1) {
		t.Errorf("objective %v did not fall from the start's %v", got.Objective, objective(cent, pts, 1))
	}
}

// TestFAISSANNFullProbeIsExact checks faissANN's protocol: an IVF probing
// every list finds the exact nearest word of every query, and the index
// size it reports holds at least the words' copy.
func TestFAISSANNFullProbeIsExact(t *testing.T) {
	python := faissPython(t)
	const k, q, lists = 2000, 300, 20
	words, queries := synthetic(k, 11), synthetic(q, 12)
	res, err := faissANN(python, 1, words, queries, fmt.Sprintf("ivf:%d:%d", lists, lists))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	if res[0].bytes < 4*len(words) {
		t.Errorf("index of %d bytes, less than its %d words' %d", res[0].bytes, k, 4*len(words))
	}
	for i, l := range res[0].labels {
		want, wd := nn.Nearest(words, dim, queries[i*dim:(i+1)*dim])
		if int(l) != want && sqDistF(words[int(l)*dim:(int(l)+1)*dim], queries[i*dim:(i+1)*dim]) > wd {
			t.Fatalf("query %d: word %d, want %d", i, l, want)
		}
	}
}
