package itq_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/bowline/bowline/learners/itq"
)

func TestPackAndHamming(t *testing.T) {
	tests := []struct {
		name  string
		v     []float64
		words []uint64
	}{
		{"empty", nil, []uint64{}},
		{"signs", []float64{1, -1, 0, -0.5}, []uint64{0b0101}},
		{"nan is 0", []float64{math.NaN(), 2}, []uint64{0b10}},
		{"65 bits", append(make([]float64, 64), 1), []uint64{1<<64 - 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := itq.Pack(tc.v, nil)
			if !slices.Equal(got, tc.words) {
				t.Errorf("Pack(%v) = %b, want %b", tc.v, got, tc.words)
			}
			for j := range tc.v {
				if want := tc.v[j] >= 0; got.Bit(j) != want {
					t.Errorf("bit %d = %v, want %v", j, got.Bit(j), want)
				}
			}
		})
	}
	// Reuse: a dirty destination is cleared, not or-ed into.
	dst := itq.Code{^uint64(0), ^uint64(0)}
	got := itq.Pack([]float64{-1, 1}, dst)
	if len(got) != 1 || got[0] != 0b10 || &got[0] != &dst[0] {
		t.Errorf("Pack into a dirty buffer = %b (reused %v), want [10] in place", got, &got[0] == &dst[0])
	}

	ham := []struct {
		a, b itq.Code
		want int
	}{
		{itq.Code{0}, itq.Code{0}, 0},
		{itq.Code{0b1011}, itq.Code{0b0110}, 3},
		{itq.Code{1<<64 - 1, 1}, itq.Code{0, 0}, 65},
	}
	for _, tc := range ham {
		if got := itq.Hamming(tc.a, tc.b); got != tc.want {
			t.Errorf("Hamming(%b, %b) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Hamming of codes of different lengths did not panic")
		}
	}()
	itq.Hamming(itq.Code{0}, itq.Code{0, 0})
}

func TestRank(t *testing.T) {
	q := itq.Code{0b0000}
	db := []itq.Code{{0b0111}, {0b0001}, {0b0000}, {0b0011}, {0b0100}, {0b1111}}
	want := []int{2, 1, 4, 3, 0, 5} // distances 3,1,0,2,1,4; ties by index
	if got := itq.Rank(q, db); !slices.Equal(got, want) {
		t.Errorf("Rank = %v, want %v", got, want)
	}
}

// clusters draws n points in d dimensions from k isotropic Gaussian
// clusters (centres with per-coordinate sd spread, points with sd noise)
// and returns them with their cluster labels; labels cycle so that the
// order of rows says nothing about the label.
func clusters(rng *rand.Rand, centres *mat.Dense, n int, noise float64) (*mat.Dense, []int) {
	k, d := centres.Dims()
	X := mat.NewDense(n, d, nil)
	labels := make([]int, n)
	for i := range n {
		c := rng.IntN(k)
		labels[i] = c
		for j := range d {
			X.Set(i, j, centres.At(c, j)+noise*rng.NormFloat64())
		}
	}
	return X, labels
}

func randomCentres(rng *rand.Rand, k, d int, spread float64) *mat.Dense {
	C := mat.NewDense(k, d, nil)
	for i := range k {
		for j := range d {
			C.Set(i, j, spread*rng.NormFloat64())
		}
	}
	return C
}

// hammingMAP is the mean over queries of the average precision of the
// Hamming ranking of the database (relevant = same label), ties broken by
// database index as Rank does.
func hammingMAP(t *testing.T, m *itq.Model, db, queries *mat.Dense, dbLabels, qLabels []int) float64 {
	t.Helper()
	dbCodes, err := m.EncodeAll(db)
	if err != nil {
		t.Fatal(err)
	}
	qCodes, err := m.EncodeAll(queries)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for qi, q := range qCodes {
		var hits, ap float64
		for r, i := range itq.Rank(q, dbCodes) {
			if dbLabels[i] == qLabels[qi] {
				hits++
				ap += hits / float64(r+1)
			}
		}
		if hits > 0 {
			sum += ap / hits
		}
	}
	return sum / float64(len(qCodes))
}

func TestLossNonIncreasingAndRotationOrthogonal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	centres := randomCentres(rng, 10, 32, 2)
	X, _ := clusters(rng, centres, 500, 1)
	for _, bits := range []int{8, 24, 32} {
		m, err := itq.Train(X, bits, itq.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		loss := m.Loss()
		if len(loss) != 50 {
			t.Fatalf("%d bits: %d loss values, want 50", bits, len(loss))
		}
		for i := 1; i < len(loss); i++ {
			if loss[i] > loss[i-1]*(1+1e-12) {
				t.Errorf("%d bits: loss rose at iteration %d: %v -> %v", bits, i, loss[i-1], loss[i])
			}
		}
		if !(loss[len(loss)-1] < loss[0]) {
			t.Errorf("%d bits: loss did not fall: first %v, last %v", bits, loss[0], loss[len(loss)-1])
		}
		R := m.Rotation()
		var RtR mat.Dense
		RtR.Mul(R.T(), R)
		if !mat.EqualApprox(&RtR, eye(bits), 1e-10) {
			t.Errorf("%d bits: RᵀR is not the identity", bits)
		}
		t.Logf("%d bits: quantisation loss %.1f -> %.1f", bits, loss[0], loss[len(loss)-1])
	}
}

func eye(n int) *mat.Dense {
	I := mat.NewDense(n, n, nil)
	for i := range n {
		I.Set(i, i, 1)
	}
	return I
}

func TestITQBeatsLSH(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const d, k = 48, 12
	centres := randomCentres(rng, k, d, 1.5)
	db, dbL := clusters(rng, centres, 1200, 1)
	q, qL := clusters(rng, centres, 150, 1)
	for _, bits := range []int{16, 32} {
		opt := itq.DefaultOptions()
		mi, err := itq.Train(db, bits, opt)
		if err != nil {
			t.Fatal(err)
		}
		ml, err := itq.TrainLSH(db, bits, opt)
		if err != nil {
			t.Fatal(err)
		}
		itqMAP := hammingMAP(t, mi, db, q, dbL, qL)
		lshMAP := hammingMAP(t, ml, db, q, dbL, qL)
		t.Logf("%d bits: mAP ITQ %.4f, LSH %.4f (chance ≈ %.3f)", bits, itqMAP, lshMAP, 1.0/k)
		if itqMAP <= lshMAP+0.05 {
			t.Errorf("%d bits: ITQ mAP %.4f does not beat LSH %.4f by 0.05", bits, itqMAP, lshMAP)
		}
	}
}

// informativeLowVariance makes data whose class signal sits in a few
// low-variance dimensions while the high-variance dimensions are noise, so
// that PCA (ITQ) looks at the wrong dimensions and only labels can point to
// the right ones.
func informativeLowVariance(rng *rand.Rand, n, k, signal, noiseDims int) (*mat.Dense, *mat.Dense, []int) {
	means := randomCentres(rng, k, signal, 1)
	d := signal + noiseDims
	X := mat.NewDense(n, d, nil)
	Y := mat.NewDense(n, k, nil)
	labels := make([]int, n)
	for i := range n {
		c := rng.IntN(k)
		labels[i] = c
		Y.Set(i, c, 1)
		for j := range signal {
			X.Set(i, j, means.At(c, j)+0.25*rng.NormFloat64())
		}
		for j := signal; j < d; j++ {
			X.Set(i, j, 3*rng.NormFloat64())
		}
	}
	return X, Y, labels
}

func TestCCAITQBeatsITQWithInformativeLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const k = 8
	// One draw, split into database (training) and queries, so that both
	// share the class means.
	all, allY, allL := informativeLowVariance(rng, 1150, k, 6, 30)
	db, Y, dbL := all.Slice(0, 1000, 0, 36).(*mat.Dense), allY.Slice(0, 1000, 0, k).(*mat.Dense), allL[:1000]
	q, qL := all.Slice(1000, 1150, 0, 36).(*mat.Dense), allL[1000:]
	const bits = 16
	opt := itq.DefaultOptions()
	mi, err := itq.Train(db, bits, opt)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := itq.TrainCCA(db, Y, bits, opt)
	if err != nil {
		t.Fatal(err)
	}
	itqMAP := hammingMAP(t, mi, db, q, dbL, qL)
	ccaMAP := hammingMAP(t, mc, db, q, dbL, qL)
	corr := mc.Correlations()
	t.Logf("%d bits: mAP CCA-ITQ %.4f, ITQ %.4f (chance ≈ %.3f); correlations %.3f", bits, ccaMAP, itqMAP, 1.0/k, corr)
	if ccaMAP <= itqMAP+0.2 {
		t.Errorf("CCA-ITQ mAP %.4f does not beat ITQ %.4f by 0.2", ccaMAP, itqMAP)
	}
	// The centred one-hot labels of k classes span k−1 dimensions, so at
	// most k−1 canonical correlations are non-zero; the signal, in 6
	// dimensions, makes the leading ones large.
	if corr[0] < 0.9 || slices.Max(corr[k-1:]) > 1e-4 {
		t.Errorf("canonical correlations %.3g: want a large first one and ≈ 0 beyond the %d-th", corr, k-1)
	}
	loss := mc.Loss()
	for i := 1; i < len(loss); i++ {
		if loss[i] > loss[i-1]*(1+1e-12) {
			t.Errorf("CCA-ITQ loss rose at iteration %d: %v -> %v", i, loss[i-1], loss[i])
		}
	}
}

func TestEncodeMatchesEncodeAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	X, _ := clusters(rng, randomCentres(rng, 4, 80, 1), 200, 1)
	for _, bits := range []int{7, 64, 70} {
		m, err := itq.Train(X, bits, itq.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		all, err := m.EncodeAll(X)
		if err != nil {
			t.Fatal(err)
		}
		var buf itq.Code
		for i := range 200 {
			buf = m.Encode(X.RawRowView(i), buf)
			if len(buf) != itq.Words(bits) {
				t.Fatalf("%d bits: code has %d words, want %d", bits, len(buf), itq.Words(bits))
			}
			if itq.Hamming(buf, all[i]) != 0 {
				t.Fatalf("%d bits: row %d: Encode %b != EncodeAll %b", bits, i, buf, all[i])
			}
			if bits%64 != 0 && buf[len(buf)-1]>>(bits%64) != 0 {
				t.Fatalf("%d bits: high bits of the last word are set: %b", bits, buf[len(buf)-1])
			}
		}
	}
}

func TestDeterministicForSeed(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	X, _ := clusters(rng, randomCentres(rng, 5, 20, 1), 300, 1)
	Y := mat.NewDense(300, 3, nil)
	for i := range 300 {
		Y.Set(i, i%3, 1)
	}
	train := map[string]func(seed uint64) (*itq.Model, error){
		"itq": func(s uint64) (*itq.Model, error) { return itq.Train(X, 12, itq.Options{Iterations: 50, Seed: s}) },
		"cca": func(s uint64) (*itq.Model, error) {
			return itq.TrainCCA(X, Y, 12, itq.Options{Iterations: 50, Seed: s, Reg: 1e-3})
		},
		"lsh": func(s uint64) (*itq.Model, error) { return itq.TrainLSH(X, 12, itq.Options{Seed: s}) },
	}
	for name, f := range train {
		a, err := f(42)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := f(42)
		c, _ := f(43)
		if !mat.Equal(a.Projection(), b.Projection()) {
			t.Errorf("%s: same seed, different projections", name)
		}
		if mat.Equal(a.Projection(), c.Projection()) {
			t.Errorf("%s: seeds 42 and 43 give the same projection", name)
		}
	}
}

func TestValidation(t *testing.T) {
	X := mat.NewDense(10, 4, nil)
	for i := range 10 {
		for j := range 4 {
			X.Set(i, j, float64(i*j%7))
		}
	}
	Xnan := mat.DenseCopyOf(X)
	Xnan.Set(3, 2, math.NaN())
	Y := mat.NewDense(10, 2, nil)
	Yshort := mat.NewDense(9, 2, nil)
	def := itq.DefaultOptions()
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"bits zero", func() error { _, err := itq.Train(X, 0, def); return err }, "bits must be in [1, 4]"},
		{"bits above d", func() error { _, err := itq.Train(X, 5, def); return err }, "bits must be in [1, 4]"},
		{"one row", func() error { _, err := itq.Train(mat.NewDense(1, 4, nil), 2, def); return err }, "at least 2"},
		{"nil X", func() error { _, err := itq.Train(nil, 2, def); return err }, "nil data"},
		{"nan", func() error { _, err := itq.Train(Xnan, 2, def); return err }, "X[3,2] = NaN"},
		{"negative iterations", func() error { _, err := itq.Train(X, 2, itq.Options{Iterations: -1}); return err }, "Iterations"},
		{"negative reg", func() error { _, err := itq.TrainCCA(X, Y, 2, itq.Options{Reg: -1}); return err }, "Reg"},
		{"zero reg cca", func() error { _, err := itq.TrainCCA(X, Y, 2, itq.Options{}); return err }, "Reg > 0"},
		{"cca rows", func() error { _, err := itq.TrainCCA(X, Yshort, 2, def); return err }, "10 rows but Y has 9"},
		{"cca nil Y", func() error { _, err := itq.TrainCCA(X, nil, 2, def); return err }, "nil label"},
		{"lsh bits", func() error { _, err := itq.TrainLSH(X, 9, def); return err }, "bits"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	m, err := itq.Train(X, 2, def)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.EncodeAll(mat.NewDense(3, 5, nil)); err == nil {
		t.Error("EncodeAll with the wrong width: no error")
	}
	defer func() {
		if recover() == nil {
			t.Error("Encode with the wrong length did not panic")
		}
	}()
	m.Encode(make([]float64, 3), nil)
}
