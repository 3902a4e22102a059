package kmeans

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/nn"
)

// TestAssignerSearches: each AssignOptions builds the search it names,
// with the labels and distances of that search built directly, for the
// options of the iteration; QuantizerIndexes builds the forest of an
// approximate vocabulary, with the IVF only when it was trained with one.
// AssignParallel gives Assign's answers on any number of goroutines.
func TestAssignerSearches(t *testing.T) {
	const k, dim, n = 300, 16, 500
	r := rand.New(rand.NewPCG(1, 2))
	cent := make([]float32, k*dim)
	for i := range cent {
		cent[i] = float32(r.NormFloat64())
	}
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	forest := nn.ForestOptions{Trees: 2, LeafSize: 4, Checks: 8, Seed: 5}
	ivf := nn.IVFOptions{Probes: 1, Seed: 6}
	assign := func(a func(labels []int32, dist []float32)) ([]int32, []float32) {
		labels, dist := slices.Repeat([]int32{-1}, n), make([]float32, n)
		a(labels, dist)
		return labels, dist
	}
	const iter = 3
	for _, c := range []struct {
		name string
		opt  AssignOptions
		want func(labels []int32, dist []float32)
	}{
		{"exact", AssignOptions{}, func(l []int32, d []float32) { nn.NewExact(cent, dim).Assign(data, l, d, nil) }},
		{"forest", AssignOptions{Approx: true, Forest: forest, IVF: ivf}, func(l []int32, d []float32) {
			f, err := nn.NewForest(cent, dim, forest.ForIteration(iter))
			if err != nil {
				t.Fatal(err)
			}
			f.Assign(data, l, d, new(nn.Search))
		}},
		{"ivf", AssignOptions{Approx: true, Forest: forest, UseIVF: true, IVF: ivf}, func(l []int32, d []float32) {
			v, err := TrainIVF(cent, dim, ivf.ForIteration(iter))
			if err != nil {
				t.Fatal(err)
			}
			v.Assign(data, l, d, nil)
		}},
	} {
		a, err := NewAssigner(cent, dim, c.opt.ForIteration(iter))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		gotL, gotD := assign(func(l []int32, d []float32) { a.Assign(data, l, d, new(AssignScratch)) })
		wantL, wantD := assign(c.want)
		if !slices.Equal(gotL, wantL) || !slices.Equal(gotD, wantD) {
			t.Errorf("%s: the Assigner's labels or distances differ from the search's own", c.name)
		}
		for _, w := range []int{1, 2, 3} {
			// From labels on entry, some kept: the count of changes too.
			prev := slices.Clone(wantL)
			for i := range prev {
				if i%3 == 0 {
					prev[i] = int32((i * 7) % k)
				}
			}
			labels, dist := slices.Clone(prev), make([]float32, n)
			wantC := a.Assign(data, labels, dist, new(AssignScratch))
			gotL, gotD := slices.Clone(prev), make([]float32, n)
			if got := a.AssignParallel(data, gotL, gotD, make([]AssignScratch, w)); got != wantC ||
				!slices.Equal(gotL, labels) || !slices.Equal(gotD, dist) {
				t.Errorf("%s: AssignParallel on %d goroutines changed %d labels, Assign %d, or their labels or distances differ", c.name, w, got, wantC)
			}
		}
	}
	exactL, _ := assign(func(l []int32, d []float32) { nn.NewExact(cent, dim).Assign(data, l, d, nil) })
	ivfL, _ := assign(func(l []int32, d []float32) {
		a, err := NewAssigner(cent, dim, AssignOptions{Approx: true, UseIVF: true, IVF: ivf})
		if err != nil {
			t.Fatal(err)
		}
		a.Assign(data, l, d, new(AssignScratch))
	})
	if slices.Equal(exactL, ivfL) {
		t.Fatal("one probe of the IVF finds every nearest centroid: the test cannot tell the searches apart")
	}

	for _, c := range []struct {
		name              string
		opt               AssignOptions
		hasForest, hasIVF bool
	}{
		{"exact", AssignOptions{UseIVF: true, IVF: ivf}, false, false},
		{"forest", AssignOptions{Approx: true, Forest: forest}, true, false},
		{"ivf", AssignOptions{Approx: true, Forest: forest, UseIVF: true, IVF: ivf}, true, true},
	} {
		f, v, err := QuantizerIndexes(cent, dim, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if (f != nil) != c.hasForest || (v != nil) != c.hasIVF {
			t.Errorf("%s: forest %v, IVF %v; want %v, %v", c.name, f != nil, v != nil, c.hasForest, c.hasIVF)
		}
	}
}
