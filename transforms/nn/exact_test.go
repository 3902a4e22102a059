package nn

import (
	"fmt"
	"image"
	_ "image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bowline/bowline/transforms/internal/testkit"
	"github.com/bowline/bowline/transforms/sift"
)

// kernels runs f once with each way Exact can search on this machine: the
// tiled search with the portable Go kernel, with the AVX2 one where the CPU
// supports it, and Nearest point by point.
func kernels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	savedFMA, savedBlocked := useFMA, blocked
	t.Cleanup(func() { useFMA, blocked = savedFMA, savedBlocked })
	blocked, useFMA = true, false
	t.Run("go", f)
	if savedFMA {
		useFMA = true
		t.Run("fma", f)
	}
	blocked = false
	t.Run("nearest", f)
}

// checkExact compares Exact.Assign with assign (Nearest per point) bit for
// bit, and QuantizeBytes with Nearest when the points are bytes.
func checkExact(t *testing.T, cent []float32, dim int, data []float32) {
	t.Helper()
	n := len(data) / dim
	wantL, wantD := make([]int32, n), make([]float32, n)
	assign(cent, dim, data, wantL, wantD)
	e := NewExact(cent, dim)
	var s ExactScratch
	gotL, gotD := make([]int32, n), make([]float32, n)
	for i := range gotL {
		gotL[i] = -1
	}
	if changed := e.Assign(data, gotL, gotD, &s); changed != n {
		t.Errorf("changed = %d, want all %d labels (from −1)", changed, n)
	}
	for i := range n {
		if gotL[i] != wantL[i] || math.Float32bits(gotD[i]) != math.Float32bits(wantD[i]) {
			t.Fatalf("point %d of %d (K = %d, dim %d): Exact gives centroid %d at %v, Nearest %d at %v",
				i, n, len(cent)/dim, dim, gotL[i], gotD[i], wantL[i], wantD[i])
		}
	}
	if changed := e.Assign(data, gotL, gotD, &s); changed != 0 {
		t.Errorf("second Assign changed %d labels, want 0", changed)
	}
}

// Random points against non-integer centroids at the shapes around every
// tile and panel boundary: K below, at and above a panel of 16, dimensions
// that are and are not multiples of 4, point counts that split strips and
// tiles.
func TestExactMatchesNearest(t *testing.T) {
	kernels(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 9))
		for _, dim := range []int{1, 3, 4, 5, 128} {
			for _, k := range []int{1, 2, 15, 16, 17, 100} {
				for _, n := range []int{1, 5, 6, 7, tileRows - 1, tileRows, tileRows + 1, 250} {
					cent := make([]float32, k*dim)
					for i := range cent {
						cent[i] = float32(rng.Float64() * 255)
					}
					data := make([]float32, n*dim)
					for i := range data {
						data[i] = float32(rng.IntN(256))
					}
					checkExact(t, cent, dim, data)
				}
			}
		}
	})
}

// Ties: duplicated centroids, points on centroids, and a point equidistant
// from several. Nearest takes the lowest index; so must Exact, although
// the tied centroids lie in different panels.
func TestExactTies(t *testing.T) {
	kernels(t, func(t *testing.T) {
		const dim = 8
		rng := rand.New(rand.NewPCG(5, 5))
		base := make([]float32, 10*dim)
		for i := range base {
			base[i] = float32(rng.IntN(256))
		}
		// Centroid c is base[c%10]: every centroid has copies 10 apart,
		// across panels.
		cent := make([]float32, 50*dim)
		for c := range 50 {
			copy(cent[c*dim:], base[c%10*dim:(c%10+1)*dim])
		}
		var data []float32
		data = append(data, base...)       // on a centroid
		data = append(data, cent[:dim]...) // again
		mid := make([]float32, dim)        // equidistant from two
		mid[0] = 100
		twoCent := make([]float32, 2*dim)
		twoCent[0], twoCent[dim] = 90, 110
		checkExact(t, cent, dim, data)
		checkExact(t, slices.Concat(twoCent, twoCent), dim, mid)
	})
}

// Near ties: the two nearest centroids differ in squared distance by a few
// units in the last place of Nearest's float32 sums while A = ‖c‖² − 2x·c
// rounds with errors a hundred times larger, so the expansion alone would
// often pick the wrong one (or the other of a tie). The re-check window
// must be wide enough to hand both to Nearest's distance.
func TestExactNearTies(t *testing.T) {
	kernels(t, func(t *testing.T) {
		const dim, k, n = 128, 64, 300
		rng := rand.New(rand.NewPCG(11, 2))
		data := make([]float32, n*dim)
		for i := range data {
			data[i] = float32(rng.IntN(256))
		}
		// Each centroid is a point of data nudged by one of a handful
		// of tiny offsets, so that many points have several centroids
		// at almost the same large distance.
		cent := make([]float32, k*dim)
		for c := range k {
			p := data[(c%8)*dim : (c%8+1)*dim]
			for j := range dim {
				cent[c*dim+j] = p[j] + 60 + float32(rng.IntN(4))*0x1p-10
			}
		}
		checkExact(t, cent, dim, data)
		// Points equidistant by construction: x and its mirror image
		// about a centroid.
		var mirror []float32
		for c := range k {
			for j := range dim {
				mirror = append(mirror, 2*cent[c*dim+j]-data[(c%8)*dim+j])
			}
		}
		checkExact(t, cent, dim, mirror)
	})
}

// Points or centroids too large for the expansion in float32, or not
// finite, go to Nearest; the answers stay Nearest's.
func TestExactFallback(t *testing.T) {
	kernels(t, func(t *testing.T) {
		const dim = 4
		cent := []float32{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}
		checkExact(t, cent, dim, []float32{1e19, 0, 0, 0, 1, 1, 1, 1.5, 0, 0, 0, 0})
		checkExact(t, []float32{3e18, 0, 0, 0, 1, 1, 1, 1}, dim, []float32{1, 1, 1, 1, 2e18, 0, 0, 0})
		checkExact(t, cent, dim, []float32{float32(math.Inf(1)), 0, 0, 0, 2, 2, 2, 2})
	})
}

// The two kernels compute the same products up to rounding: both within
// the error bound of Exact's documentation of the float64 value, and the
// same mask where the threshold is clear of both.
func TestPanelKernels(t *testing.T) {
	if !useFMA {
		t.Skip("no AVX2/FMA on this CPU")
	}
	rng := rand.New(rand.NewPCG(1, 7))
	for _, pdim := range []int{4, 8, 128, 132} {
		xs := make([]float32, stripRows*pdim)
		panel := make([]float32, panelCols*pdim)
		for i := range xs {
			xs[i] = float32(rng.IntN(256))
		}
		for i := range panel {
			panel[i] = float32(rng.Float64() * 255)
		}
		norms := make([]float32, panelCols)
		for l := range norms {
			var n2 float64
			for j := range pdim {
				n2 += float64(panel[j*panelCols+l]) * float64(panel[j*panelCols+l])
			}
			norms[l] = float32(n2)
		}
		var goOut, fmaOut [stripRows * panelCols]float32
		thr := make([]float32, stripRows)
		for r := range thr {
			thr[r] = float32(math.Inf(-1))
		}
		thr[2] = float32(math.Inf(1))
		mg := panelGo(xs, panel, norms, thr, &goOut)
		mf := panelFMA(&xs[0], &panel[0], pdim, &norms[0], &thr[0], &fmaOut[0])
		if mg != mf || mg != 0xff<<16 {
			t.Errorf("pdim %d: masks %#x (Go) and %#x (FMA), want %#x", pdim, mg, mf, 0xff<<16)
		}
		for r := range stripRows {
			var xn2 float64
			for j := range pdim {
				xn2 += float64(xs[j*stripRows+r]) * float64(xs[j*stripRows+r])
			}
			for l := range panelCols {
				var dot float64
				for j := range pdim {
					dot += float64(xs[j*stripRows+r]) * float64(panel[j*panelCols+l])
				}
				want := float64(norms[l]) - 2*dot
				bound := (2*float64(pdim+2)*0x1p-24 + 3*0x1p-24) * math.Sqrt(xn2*float64(norms[l]))
				bound += 4 * 0x1p-24 * float64(norms[l])
				for name, got := range map[string]float32{"Go": goOut[r*panelCols+l], "FMA": fmaOut[r*panelCols+l]} {
					if math.Abs(float64(got)-want) > bound {
						t.Errorf("pdim %d point %d centroid %d: %s kernel %v, exact %v, bound %v", pdim, r, l, name, got, want, bound)
					}
				}
			}
		}
	}
}

// realVocabulary returns the SIFT descriptors of perClass ETH-80 photos of
// each class, as bytes and widened to float32, and a vocabulary of k words
// from iters Lloyd iterations on their first half.
func realVocabulary(t *testing.T, perClass, k, iters int) (desc []byte, x []float32, words []float32) {
	t.Helper()
	desc = eth80Descriptors(t, perClass)
	x = make([]float32, len(desc))
	for i, b := range desc {
		x[i] = float32(b)
	}
	dim := sift.DescriptorSize
	return desc, x, lloyd(x[:len(desc)/dim/2*dim], dim, k, iters, 1)
}

// eth80Descriptors extracts SIFT from the first images of a few ETH-80
// categories (real photos beside the checkout: testkit.ETH80 skips t
// without them).
func eth80Descriptors(t testing.TB, perClass int) []byte {
	t.Helper()
	root := filepath.Join(testkit.ETH80(t), "images")
	ex, err := sift.NewExtractor(sift.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var desc []byte
	var im sift.Image
	for _, class := range []string{"apple", "car", "cow", "cup", "dog", "horse", "pear", "tomato"} {
		files, err := filepath.Glob(filepath.Join(root, class, "*.jpg"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no ETH-80 images of %s under %s: %v", class, root, err)
		}
		slices.Sort(files)
		for _, name := range files[:min(perClass, len(files))] {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			img, _, err := image.Decode(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_, d := ex.Extract(sift.FromImage(img, &im))
			desc = append(desc, d...)
		}
	}
	return desc
}

// Real SIFT descriptors of ETH-80 photos against a vocabulary trained on
// some of them (non-integer centroids, the distances of real data): the
// words of QuantizeBytes and the labels of Assign are Nearest's.
func TestExactRealDescriptors(t *testing.T) {
	const dim = sift.DescriptorSize
	desc, x, voc := realVocabulary(t, 3, 300, 2)
	t.Logf("%d descriptors, %d words", len(desc)/dim, len(voc)/dim)
	kernels(t, func(t *testing.T) {
		checkExact(t, voc, dim, x)
		e := NewExact(voc, dim)
		words := e.QuantizeBytes(nil, desc, nil)
		for i, w := range words {
			if c, _ := Nearest(voc, dim, x[i*dim:(i+1)*dim]); int(w) != c {
				t.Fatalf("descriptor %d: word %d, Nearest %d", i, w, c)
			}
		}
	})
}

func TestExactDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	const dim, k, n = 128, 40, 200
	cent, data := make([]float32, k*dim), make([]byte, n*dim)
	for i := range cent {
		cent[i] = float32(rng.Float64() * 255)
	}
	for i := range data {
		data[i] = byte(rng.IntN(256))
	}
	e := NewExact(cent, dim)
	s := new(ExactScratch)
	words := e.QuantizeBytes(nil, data, s)
	if a := testing.AllocsPerRun(5, func() { words = e.QuantizeBytes(words[:0], data, s) }); a != 0 {
		t.Errorf("QuantizeBytes allocates %v times a call", a)
	}
}

// BenchmarkNearestBatch is BenchmarkNearest's search through Exact, a tile
// of points at a time, at 1K and 10K words; ns/op is per point.
func BenchmarkNearestBatch(b *testing.B) {
	const dim, n = 128, 960
	for _, k := range []int{1000, 10000} {
		rng := rand.New(rand.NewPCG(1, 2))
		cent := make([]float32, k*dim)
		for i := range cent {
			cent[i] = float32(rng.IntN(256))
		}
		data := make([]float32, n*dim)
		for i := range data {
			data[i] = float32(rng.IntN(256))
		}
		e := NewExact(cent, dim)
		labels, dist := make([]int32, n), make([]float32, n)
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			var s ExactScratch
			b.ReportAllocs()
			for b.Loop() {
				e.Assign(data, labels, dist, &s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/point")
			b.ReportMetric(float64(b.N*n*k*dim)/b.Elapsed().Seconds()/1e9, "Gmuladd/s")
		})
	}
}
