package kmeansbeam

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/nn"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*checkDistortionFn)(nil)).Elem())
}

// writeParts writes feats in parts under dir, as describebeam does.
func writeParts(t *testing.T, feats []formats.Features, dir string, parts int) []formats.Part {
	t.Helper()
	byPart := make([][]formats.Features, parts)
	for _, f := range feats {
		p := formats.ShardOf(f.ImageID, parts)
		if len(f.X) != len(f.Descriptors) {
			f.X = make([]float32, len(f.Descriptors)) // a keypoint a descriptor
		}
		byPart[p] = append(byPart[p], f)
	}
	var ps []formats.Part
	for p, fs := range byPart {
		path := filepath.Join(dir, formats.ShardName("features", p, parts))
		if err := fileio.WriteFile(context.Background(), path, fs); err != nil {
			t.Fatal(err)
		}
		kp := 0
		for _, f := range fs {
			kp += len(f.Descriptors)
		}
		ps = append(ps, formats.Part{Name: "features", Part: p, Parts: parts, Path: path, Rows: int64(len(fs)), Keypoints: int64(kp)})
	}
	return ps
}

// checkDistortionFn fails unless the distortion is Want within 1e-9
// (relative).
type checkDistortionFn struct{ Want float64 }

func (f *checkDistortionFn) ProcessElement(d float64) error {
	if math.Abs(d-f.Want) > 1e-9*f.Want {
		return fmt.Errorf("distortion %v, want %v", d, f.Want)
	}
	return nil
}

// TestVocabularyOfPartsIfAndDistortion: gated on, the vocabulary is the
// one VocabularyOfParts trains; gated off, there is none; a codebook
// written and read back (ReadCodebook) has the distortion, on a drift
// sample of every descriptor, of the exhaustive nearest-word search.
func TestVocabularyOfPartsIfAndDistortion(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	feats := features(60, r)
	dir := t.TempDir()
	ps := writeParts(t, feats, dir, 3)
	total := 0
	for _, p := range ps {
		total += int(p.Keypoints)
	}
	opt := Options{K: 10, Sample: 200, MaxIter: 4, Seed: 5, Chunks: 1}
	want := reference(t, feats, opt)
	cbPath := filepath.Join(dir, formats.ShardName("codebook", 0, 1))
	var words []formats.Word
	for k := range want.K {
		words = append(words, formats.Word{WordID: uint32(k), Centroid: want.Centroids[k*want.Dim : (k+1)*want.Dim]})
	}
	if err := fileio.WriteFile(context.Background(), cbPath, words); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range feats {
		for _, d := range f.Descriptors {
			x := make([]float32, len(d))
			for i, b := range d {
				x[i] = float32(b)
			}
			_, dist := nn.Nearest(want.Centroids, want.Dim, x)
			sum += float64(dist)
		}
	}
	mean := sum / float64(total)

	p, s := beam.NewPipelineWithRoot()
	parts := beam.CreateList(s, ps)
	opt.Output = t.TempDir()
	on := VocabularyOfPartsIf(s.Scope("on"), parts, opt, beam.Create(s, true))
	beam.ParDo0(s, &checkFn{Name: "gated on", Want: want, ObjTol: 0}, on)
	opt.Output = t.TempDir()
	off := VocabularyOfPartsIf(s.Scope("off"), parts, opt, beam.Create(s, false))
	passert.Empty(s, off)
	smp := DriftSample(s, parts, total, opt.Seed, 2)
	read, measured := ReadCodebook(s, filepath.Join(dir, "codebook-*.parquet"), opt, smp)
	beam.ParDo0(s.Scope("read"), &checkDistortionFn{Want: mean}, measured)
	beam.ParDo0(s, &checkDistortionFn{Want: mean}, Distortion(s, smp, read))
	passert.Count(s, Distortion(s.Scope("none"), smp, off), "distortion of no codebook", 0)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// A kept codebook is the K words the run's settings name: files missing
// one fail the job, naming the word, rather than make a smaller
// vocabulary.
func TestReadCodebookRefusesAMissingWord(t *testing.T) {
	dir := t.TempDir()
	var words []formats.Word
	for k := range 2 {
		words = append(words, formats.Word{WordID: uint32(k), Centroid: make([]float32, formats.DescriptorSize)})
	}
	if err := fileio.WriteFile(context.Background(), filepath.Join(dir, formats.ShardName("codebook", 0, 1)), words); err != nil {
		t.Fatal(err)
	}
	p, s := beam.NewPipelineWithRoot()
	ReadCodebook(s, filepath.Join(dir, "codebook-*.parquet"), Options{K: 3}, beam.Create(s, sample{Prio: []uint64{1}, Desc: make([]byte, formats.DescriptorSize)}))
	if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), "word 2 missing") {
		t.Errorf("a codebook of words 0 and 1 read for 3 words: err %v, want one naming word 2 missing", err)
	}
}
