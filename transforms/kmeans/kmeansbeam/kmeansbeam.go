// Package kmeansbeam is the Beam wrapper of package kmeans: it draws a
// bounded, deterministic sample of SIFT descriptors from every image and
// clusters it into a visual vocabulary.
package kmeansbeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/kmeans"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*sampleFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sample)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*trainFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Codebook)(nil)).Elem())
	beam.RegisterFunction(wordsFn)
}

// Options configures the vocabulary.
type Options struct {
	// K is the number of visual words.
	K int
	// Sample bounds the number of descriptors clustered.
	Sample int
	// MaxIter and Tol stop Lloyd's iterations.
	MaxIter int
	Tol     float64
	Seed    uint64
}

// Codebook is a trained vocabulary: K centroids of Dim dimensions, row-major.
type Codebook struct {
	K, Dim     int
	Centroids  []float32
	Objective  float64
	Iterations int
	Sampled    int
	Seconds    float64
}

// Vocabulary samples at most opt.Sample descriptors from features and
// clusters them into opt.K words. The result is a single-element
// PCollection<Codebook>.
//
// The sample keeps the descriptors with the smallest hash of (seed, image,
// index): a bottom-k sample, so it is uniform over all descriptors, and
// merging partial samples in any order or grouping gives the same set. That
// makes the vocabulary the same for a given seed whatever the runner's
// parallelism.
func Vocabulary(s beam.Scope, features beam.PCollection, opt Options) beam.PCollection {
	s = s.Scope("kmeans.Vocabulary")
	smp := beam.Combine(s, &sampleFn{Max: opt.Sample, Seed: opt.Seed}, features)
	return beam.ParDo(s, &trainFn{Opt: opt}, smp)
}

// Words flattens a codebook into its Parquet rows.
func Words(s beam.Scope, codebook beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("kmeans.Words"), wordsFn, codebook)
}

func wordsFn(cb Codebook, emit func(formats.Word)) {
	for k := 0; k < cb.K; k++ {
		emit(formats.Word{WordID: uint32(k), Centroid: cb.Centroids[k*cb.Dim : (k+1)*cb.Dim]})
	}
}

// sample is the accumulator of the bottom-k sample: Prio[i] belongs to the
// descriptor Desc[i*128:(i+1)*128].
type sample struct {
	Prio []uint64
	Desc []byte
}

type sampleFn struct {
	Max  int
	Seed uint64
}

func (f *sampleFn) CreateAccumulator() sample { return sample{} }

func (f *sampleFn) AddInput(a sample, feat formats.Features) sample {
	h := fnv.New64a()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], f.Seed)
	h.Write(buf[:])
	h.Write([]byte(feat.ImageID))
	base := h.Sum64()
	for i, d := range feat.Descriptors {
		if len(d) != formats.DescriptorSize {
			continue
		}
		a.Prio = append(a.Prio, mix(base+uint64(i)))
		a.Desc = append(a.Desc, d...)
	}
	if len(a.Prio) > 2*f.Max {
		a = a.trim(f.Max)
	}
	return a
}

func (f *sampleFn) MergeAccumulators(a, b sample) sample {
	a.Prio = append(a.Prio, b.Prio...)
	a.Desc = append(a.Desc, b.Desc...)
	return a.trim(f.Max)
}

func (f *sampleFn) ExtractOutput(a sample) sample { return a.trim(f.Max) }

// trim keeps the max entries of smallest priority, in priority order (ties
// by descriptor bytes), so the output does not depend on merge order.
func (a sample) trim(max int) sample {
	const d = formats.DescriptorSize
	idx := make([]int, len(a.Prio))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(x, y int) bool {
		i, j := idx[x], idx[y]
		if a.Prio[i] != a.Prio[j] {
			return a.Prio[i] < a.Prio[j]
		}
		return string(a.Desc[i*d:(i+1)*d]) < string(a.Desc[j*d:(j+1)*d])
	})
	if len(idx) > max {
		idx = idx[:max]
	}
	out := sample{Prio: make([]uint64, len(idx)), Desc: make([]byte, len(idx)*d)}
	for k, i := range idx {
		out.Prio[k] = a.Prio[i]
		copy(out.Desc[k*d:], a.Desc[i*d:(i+1)*d])
	}
	return out
}

// mix is SplitMix64's finaliser: consecutive inputs give unrelated outputs.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

type trainFn struct{ Opt Options }

func (f *trainFn) ProcessElement(ctx context.Context, smp sample) (Codebook, error) {
	const d = formats.DescriptorSize
	n := len(smp.Prio)
	if n < f.Opt.K {
		return Codebook{}, fmt.Errorf("vocabulary: %d descriptors sampled, fewer than the %d words asked for: lower --vocab or give more images", n, f.Opt.K)
	}
	data := make([]float32, n*d)
	for i, b := range smp.Desc {
		data[i] = float32(b)
	}
	start := time.Now()
	res, err := kmeans.Train(data, d, kmeans.Options{K: f.Opt.K, MaxIter: f.Opt.MaxIter, Tol: f.Opt.Tol, Seed: f.Opt.Seed})
	if err != nil {
		return Codebook{}, fmt.Errorf("vocabulary: %w", err)
	}
	secs := time.Since(start).Seconds()
	log.Infof(ctx, "vocabulary: %d words from %d descriptors in %d iterations, %.1fs, mean squared distance %.1f", res.K, n, res.Iterations, secs, res.Objective)
	return Codebook{K: res.K, Dim: d, Centroids: res.Centroids, Objective: res.Objective, Iterations: res.Iterations, Sampled: n, Seconds: secs}, nil
}
