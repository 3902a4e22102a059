package kmeansbeam

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/kmeans"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*elementSizeFn)(nil)).Elem())
}

// elementSizeFn fails the pipeline if a codebook element, Beam-encoded,
// takes more than Max bytes.
type elementSizeFn struct {
	Name string
	Max  int
}

func (f *elementSizeFn) ProcessElement(cb Codebook) error {
	var buf bytes.Buffer
	if err := beam.NewElementEncoder(reflect.TypeOf(cb)).Encode(cb, &buf); err != nil {
		return err
	}
	if buf.Len() > f.Max {
		return fmt.Errorf("%s: a codebook of %d words is a %d-byte element, want at most %d: the runner carries its words", f.Name, cb.K, buf.Len(), f.Max)
	}
	return nil
}

// No codebook element carries the words (K·Dim float32 values, 307 KB
// here; 512 MB at 10⁶ words): trained on one worker, in the graph's
// stages or in one step, or kept from a previous run, the element names
// the files the words are in, and its size does not grow with K.
func TestCodebookTravelsAsFileNames(t *testing.T) {
	const k, maxBytes = 600, 4 << 10
	feats := features(200, rand.New(rand.NewPCG(41, 42)))
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	parts := beam.CreateList(s, writeParts(t, feats, dir, 3))
	base := Options{K: k, Sample: 3000, MaxIter: 2, Seed: 7, Init: kmeans.InitRandom, Scratch: t.TempDir()}
	for _, tc := range []struct {
		name   string
		chunks int
		work   int64
	}{{"one worker", 0, 0}, {"stages", 4, -1}, {"one step", 4, 0}} {
		o := base
		o.Chunks, o.OneStepWork, o.Output = tc.chunks, tc.work, t.TempDir()
		cb := VocabularyOfParts(s.Scope(tc.name), parts, o)
		beam.ParDo0(s, &elementSizeFn{Name: tc.name, Max: maxBytes}, cb)
	}
	// A previous run's codebook, kept: a drift far within its reference.
	prev := t.TempDir()
	words := make([]formats.Word, k)
	r := rand.New(rand.NewPCG(43, 44))
	for i := range words {
		c := make([]float32, formats.DescriptorSize)
		for j := range c {
			c[j] = float32(r.IntN(256))
		}
		words[i] = formats.Word{WordID: uint32(i), Centroid: c}
	}
	writeWords(t, filepath.Join(prev, formats.ShardName(CodebookName, 0, 1)), words)
	o := base
	o.Output = t.TempDir()
	smp := DriftSample(s, parts, 500, o.Seed, 2)
	kept, _, _, _ := KeepOrBuild(s.Scope("kept"), parts, smp, o, Kept{Pattern: filepath.Join(prev, rundir.TablePattern(CodebookName)), Reference: 1e12}, kmeans.Drift{Max: 0.1})
	beam.ParDo0(s, &elementSizeFn{Name: "kept", Max: maxBytes}, kept)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

func writeWords(t *testing.T, path string, words []formats.Word) {
	t.Helper()
	if err := fileio.WriteFile(context.Background(), path, words); err != nil {
		t.Fatal(err)
	}
}

// A vocabulary stage built with no Options.Output fails the pipeline,
// naming it, rather than writing the codebook's words where no caller
// removes them: trained, gated (whether on or off) or kept.
func TestVocabularyWithoutOutputFails(t *testing.T) {
	feats := features(20, rand.New(rand.NewPCG(5, 6)))
	dir := t.TempDir()
	ps := writeParts(t, feats, dir, 2)
	prev := t.TempDir()
	words := make([]formats.Word, 3)
	for i := range words {
		words[i] = formats.Word{WordID: uint32(i), Centroid: make([]float32, formats.DescriptorSize)}
	}
	writeWords(t, filepath.Join(prev, formats.ShardName(CodebookName, 0, 1)), words)
	opt := Options{K: 3, Sample: 100, MaxIter: 2, Seed: 1}
	for name, build := range map[string]func(s beam.Scope, parts beam.PCollection) beam.PCollection{
		"VocabularyOfParts": func(s beam.Scope, parts beam.PCollection) beam.PCollection {
			return VocabularyOfParts(s, parts, opt)
		},
		"VocabularyOfPartsIf on": func(s beam.Scope, parts beam.PCollection) beam.PCollection {
			return VocabularyOfPartsIf(s, parts, opt, beam.Create(s, true))
		},
		"VocabularyOfPartsIf off": func(s beam.Scope, parts beam.PCollection) beam.PCollection {
			return VocabularyOfPartsIf(s, parts, opt, beam.Create(s, false))
		},
		"KeepOrBuild kept": func(s beam.Scope, parts beam.PCollection) beam.PCollection {
			smp := DriftSample(s, parts, 100, opt.Seed, 2)
			cb, _, _, _ := KeepOrBuild(s, parts, smp, opt, Kept{Pattern: filepath.Join(prev, rundir.TablePattern(CodebookName)), Reference: 1e12}, kmeans.Drift{Max: 0.1})
			return cb
		},
	} {
		p, s := beam.NewPipelineWithRoot()
		build(s, beam.CreateList(s, ps))
		if err := ptest.Run(p); err == nil || !strings.Contains(err.Error(), "Options.Output is empty") {
			t.Errorf("%s: error %v, want one naming the empty Options.Output", name, err)
		}
	}
}
