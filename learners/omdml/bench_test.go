package omdml

import (
	"math"
	"strconv"
	"testing"
)

// paperDims are the paper's five global features (§5.3): colour 81, edge
// 37, Gabor texture 120, LBP 59 and GIST 512.
var paperDims = []int{81, 37, 120, 59, 512}

// benchStream draws triplets from a pool of 256 random samples with entries
// uniform in [0, 1), the paper's scaling. Its 2²⁴ possible triplets come in
// a scrambled order, so that the learner cannot memorise a short cycle of
// them (and stop updating); on such data f ≈ 0, so most steps update every
// modality, the worst case.
type benchStream struct {
	pool []Sample
	k    uint32
}

func newBenchStream(dims []int) *benchStream {
	ts := uniformTriplets(99, dims, 86)
	s := &benchStream{}
	for _, t := range ts {
		s.pool = append(s.pool, t.p, t.pos, t.neg)
	}
	s.pool = s.pool[:256]
	return s
}

// next returns the k-th triplet: three bytes of a bijective mix of k pick
// the samples.
func (s *benchStream) next() (p, pos, neg Sample) {
	z := s.k*0x9e3779b1 + 0x7f4a7c15
	z ^= z >> 15
	z *= 0x2c1b3c6d
	z ^= z >> 12
	s.k++
	return s.pool[z&255], s.pool[z>>8&255], s.pool[z>>16&255]
}

// BenchmarkOMDMLUpdate measures OMDML steps and reports updates/s and
// eigendecompositions per step (eig/op).
//
// "project" is the worst case, and the steady state once projections have
// made the M_i singular: the bounds L_i are set to −∞ before each step, so
// that every modality with ℓ_i > 0 is decomposed. Its sub-benchmarks time
// the paper's five modalities together and each alone.
//
// "fresh" starts from M_i = I and lets the bounds skip what they can (package
// doc, OMDML 2): on this data the steps are small against I, so nearly all
// projections are skipped for the first thousands of steps.
func BenchmarkOMDMLUpdate(b *testing.B) {
	run := func(b *testing.B, dims []int, alwaysProject bool) {
		o, err := NewOMDML(dims, DefaultParams())
		if err != nil {
			b.Fatal(err)
		}
		stream := newBenchStream(dims)
		b.ReportAllocs()
		updated := 0
		for b.Loop() {
			if alwaysProject {
				for i := range o.lb {
					o.lb[i] = math.Inf(-1)
				}
			}
			if o.Update(stream.next()) > 0 {
				updated++
			}
		}
		done, skipped := o.Projections()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		b.ReportMetric(float64(done)/float64(b.N), "eig/op")
		b.ReportMetric(float64(skipped)/float64(b.N), "skipped/op")
		b.ReportMetric(float64(updated)/float64(b.N), "updated/op")
	}
	b.Run("project/paper5", func(b *testing.B) { run(b, paperDims, true) })
	for _, n := range paperDims {
		b.Run("project/n="+strconv.Itoa(n), func(b *testing.B) { run(b, []int{n}, true) })
	}
	b.Run("fresh/paper5", func(b *testing.B) { run(b, paperDims, false) })
}

// BenchmarkLOMDMLUpdate measures LOMDML steps on the paper's five
// modalities with the paper's r = 50. η = 1e-4 keeps W bounded on this data
// (‖p − p′‖² ≈ 85 for GIST; package doc on η), which the benchmark checks,
// so that every step does the full work.
func BenchmarkLOMDMLUpdate(b *testing.B) {
	p := DefaultParams()
	p.Eta = 1e-4
	l, err := NewLOMDML(paperDims, p)
	if err != nil {
		b.Fatal(err)
	}
	stream := newBenchStream(paperDims)
	b.ReportAllocs()
	updated := 0
	for b.Loop() {
		if l.Update(stream.next()) > 0 {
			updated++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	b.ReportMetric(float64(updated)/float64(b.N), "updated/op")
	for _, v := range l.State().Vectors {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				b.Fatal("W diverged; the timing is of the no-update path")
			}
		}
	}
}
