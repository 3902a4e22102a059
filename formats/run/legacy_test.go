package run

import (
	"reflect"
	"testing"
)

func TestLegacyIVF(t *testing.T) {
	for _, tc := range []struct {
		js      string
		want    *IVF
		wantErr bool
	}{
		{`{"vocabulary": {"settings": {"ivf_lists": 40, "ivf_probes": 8, "ivf_seed": 7}}}`, &IVF{Lists: 40, Probes: 8, Seed: 7}, false},
		{`{"vocabulary": {"settings": {"approx": true, "checks": 256}}}`, nil, false},
		{`{"vocabulary": {"settings": "k=10 approx=true"}}`, nil, false},
		{`{}`, nil, false},
		{``, nil, false},
		{`{"vocabulary": {"settings": {"ivf_probes": 8}}}`, nil, true},
		{`{"vocabulary": {"settings": {"ivf_lists": 1, "ivf_probes": 0, "ivf_seed": 1}}}`, nil, true},
		{`not json`, nil, true},
	} {
		got, err := legacyIVF([]byte(tc.js))
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v (error %v)", tc.js, got, err, tc.want, tc.wantErr)
		}
	}
}

// The old format's flags, typed or as strings, become the settings; what
// it did not record is the frozen default; a forest only with --akm.
func TestLegacySettings(t *testing.T) {
	rep := `{"config": {"max_side": 400, "sift_double": "false", "akm": true, "akm_checks": 16, "seed": "3", "tf": "sqrt", "soft_words": 3},
		"hyper_parameters": {"solis-ada": {"lambda": 1e-6}}}`
	lineage := `{"vocabulary": {"settings": {"approx": true, "ivf_lists": 0, "ivf_probes": 2, "ivf_seed": 3}}}`
	got, err := LegacySettings([]byte(rep), []byte(lineage))
	if err != nil {
		t.Fatal(err)
	}
	want := legacyDefaults()
	want.SIFT.MaxSide, want.SIFT.DoubleImage, want.Seed, want.TF, want.Soft.Words = 400, false, 3, "sqrt", 3
	want.Vocabulary.Forest = &Forest{Trees: 8, LeafSize: 8, Checks: 16, Seed: 3}
	want.Vocabulary.IVF = &IVF{Probes: 2, Seed: 3}
	want.Learners = map[string]map[string]float64{"solis-ada": {"lambda": 1e-6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}

	got, err = LegacySettings([]byte(`{"config": {}}`), []byte(lineage))
	if err != nil {
		t.Fatal(err)
	}
	if want := legacyDefaults(); !reflect.DeepEqual(got, want) {
		t.Fatalf("no flags: got %+v, want the defaults %+v", got, want)
	}
	// The frozen defaults are the values such a run was described with,
	// whatever the job's defaults are: its query photos must be described
	// as its collection was.
	if got.SIFT.MaxSide != 1600 || !got.SIFT.DoubleImage || got.MaxPixels != 100_000_000 {
		t.Errorf("no flags: max_side %d, sift_double %v, max_pixels %d; want 1600, true, 100000000", got.SIFT.MaxSide, got.SIFT.DoubleImage, got.MaxPixels)
	}
	if _, err := LegacySettings([]byte(`{"config": {"max_side": "big"}}`), nil); err == nil {
		t.Fatal("a flag that does not parse: no error")
	}
}
