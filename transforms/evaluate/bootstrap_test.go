package evaluate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
)

// rankingAPs returns the average precision of n synthetic queries. Each
// ranks 100 items, 1 to 10 of them relevant, by a noisy score in which
// relevant items get a query-specific head start drawn from [0, 3): queries
// range from hopeless to easy, so the APs spread over (0, 1] with a skewed,
// lumpy distribution, as real ones do.
func rankingAPs(r *rand.Rand, n int) []float64 {
	type item struct {
		score float64
		rel   bool
	}
	aps := make([]float64, n)
	items := make([]item, 100)
	rel := make([]bool, len(items))
	for q := range aps {
		relevant := 1 + r.IntN(10)
		lift := 3 * r.Float64()
		for i := range items {
			items[i] = item{score: r.NormFloat64(), rel: i < relevant}
			if items[i].rel {
				items[i].score += lift
			}
		}
		slices.SortFunc(items, func(a, b item) int {
			switch {
			case a.score > b.score:
				return -1
			case a.score < b.score:
				return 1
			}
			return 0
		})
		for i, it := range items {
			rel[i] = it.rel
		}
		aps[q] = AveragePrecision(rel, relevant)
	}
	return aps
}

// draw returns n values drawn with replacement from population: an
// i.i.d. sample whose true mean is exactly the population's mean.
func draw(r *rand.Rand, population []float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = population[r.IntN(len(population))]
	}
	return s
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// TestBootstrapCoverage: over 200 independent samples of 100 queries from
// a synthetic ranking problem of known mean AP, the 95% interval covers the
// true mean in about 95% of them, the 80% interval in about 80%.
func TestBootstrapCoverage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	population := rankingAPs(r, 5000)
	truth := mean(population)
	const reps = 200
	for _, tc := range []struct {
		level, lo, hi float64
	}{
		{0.95, 0.88, 0.99},
		{0.80, 0.70, 0.89},
	} {
		covered := 0
		for rep := range reps {
			iv := Bootstrap(draw(r, population, 100), 1000, uint64(rep), tc.level)
			if iv.Contains(truth) {
				covered++
			}
		}
		if c := float64(covered) / reps; c < tc.lo || c > tc.hi {
			t.Errorf("level %v: the interval covered the true mean AP %.4f in %d of %d samples (%.3f), want a share in [%v, %v]",
				tc.level, truth, covered, reps, c, tc.lo, tc.hi)
		}
	}
}

// TestBootstrapWidthShrinksAsRootN: 16 times the queries, a quarter of the
// width (averaged over 20 samples of each size).
func TestBootstrapWidthShrinksAsRootN(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	population := rankingAPs(r, 5000)
	width := func(n int) float64 {
		var w float64
		for rep := range 20 {
			iv := Bootstrap(draw(r, population, n), 1000, uint64(rep), 0.95)
			w += iv.Hi - iv.Lo
		}
		return w / 20
	}
	small, large := width(100), width(1600)
	if ratio := small / large; ratio < 3.6 || ratio > 4.4 {
		t.Errorf("mean width %.4f at 100 queries, %.4f at 1600: ratio %.2f, want about √16 = 4", small, large, ratio)
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	values := rankingAPs(rand.New(rand.NewPCG(5, 6)), 300)
	in := slices.Clone(values)
	a := Bootstrap(values, 1000, 42, 0.95)
	if b := Bootstrap(values, 1000, 42, 0.95); a != b {
		t.Errorf("seed 42 gave %+v, then %+v", a, b)
	}
	if c := Bootstrap(values, 1000, 43, 0.95); a == c {
		t.Errorf("seeds 42 and 43 gave the same interval %+v", a)
	}
	if !slices.Equal(in, values) {
		t.Error("Bootstrap changed its input")
	}
	if m := mean(values); !a.Contains(m) || a.Lo >= a.Hi {
		t.Errorf("interval %+v around the sample mean %v", a, m)
	}
}

// TestBootstrapSymmetric: the ends are the k-th smallest and k-th largest
// resampled means, so negating the values negates the interval exactly.
func TestBootstrapSymmetric(t *testing.T) {
	values := rankingAPs(rand.New(rand.NewPCG(7, 8)), 50)
	neg := make([]float64, len(values))
	for i, v := range values {
		neg[i] = -v
	}
	for _, b := range []int{999, 1000, 37} {
		for _, level := range []float64{0.95, 0.9, 0.5} {
			iv, in := Bootstrap(values, b, 9, level), Bootstrap(neg, b, 9, level)
			if in.Lo != -iv.Hi || in.Hi != -iv.Lo {
				t.Errorf("B=%d level %v: interval %+v, of the negated values %+v", b, level, iv, in)
			}
		}
	}
}

// TestBootstrapPercentiles checks the ends where the bootstrap distribution
// is known: on 0s and 1s a resample's mean is a binomial share of ones.
func TestBootstrapPercentiles(t *testing.T) {
	// With 0s and 1s in equal numbers, n = 400 and B = 999, the means are
	// Binomial(400, ½)/400: the 2.5% and 97.5% percentiles are about
	// ½ ∓ 1.96·√(¼/400) = ½ ∓ 0.049.
	values := make([]float64, 400)
	for i := range values {
		values[i] = float64(i % 2)
	}
	iv := Bootstrap(values, 999, 1, 0.95)
	if math.Abs(iv.Lo-0.451) > 0.006 || math.Abs(iv.Hi-0.549) > 0.006 {
		t.Errorf("95%% interval %+v, want about [0.451, 0.549]", iv)
	}
	// With too few resamples for the level the interval spans every mean.
	few := Bootstrap(values, 10, 1, 0.95)
	for _, level := range []float64{0.5, 0.9} {
		if iv := Bootstrap(values, 10, 1, level); iv.Lo < few.Lo || iv.Hi > few.Hi {
			t.Errorf("10 resamples: level %v gave %+v, outside the level 0.95 interval %+v (all the means)", level, iv, few)
		}
	}
	if iv := Bootstrap([]float64{0.2, 0.8}, 1000, 1, 0.999); iv.Lo != 0.2 || math.Abs(iv.Hi-0.8) > eps {
		t.Errorf("two values, 1000 resamples, level 0.999: %+v, want [0.2, 0.8] (the all-0.2 and all-0.8 resamples)", iv)
	}
}

// TestPercentileRule pins the order statistics taken from B sorted means:
// the k-th smallest and k-th largest, k = max(1, ⌊(B+1)·(1 − level)/2⌋).
func TestPercentileRule(t *testing.T) {
	for _, tc := range []struct {
		b      int
		level  float64
		lo, hi float64 // 1-based ranks
	}{
		{1000, 0.95, 25, 976},
		{999, 0.95, 25, 975},
		{999, 0.9, 50, 950}, // (B+1)·α/2 = 50 despite 1 − 0.9 < 0.1
		{2000, 0.95, 50, 1951},
		{19, 0.9, 1, 19},
		{10, 0.95, 1, 10}, // k = 0 raised to 1
		{1, 0.95, 1, 1},
		{1000, 0.5, 250, 751},
	} {
		ranks := make([]float64, tc.b)
		for i := range ranks {
			ranks[i] = float64(i + 1)
		}
		if got := percentiles(ranks, tc.level); got != (Interval{tc.lo, tc.hi}) {
			t.Errorf("B=%d, level %v: ranks %v and %v, want %v and %v", tc.b, tc.level, got.Lo, got.Hi, tc.lo, tc.hi)
		}
	}
}

// TestBootstrapDegenerate: a constant sample has a zero-width interval at
// exactly the constant; no values, the zero interval; a NaN, NaN ends.
func TestBootstrapDegenerate(t *testing.T) {
	for _, c := range []float64{0.1, 1.0 / 3, 0, 1e9 + 0.1} {
		for _, n := range []int{1, 7, 1000} {
			values := make([]float64, n)
			for i := range values {
				values[i] = c
			}
			if iv := Bootstrap(values, 500, 3, 0.95); iv.Lo != c || iv.Hi != c {
				t.Errorf("%d values of %v: interval %+v, want [%v, %v]", n, c, iv, c, c)
			}
		}
	}
	if iv := Bootstrap(nil, 1000, 1, 0.95); iv != (Interval{}) {
		t.Errorf("no values: %+v, want the zero interval", iv)
	}
	if iv := Bootstrap([]float64{0.5, math.NaN()}, 1000, 1, 0.95); !math.IsNaN(iv.Lo) || !math.IsNaN(iv.Hi) {
		t.Errorf("a NaN value: %+v, want NaN ends", iv)
	}
	if iv := Bootstrap([]float64{0.5, math.Inf(1)}, 1000, 1, 0.95); !math.IsNaN(iv.Lo) || !math.IsNaN(iv.Hi) {
		t.Errorf("an infinite value: %+v, want NaN ends", iv)
	}
	testkit.MustPanic(t, "0 resamples", "0 resamples", func() { Bootstrap([]float64{1}, 0, 1, 0.95) })
	testkit.MustPanic(t, "level 1", "level 1,", func() { Bootstrap([]float64{1}, 10, 1, 1) })
	testkit.MustPanic(t, "level 0", "level 0,", func() { Bootstrap([]float64{1}, 10, 1, 0) })
	testkit.MustPanic(t, "level 95", "level 95,", func() { Bootstrap([]float64{1}, 10, 1, 95) })
	testkit.MustPanic(t, "level NaN", "level NaN,", func() { Bootstrap([]float64{1}, 10, 1, math.NaN()) })
}

// uniformWithNoise returns n values uniform on [0, 1) and, beside them, the
// same values shifted by shift plus Gaussian noise of deviation sd: two
// methods scored on the same queries.
func uniformWithNoise(r *rand.Rand, n int, shift, sd float64) (a, b []float64) {
	a, b = make([]float64, n), make([]float64, n)
	for i := range a {
		a[i] = r.Float64()
		b[i] = a[i] + shift + sd*r.NormFloat64()
	}
	return a, b
}

func TestPairedIdentical(t *testing.T) {
	a := rankingAPs(rand.New(rand.NewPCG(10, 11)), 200)
	p, err := PairedBootstrap(a, slices.Clone(a), 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if p.Diff != 0 || p.Interval != (Interval{}) || p.P != 1 || p.Significant {
		t.Errorf("identical methods: %+v, want Diff 0, interval [0, 0], P 1, not significant", p)
	}
}

// TestPairedShift: b = a + 0.05 with noise of deviation 0.005 is a
// significant improvement, and the interval brackets the true 0.05.
func TestPairedShift(t *testing.T) {
	a, b := uniformWithNoise(rand.New(rand.NewPCG(12, 13)), 100, 0.05, 0.005)
	p, err := PairedBootstrap(a, b, 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Significant || p.P >= 0.01 || math.Abs(p.Diff-0.05) > 0.002 || !p.Contains(0.05) || p.Lo >= p.Hi {
		t.Errorf("b = a + 0.05 ± 0.005: %+v, want significant, P < 0.01, Diff ≈ 0.05 inside the interval", p)
	}
	// Swapping the methods negates the difference and keeps the P-value.
	q, err := PairedBootstrap(b, a, 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if q.Diff != -p.Diff || q.Lo != -p.Hi || q.Hi != -p.Lo || q.P != p.P || q.Significant != p.Significant {
		t.Errorf("a against b: %+v; b against a: %+v; want the negation", q, p)
	}
}

// TestPairedBeatsUnpaired: when the two methods' per-query values are
// strongly correlated, their separate intervals overlap widely, yet the
// paired bootstrap finds b's small lead significant, since it resamples
// each query's difference rather than two independent means.
func TestPairedBeatsUnpaired(t *testing.T) {
	a, b := uniformWithNoise(rand.New(rand.NewPCG(14, 15)), 200, 0.02, 0.01)
	ia, ib := Bootstrap(a, 1000, 1, 0.95), Bootstrap(b, 1000, 1, 0.95)
	if !ia.Contains(mean(b)) || !ib.Contains(mean(a)) {
		t.Fatalf("intervals %+v (a) and %+v (b) do not overlap so far that each holds the other's mean: the case shows nothing", ia, ib)
	}
	p, err := PairedBootstrap(a, b, 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Significant || p.P >= 0.01 {
		t.Errorf("paired: %+v, want significant with P < 0.01 despite the overlapping intervals %+v and %+v", p, ia, ib)
	}
}

// TestPairedNullCalibration: when the methods differ only by noise of mean
// 0, about 5% of 200 comparisons come out significant at 95%, and
// Significant agrees with P < 0.05 (exactly so for B = 1000).
func TestPairedNullCalibration(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	const reps = 200
	significant := 0
	for rep := range reps {
		a, b := uniformWithNoise(r, 100, 0, 0.05)
		p, err := PairedBootstrap(a, b, 1000, uint64(rep), 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if p.Significant != (p.P < 0.05) {
			t.Errorf("rep %d: %+v: Significant and P < 0.05 disagree", rep, p)
		}
		if p.Significant {
			significant++
		}
	}
	if s := float64(significant) / reps; s < 0.01 || s > 0.11 {
		t.Errorf("no true difference, yet %d of %d comparisons significant (%.3f), want about 5%%", significant, reps, s)
	}
}

func TestPairedErrors(t *testing.T) {
	ok := []float64{0.1, 0.2, 0.3}
	for _, tc := range []struct {
		name      string
		a, b      []float64
		resamples int
		level     float64
		want      string
	}{
		{"length mismatch", ok, ok[:2], 1000, 0.95, "3 and 2 values"},
		{"empty", nil, nil, 1000, 0.95, "no queries"},
		{"no resamples", ok, ok, 0, 0.95, "0 resamples"},
		{"level 1", ok, ok, 1000, 1, "level 1,"},
		{"NaN", ok, []float64{0.1, math.NaN(), 0.3}, 1000, 0.95, "query 1 has values 0.2 and NaN"},
		{"infinite", []float64{math.Inf(-1), 0, 0}, ok, 1000, 0.95, "query 0 has values -Inf and 0.1"},
	} {
		_, err := PairedBootstrap(tc.a, tc.b, tc.resamples, 1, tc.level)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

func BenchmarkBootstrap(b *testing.B) {
	values := rankingAPs(rand.New(rand.NewPCG(1, 1)), 10_000)
	b.ReportAllocs()
	for b.Loop() {
		benchSink = Bootstrap(values, 1000, 1, 0.95)
	}
}

var benchSink Interval
