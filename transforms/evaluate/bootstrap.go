package evaluate

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"sort"
)

// Interval is a confidence interval [Lo, Hi] for a mean, such as a
// method's mAP over the evaluation's queries.
type Interval struct {
	Lo, Hi float64
}

// Contains reports whether x lies in the closed interval, that is whether
// the interval is consistent with a mean of x.
func (iv Interval) Contains(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// Bootstrap returns the percentile bootstrap confidence interval, at
// confidence level `level` (0.95 for a 95% interval), of the mean of
// values: typically one method's per-query average precision or
// precision@10, whose mean the report gives as its mAP or P@10. Why: that
// mean depends on which queries the evaluation happened to draw, and over a
// few hundred queries two methods' means can differ by that chance alone;
// the interval shows how far.
//
// The queries are the sampling unit, so they are what is resampled. Each
// of B = resamples bootstrap samples draws n = len(values) values with
// replacement, and θ*_b is its mean. With the means sorted,
// θ*_(1) ≤ … ≤ θ*_(B), and α = 1 − level, the interval is
//
//	[θ*_(k), θ*_(B+1−k)],   k = max(1, ⌊(B+1)·α/2⌋),
//
// the empirical α/2 and 1 − α/2 percentiles of the bootstrap distribution
// of the mean (Efron and Tibshirani, "An Introduction to the Bootstrap",
// 1993, chapter 13), with the usual (B+1) rule for a B·α/2 that is not a
// whole number: B = 999 and level 0.95 give the 25th and 975th means,
// B = 1000 the 25th and 976th. The ends are the k-th smallest and k-th
// largest means, so the interval of the negated values is exactly the
// negated interval. Ties need no rule: the ends are order statistics, and
// tied means share them. When (B+1)·α/2 < 1 there are too few resamples
// for the level and k is raised to 1: the interval runs from the smallest
// to the largest mean, wider rather than narrower than asked. Efron and
// Tibshirani advise B of 1000 or more for percentile intervals, far more
// than a standard error needs, as the ends are tail percentiles. The
// percentile interval is only first-order accurate: for a small, skewed
// sample its coverage falls somewhat short of the level (their chapter 14
// corrects that, at more cost).
//
// A seed gives the same interval on every run: the resampled indices come
// from a PCG generator seeded with it, and the same seed resamples the same
// queries as PairedBootstrap does. The means are summed as deviations from
// the first value, so that a constant sample's interval is exactly that
// constant, of width 0, and cancellation is small for values far from 0.
// Bootstrap allocates the slice of B means and nothing per resample.
//
// With no values the interval is the zero Interval, as Summary.Mean's means
// are 0 for no queries; a NaN or infinite value makes both ends NaN.
// Bootstrap panics if resamples < 1 or level is not strictly between 0 and
// 1.
func Bootstrap(values []float64, resamples int, seed uint64, level float64) Interval {
	if err := checkBootstrap(resamples, level); err != nil {
		panic(err.Error())
	}
	if len(values) == 0 {
		return Interval{}
	}
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Interval{math.NaN(), math.NaN()}
		}
	}
	return percentiles(resampleMeans(nil, values, resamples, seed), level)
}

// Paired compares two methods on the same queries: method b against method
// a.
type Paired struct {
	// Diff is the mean over queries of b − a (b's mAP minus a's, say).
	Diff float64
	// Interval is the percentile bootstrap interval of Diff.
	Interval
	// P is the two-sided bootstrap p-value of "no difference": the share of
	// resampled mean differences on the other side of 0 from Diff (0
	// itself included), doubled and capped at 1; 1 when Diff is 0. Its
	// resolution is 1/B: P = 0 means that no resample crossed 0, read it
	// as P < 1/B.
	P float64
	// Significant reports whether Interval excludes 0.
	Significant bool
}

// PairedBootstrap compares method b with method a, where a[i] and b[i] are
// the same query's metric (average precision, say) under the two methods:
// it returns the mean difference b − a, its percentile bootstrap interval
// at level `level`, a bootstrap p-value, and whether the interval excludes
// 0.
//
// Why paired: per-query metrics of two methods are strongly correlated,
// since a query that is hard for one is usually hard for the other. The
// variance of the difference of means is Var(ā) + Var(b̄) − 2·Cov(ā, b̄);
// each resample here draws query indices once and uses them for both
// methods, so the bootstrap keeps the covariance term that two separate
// intervals (or resampling the methods independently) ignore. Two methods
// whose own intervals overlap widely can still differ significantly query
// by query. Resampling the pairs is the bootstrap of the mean
// of the differences d_i = b[i] − a[i], so the interval is Bootstrap's, of
// d, with the same k, and with the same seed the resampled queries are
// those Bootstrap(a, …) and Bootstrap(b, …) draw.
//
// P is the p-value dual to the percentile interval (on bootstrap tests see
// Efron and Tibshirani, "An Introduction to the Bootstrap", 1993, chapter
// 16): over the B resampled mean differences θ*_r, with Diff > 0 it is
// 2·#{r : θ*_r ≤ 0}/B (with Diff < 0, θ*_r ≥ 0 counts), roughly the
// smallest 1 − level at which the interval would reach 0. Resampled
// differences exactly 0 count against Diff, which errs towards "not
// significant". Significant and P < 1 − level agree exactly when
// k = ⌈B·α/2⌉, as for B = 999, 1000 or 2000 at level 0.95, and up to one
// resample otherwise.
//
// PairedBootstrap returns an error if a and b differ in length or are
// empty, a difference is NaN or infinite, resamples < 1, or level is not
// strictly between 0 and 1.
func PairedBootstrap(a, b []float64, resamples int, seed uint64, level float64) (Paired, error) {
	switch {
	case len(a) != len(b):
		return Paired{}, fmt.Errorf("evaluate: paired bootstrap of %d and %d values: the two methods must be scored on the same queries", len(a), len(b))
	case len(a) == 0:
		return Paired{}, errors.New("evaluate: paired bootstrap of no queries")
	}
	if err := checkBootstrap(resamples, level); err != nil {
		return Paired{}, err
	}
	shift := b[0] - a[0]
	var sum float64
	for i := range a {
		d := b[i] - a[i]
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return Paired{}, fmt.Errorf("evaluate: paired bootstrap: query %d has values %v and %v, want finite numbers", i, a[i], b[i])
		}
		sum += d - shift
	}
	diff := shift + sum/float64(len(a))
	means := resampleMeans(a, b, resamples, seed)
	p := Paired{Diff: diff, Interval: percentiles(means, level)}
	p.Significant = !p.Contains(0)
	var other int
	switch {
	case diff > 0: // resampled differences ≤ 0
		other = sort.Search(len(means), func(i int) bool { return means[i] > 0 })
	case diff < 0: // resampled differences ≥ 0
		other = len(means) - sort.Search(len(means), func(i int) bool { return means[i] >= 0 })
	default:
		other = len(means)
	}
	p.P = min(1, 2*float64(other)/float64(len(means)))
	return p, nil
}

// bootstrapStream is the PCG stream (its second seed word) of the
// resampling generator; any constant would do, but changing it changes
// every interval.
const bootstrapStream = 0xb0075b0075b0075b

// checkBootstrap reports nonsense resampling options.
func checkBootstrap(resamples int, level float64) error {
	if resamples < 1 {
		return fmt.Errorf("evaluate: bootstrap with %d resamples, want at least 1", resamples)
	}
	if !(level > 0 && level < 1) {
		return fmt.Errorf("evaluate: bootstrap confidence level %v, want one strictly between 0 and 1 (0.95 for a 95%% interval)", level)
	}
	return nil
}

// resampleMeans returns, sorted, the means of resamples bootstrap
// resamples of x, where x_i = b[i] − a[i], or b[i] when a is nil; b is not
// empty. Both paths draw the same indices for the same seed.
//
// An index is the high word of a 64-bit draw times n (Lemire's
// multiply-shift): it skips the rejection step that makes it exactly
// uniform, which would change the index with probability below n/2⁶⁴ —
// nothing a bootstrap can see — and it keeps the inner loop free of
// interface calls.
func resampleMeans(a, b []float64, resamples int, seed uint64) []float64 {
	n := len(b)
	src := rand.NewPCG(seed, bootstrapStream)
	shift := b[0]
	if a != nil {
		shift -= a[0]
	}
	means := make([]float64, resamples)
	for k := range means {
		var s float64
		if a == nil {
			for range n {
				j, _ := bits.Mul64(src.Uint64(), uint64(n))
				s += b[j] - shift
			}
		} else {
			for range n {
				j, _ := bits.Mul64(src.Uint64(), uint64(n))
				s += (b[j] - a[j]) - shift
			}
		}
		means[k] = shift + s/float64(n)
	}
	sort.Float64s(means)
	return means
}

// percentiles returns the percentile interval at level of the sorted
// bootstrap means: the k-th smallest and k-th largest, k as Bootstrap
// documents. The 1e-9 keeps a whole (B+1)·α/2 whole despite the rounding
// of 1 − level (B = 999, level 0.9 would give 49.999… for 50).
func percentiles(sorted []float64, level float64) Interval {
	B := len(sorted)
	k := max(1, int(math.Floor(float64(B+1)*(1-level)/2+1e-9)))
	return Interval{Lo: sorted[k-1], Hi: sorted[B-k]}
}
