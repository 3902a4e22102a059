package search

import (
	"encoding/json"
	"testing"

	"github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/sift"
)

// A query photo is described as the run's photos were: the SIFT options
// the job described with, doubling and its bound included, recorded in
// the manifest's settings and read back, are the options settingsOf gives
// the query's extractor.
func TestSettingsOfKeepsTheRunsSIFT(t *testing.T) {
	bounded := describe.DefaultOptions().SIFT
	every, none := bounded, bounded
	every.DoubleBelow = 0
	none.DoubleImage, none.DoubleBelow = false, 0
	if bounded.DoubleBelow == 0 {
		t.Fatal("the job's defaults double every image: nothing to tell apart")
	}
	for _, o := range []sift.Options{bounded, every, none} {
		js, err := json.Marshal(run.Settings{SIFT: run.SIFT(o), TF: "raw"})
		if err != nil {
			t.Fatal(err)
		}
		var r run.Settings
		if err := json.Unmarshal(js, &r); err != nil {
			t.Fatal(err)
		}
		s, err := settingsOf(r)
		if err != nil {
			t.Fatal(err)
		}
		if s.describe.SIFT != o {
			t.Errorf("the run described with %+v, its queries with %+v", o, s.describe.SIFT)
		}
	}
}
