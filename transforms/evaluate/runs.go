package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/report"
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
// no comparison. The changes are sorted by method, input and set; each
// has Queries (paired: evaluated by both runs), EarlierQueries and
// LaterQueries (the numbers each run evaluated).
//
// It holds one entry per query of the earlier run (its image id, both
// runs' average precisions and whether the later run scored it), never
// the rows themselves. A query listed twice under one method and set is
// an error: the tables are written one row per query.
func CompareRuns(earlier, later RowsFunc, seed uint64) ([]report.PairedChange, error) {
	type set struct{ method, input, split string }
	// pair is one query's average precision in the earlier run (a) and,
	// once seen, in the later run (b).
	type pair struct {
		a, b float64
		seen bool
	}
	pairs := map[set]map[string]pair{}
	err := earlier(func(r *formats.QueryScore) error {
		k := set{r.Method, r.Input, r.Split}
		if pairs[k] == nil {
			pairs[k] = map[string]pair{}
		}
		if _, dup := pairs[k][r.ImageID]; dup {
			return fmt.Errorf("the earlier run scored query %s twice under %s (%s queries)", r.ImageID, r.Method, r.Split)
		}
		pairs[k][r.ImageID] = pair{a: r.AP}
		return nil
	})
	if err != nil {
		return nil, err
	}
	scored := map[set]int{}
	err = later(func(r *formats.QueryScore) error {
		k := set{r.Method, r.Input, r.Split}
		ps, ok := pairs[k]
		if !ok {
			return nil
		}
		scored[k]++
		p, ok := ps[r.ImageID]
		if !ok {
			return nil
		}
		if p.seen {
			return fmt.Errorf("the later run scored query %s twice under %s (%s queries)", r.ImageID, r.Method, r.Split)
		}
		p.b, p.seen = r.AP, true
		ps[r.ImageID] = p
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
	var out []report.PairedChange
	for _, k := range keys {
		ps := pairs[k]
		// In id order: the resampled queries then depend on neither run's
		// sharding.
		n := min(len(ps), scored[k])
		a, b := make([]float64, 0, n), make([]float64, 0, n)
		for _, id := range slices.Sorted(maps.Keys(ps)) {
			if p := ps[id]; p.seen {
				a, b = append(a, p.a), append(b, p.b)
			}
		}
		c := report.PairedChange{Method: k.method, Input: k.input, Split: k.split, Queries: int64(len(a)), EarlierQueries: int64(len(ps)), LaterQueries: int64(scored[k])}
		if len(a) > 0 {
			d, err := PairedBootstrap(a, b, Resamples, seed, Level)
			if err != nil {
				return nil, fmt.Errorf("comparing %s on %s queries with the earlier run: %w", k.method, k.split, err)
			}
			c.MAPDiff, c.MAPDiffLow, c.MAPDiffHigh, c.MAPDiffP, c.Significant = d.Diff, d.Lo, d.Hi, d.P, d.Significant
		}
		out = append(out, c)
	}
	return out, nil
}
