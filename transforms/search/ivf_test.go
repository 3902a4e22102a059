package search

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/nn"
)

// A photo is quantised as the job quantised the run: through the IVF that
// incremental.json names for an approximate vocabulary trained with one,
// through the forest for a run trained before the IVF, and never through
// an IVF without --akm.
func TestQuantizerFollowsTheRunsIndex(t *testing.T) {
	c := randomCorpus(40, 300, 5)
	desc := make([]byte, 400*formats.DescriptorSize)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range desc {
		desc[i] = byte(r.IntN(256))
	}
	const ivfLineage = `{"vocabulary": {"settings": {"approx": true, "checks": 16, "ivf_lists": 0, "ivf_probes": 2, "ivf_seed": 3}}}`
	for _, tc := range []struct {
		name    string
		akm     string
		lineage string // incremental.json, if any
		ivf     bool
	}{
		{"akm, trained through an IVF", "true", ivfLineage, true},
		{"akm, a run from before the IVF", "true", `{"vocabulary": {"settings": "k=300 approx=true trees=4 leaf=8 checks=16 seed=3"}}`, false},
		{"akm, no incremental.json", "true", "", false},
		{"exact", "false", ivfLineage, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRun(t, dir, c, 1, map[string]string{"akm": tc.akm, "akm_checks": "16", "seed": "3"})
			if tc.lineage != "" {
				if err := os.WriteFile(filepath.Join(dir, run.LineageName), []byte(tc.lineage), 0o644); err != nil {
					t.Fatal(err)
				}
				entries, err := os.ReadDir(dir)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, e := range entries {
					if e.Name() != run.ManifestName {
						names = append(names, e.Name())
					}
				}
				writeManifest(t, dir, names)
			}
			ix := openRun(t, dir, Options{})
			if (ix.ivf != nil) != tc.ivf {
				t.Fatalf("IVF loaded: %v, want %v", ix.ivf != nil, tc.ivf)
			}
			q, err := ix.quantizer()
			if err != nil {
				t.Fatal(err)
			}
			got := q.Quantize(desc)
			dim := formats.DescriptorSize
			var want *bow.Quantizer
			switch {
			case tc.akm == "false":
				if want, err = bow.NewQuantizer(ix.centroids, dim); err != nil {
					t.Fatal(err)
				}
			default:
				// The job's: kmeansbeam's forest, and its IVF when it had one.
				fo := nn.DefaultForestOptions()
				fo.Checks, fo.Seed = 16, 3
				f, err := nn.NewForest(ix.centroids, dim, fo)
				if err != nil {
					t.Fatal(err)
				}
				want = bow.NewForestQuantizer(f)
				if tc.ivf {
					if forestOnly := want.Quantize(desc); reflect.DeepEqual(got, forestOnly) {
						t.Fatal("the forest alone gives the IVF's words: the test says nothing")
					}
					v, err := kmeans.TrainIVF(ix.centroids, dim, nn.IVFOptions{Probes: 2, Seed: 3})
					if err != nil {
						t.Fatal(err)
					}
					want.SetIVF(v)
				}
			}
			if w := want.Quantize(desc); !reflect.DeepEqual(got, w) {
				t.Fatalf("the photo's words %v, the job's %v", got, w)
			}
		})
	}
}
