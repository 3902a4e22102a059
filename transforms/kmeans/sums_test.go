package kmeans

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The stopping rule in its order: J = 0 first, then (after an update) a
// fixed point or a small relative improvement, then MaxIter.
func TestStop(t *testing.T) {
	o := Options{MaxIter: 3, Tol: 0.01}
	for _, tc := range []struct {
		name            string
		p               Progress
		prev            float64
		stop, converged bool
	}{
		{"start", Progress{Iteration: 0, Changed: 10, Objective: 5}, 0, false, false},
		{"start, J = 0", Progress{Iteration: 0, Changed: 10}, 0, true, true},
		{"start, nothing changed", Progress{Iteration: 0, Objective: 5}, 0, false, false},
		{"improving", Progress{Iteration: 1, Changed: 3, Objective: 5}, 6, false, false},
		{"fixed point", Progress{Iteration: 1, Objective: 5}, 6, true, true},
		{"unchanged labels, re-seeded", Progress{Iteration: 1, Reseeded: 1, Objective: 5}, 6, false, false},
		{"within Tol", Progress{Iteration: 2, Changed: 3, Objective: 5.96}, 6, true, true},
		{"worse", Progress{Iteration: 2, Changed: 3, Objective: 7}, 6, true, true},
		{"J = 0 after an update", Progress{Iteration: 2, Changed: 3}, 6, true, true},
		{"MaxIter", Progress{Iteration: 3, Changed: 3, Objective: 5}, 6, true, false},
		{"MaxIter, converged", Progress{Iteration: 3, Objective: 5}, 6, true, true},
		{"not a number", Progress{Iteration: 1, Changed: 3, Objective: math.NaN()}, 6, true, false},
	} {
		stop, converged := o.Stop(tc.p, tc.prev)
		if stop != tc.stop || converged != tc.converged {
			t.Errorf("%s: Stop = (%v, %v), want (%v, %v)", tc.name, stop, converged, tc.stop, tc.converged)
		}
	}
}

// shardedUpdate does what Update and Split do on the Sums of all clusters,
// a range of shard clusters at a time, as a distributed trainer does: each
// range's Sums from parts of the points merged, its update on its own rows,
// then the splits planned from the counts alone and applied to a copy of
// the rows they touch. It returns the new centroids and the empty clusters.
func shardedUpdate(old []float32, dim, k, shard int, data []float32, labels []int32, dist []float32, parts int) ([]float32, []int) {
	n := len(labels)
	counts := make([]int64, k)
	var empty []int
	next := make([][]float32, 0)
	for lo := 0; lo < k; lo += shard {
		hi := min(lo+shard, k)
		s := NewRangeSums(k, dim, lo, hi)
		for p := range parts {
			a, b := p*n/parts, (p+1)*n/parts
			ps := NewRangeSums(k, dim, lo, hi)
			ps.Add(data[a*dim:b*dim], labels[a:b], dist[a:b])
			s.Merge(ps)
		}
		cent := slices.Clone(old[lo*dim : hi*dim])
		empty = append(empty, Update(cent, s)...)
		copy(counts[lo:], s.Count)
		next = append(next, cent)
	}
	at := func(c int) []float32 { return next[c/shard][(c%shard)*dim : (c%shard+1)*dim] }
	pairs := PlanSplits(counts, empty)
	rows := map[int][]float32{}
	for _, c := range SplitRows(pairs) {
		rows[c] = slices.Clone(at(c))
	}
	ApplySplits(pairs, dim, func(c int) []float32 { return rows[c] })
	for c, r := range rows {
		copy(at(c), r)
	}
	return slices.Concat(next...), empty
}

// The Sums, update and splits of word ranges give the centroids of the
// whole, bit for bit, whatever the range size — dividing K or not, one
// cluster, more than K — with chains of splits (clusters split from a
// cluster split earlier) crossing the ranges.
func TestShardedUpdateEqualsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const k, dim, n = 23, 5, 90
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = float32(rng.IntN(256)) // integers: merged sums are exact in any order
	}
	labels := make([]int32, n)
	dist := make([]float32, n)
	for i := range labels {
		// Eight used clusters, one of them holding most points: fifteen
		// empty ones split off it, the first split's halves again.
		labels[i] = int32(3 * rng.IntN(8))
		if i%2 == 0 {
			labels[i] = 6
		}
		dist[i] = float32(rng.IntN(1000)) / 7
	}
	old := make([]float32, k*dim)
	for i := range old {
		old[i] = rng.Float32() * 100
	}
	whole := NewSums(k, dim)
	whole.Add(data, labels, dist)
	want := slices.Clone(old)
	wantEmpty := Update(want, whole)
	Split(want, dim, whole.Count, wantEmpty)
	if len(PlanSplits(whole.Count, wantEmpty)) != len(wantEmpty) || len(wantEmpty) != 15 {
		t.Fatalf("the test data split %d of %d empty clusters, want all 15", len(PlanSplits(whole.Count, wantEmpty)), len(wantEmpty))
	}
	for _, shard := range []int{1, 4, 5, 7, 23, 30} {
		for _, parts := range []int{1, 3} {
			got, empty := shardedUpdate(old, dim, k, shard, data, labels, dist, parts)
			if !slices.Equal(empty, wantEmpty) {
				t.Errorf("shards of %d, %d parts: empty %v, want %v", shard, parts, empty, wantEmpty)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Errorf("shards of %d, %d parts: centroid value %d = %v, want %v", shard, parts, i, got[i], want[i])
					break
				}
			}
		}
	}
}

// A range's Sums see only the points of its clusters, and the SSEs of the
// ranges add up to the whole's.
func TestRangeSums(t *testing.T) {
	s := NewRangeSums(4, 1, 1, 3)
	s.Add([]float32{1, 2, 3, 4, 5}, []int32{0, 1, 2, 3, 1}, []float32{10, 20, 30, 40, 50})
	if !slices.Equal(s.Count, []int64{2, 1}) || !slices.Equal(s.Sum, []float64{7, 3}) || s.SSE != 100 || s.Hi() != 3 {
		t.Errorf("range sums %+v, want counts [2 1], sums [7 3], SSE 100", s)
	}
	s.AddCluster(2, 2, []int64{9})
	if !slices.Equal(s.Count, []int64{2, 3}) || !slices.Equal(s.Sum, []float64{7, 12}) {
		t.Errorf("after AddCluster %+v, want counts [2 3], sums [7 12]", s)
	}
	cent := []float32{0, 0}
	if empty := Update(cent, NewRangeSums(4, 1, 2, 4)); !slices.Equal(empty, []int{2, 3}) {
		t.Errorf("empty clusters of an empty range %v, want [2 3]", empty)
	}
}
