package global

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestScalerBalancesModalities(t *testing.T) {
	dims := []int{3, 5, 2}
	rng := rand.New(rand.NewPCG(1, 2))
	// Modality k is on a scale of 10^k, plus a constant modality of 2 dims.
	var rows [][]float32
	for range 200 {
		x := make([]float32, 10)
		for j := range 3 {
			x[j] = float32(rng.NormFloat64() + 5)
		}
		for j := 3; j < 8; j++ {
			x[j] = float32(100 * rng.NormFloat64())
		}
		x[8], x[9] = 7, 7
		rows = append(rows, x)
	}
	// Two partial moments merged equal one pass.
	var a, b, all Moments
	for i, x := range rows {
		all.Add(x)
		if i%3 == 0 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	a.Merge(b)
	for j := range all.Sum {
		if math.Abs(a.Sum[j]-all.Sum[j]) > 1e-9*math.Abs(all.Sum[j])+1e-9 || math.Abs(a.SumSq[j]-all.SumSq[j]) > 1e-9*all.SumSq[j]+1e-9 {
			t.Fatalf("merged moments differ at %d", j)
		}
	}
	sc, err := NewScaler(all, dims)
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, 10)
	sq := make([]float64, 3)
	var dst []float32
	for _, x := range rows {
		dst = sc.Apply(dst, x)
		off := 0
		for k, d := range dims {
			for j := off; j < off+d; j++ {
				mean[j] += float64(dst[j]) / 200
				sq[k] += float64(dst[j]) * float64(dst[j]) / 200
			}
			off += d
		}
	}
	for j, m := range mean {
		if math.Abs(m) > 1e-5 {
			t.Errorf("dimension %d has mean %g after scaling", j, m)
		}
	}
	for k, want := range []float64{1, 1, 0} {
		if math.Abs(sq[k]-want) > 1e-4 {
			t.Errorf("modality %d: mean squared norm %g, want %g", k, sq[k], want)
		}
	}
	if _, err := NewScaler(all, []int{3, 5}); err == nil {
		t.Error("NewScaler accepted dims that do not add up")
	}
	if _, err := NewScaler(Moments{}, dims); err == nil {
		t.Error("NewScaler accepted no vectors")
	}
}

func TestConcat(t *testing.T) {
	mk := func(n int) []float32 { return make([]float32, n) }
	x, err := Concat(nil, mk(ColourDim), mk(EdgeDim), mk(GaborDim), mk(LBPDim), mk(GISTDim))
	if err != nil || len(x) != ColourDim+EdgeDim+GaborDim+LBPDim+GISTDim {
		t.Fatalf("Concat = %d values, %v", len(x), err)
	}
	if _, err := Concat(nil, mk(ColourDim), nil, mk(GaborDim), mk(LBPDim), mk(GISTDim)); err == nil {
		t.Error("Concat accepted a missing modality")
	}
}
