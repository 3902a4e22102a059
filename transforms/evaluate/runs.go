package evaluate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/bowline/bowline/formats"
)

// Row returns q's scores as a row of the run's per-query table
// (formats.QueryScore), under the named method and input, in its query
// set (HeldOut or Training).
func (q QueryScore) Row(method, input string) formats.QueryScore {
	set := Training
	if q.Held {
		set = HeldOut
	}
	return formats.QueryScore{Method: method, Input: input, Split: set, ImageID: q.ID, Label: q.Label, AP: q.AP, P10: q.P10, NDCG10: q.NDCG10}
}

// RunChange is one method's paired comparison of two runs over one query
// set: its average precision in the later run against the earlier run's on
// the queries both evaluated.
type RunChange struct {
	Method, Input, Split string
	// Queries is the number of queries paired: those of the set both runs
	// evaluated. Earlier and Later are the numbers each run evaluated.
	Queries, Earlier, Later int
	// Paired is the later run's mean AP minus the earlier run's over the
	// paired queries (PairedBootstrap); zero when no query pairs.
	Paired
}

// RowsFunc calls fn on every row of a run's per-query table, in any
// order, and returns the first error.
type RowsFunc func(fn func(*formats.QueryScore) error) error

// CompareRuns pairs the per-query scores of two runs (formats.QueryScore
// rows, earlier and later) by method, input, query set and image id, and
// compares the later with the earlier, method by method and set by set,
// with PairedBootstrap (Resamples, Level and seed, as Compare compares a
// learner with its baseline within a run): the mean difference of average
// precision over the queries both evaluated, its 95% interval and
// p-value. A method and set of the later run that the earlier run lacks
// are left out; one both have with no query in common has Queries 0 and
// no comparison. The changes are sorted by method, input and set.
//
// It holds the earlier run's average precisions by image id and the
// paired values, never the rows themselves. A query
// listed twice under one method and set is an error: the tables are
// written one row per query.
func CompareRuns(earlier, later RowsFunc, seed uint64) ([]RunChange, error) {
	type set struct{ method, input, split string }
	before := map[set]map[string]float64{}
	err := earlier(func(r *formats.QueryScore) error {
		k := set{r.Method, r.Input, r.Split}
		if before[k] == nil {
			before[k] = map[string]float64{}
		}
		if _, dup := before[k][r.ImageID]; dup {
			return fmt.Errorf("the earlier run scored query %s twice under %s (%s queries)", r.ImageID, r.Method, r.Split)
		}
		before[k][r.ImageID] = r.AP
		return nil
	})
	if err != nil {
		return nil, err
	}
	type pair struct {
		id   string
		a, b float64
	}
	pairs, scored := map[set][]pair{}, map[set]int{}
	err = later(func(r *formats.QueryScore) error {
		k := set{r.Method, r.Input, r.Split}
		b, ok := before[k]
		if !ok {
			return nil
		}
		scored[k]++
		if a, ok := b[r.ImageID]; ok {
			pairs[k] = append(pairs[k], pair{r.ImageID, a, r.AP})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	keys := make([]set, 0, len(scored))
	for k := range scored {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y set) int {
		return cmp.Or(cmp.Compare(x.method, y.method), cmp.Compare(x.input, y.input), cmp.Compare(x.split, y.split))
	})
	var out []RunChange
	for _, k := range keys {
		c := RunChange{Method: k.method, Input: k.input, Split: k.split, Queries: len(pairs[k]), Earlier: len(before[k]), Later: scored[k]}
		if c.Queries > 0 {
			// In id order: the resampled queries then depend on neither
			// run's sharding.
			ps := pairs[k]
			slices.SortFunc(ps, func(x, y pair) int { return cmp.Compare(x.id, y.id) })
			for i := 1; i < len(ps); i++ {
				if ps[i].id == ps[i-1].id {
					return nil, fmt.Errorf("the later run scored query %s twice under %s (%s queries)", ps[i].id, k.method, k.split)
				}
			}
			a, b := make([]float64, len(ps)), make([]float64, len(ps))
			for i, p := range ps {
				a[i], b[i] = p.a, p.b
			}
			if c.Paired, err = PairedBootstrap(a, b, Resamples, seed, Level); err != nil {
				return nil, fmt.Errorf("comparing %s on %s queries with the earlier run: %w", k.method, k.split, err)
			}
		}
		out = append(out, c)
	}
	return out, nil
}
