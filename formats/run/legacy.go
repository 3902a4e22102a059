package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// The old format: a run whose manifest.json holds no settings recorded
// them as the job's command line, flag by flag, in report.json's "config"
// object (each value the JSON of its typed value, or, in older reports, a
// string of it), its learners' hyper-parameters in "hyper_parameters",
// and, when its vocabulary was trained through an IVF, the IVF's options
// in incremental.json's vocabulary settings ("ivf_lists", "ivf_probes",
// "ivf_seed"). A flag the run did not record had the default it had when
// that format was written; those defaults are frozen here (legacyDefaults),
// since that format will not change. This file is the one place that
// knows those flag names.

// legacyDefaults are the settings of a run in the old format that recorded
// no flag: the job's defaults when that format was written. A report made
// before --tf weighted raw counts.
func legacyDefaults() Settings {
	return Settings{
		SIFT:        SIFT{ScalesPerOctave: 3, Sigma: 1.6, ContrastThreshold: 0.04, EdgeThreshold: 10, DoubleImage: true, MaxSide: 1600},
		MaxPixels:   100_000_000,
		Vocabulary:  Vocabulary{Words: 1000},
		TF:          "raw",
		Cosine:      true,
		LabelColumn: "label",
		Seed:        1,
	}
}

// legacyForest is the forest of an approximate vocabulary in the old
// format before --akm_checks and --seed: nn.DefaultForestOptions seeded 1.
var legacyForest = Forest{Trees: 8, LeafSize: 8, Checks: 256, Seed: 1}

// LegacySettings reads the settings of a run in the old format from its
// report.json and, if it has one, its incremental.json (nil if not).
func LegacySettings(reportJSON, lineageJSON []byte) (Settings, error) {
	var rep struct {
		Config map[string]json.RawMessage    `json:"config"`
		Params map[string]map[string]float64 `json:"hyper_parameters"`
	}
	if err := json.Unmarshal(reportJSON, &rep); err != nil {
		return Settings{}, fmt.Errorf("%s: %w", ReportName, err)
	}
	text := func(name string) (string, bool) {
		raw, ok := rep.Config[name]
		if !ok {
			return "", false
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return string(raw), true
	}
	s := legacyDefaults()
	s.Learners = rep.Params
	var errs []error
	num := func(name string, set func(v float64)) {
		if v, ok := text(name); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("setting %s=%q: %w", name, v, err))
				return
			}
			set(f)
		}
	}
	flag := func(name string, set func(v bool)) {
		if v, ok := text(name); ok {
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("setting %s=%q: %w", name, v, err))
				return
			}
			set(b)
		}
	}
	num("max_side", func(v float64) { s.SIFT.MaxSide = int(v) })
	num("max_keypoints", func(v float64) { s.SIFT.MaxKeypoints = int(v) })
	num("max_pixels", func(v float64) { s.MaxPixels = int64(v) })
	flag("sift_double", func(v bool) { s.SIFT.DoubleImage = v })
	flag("rootsift", func(v bool) { s.SIFT.RootSIFT = v })
	num("soft_words", func(v float64) { s.Soft.Words = int(v) })
	num("soft_sigma", func(v float64) { s.Soft.Sigma = v })
	num("vocab", func(v float64) { s.Vocabulary.Words = int(v) })
	if v, ok := text("tf"); ok {
		s.TF = v
	}
	if v, ok := text("label_column"); ok {
		s.LabelColumn = v
	}
	flag("cosine", func(v bool) { s.Cosine = v })
	if v, ok := text("seed"); ok {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("setting seed=%q: %w", v, err))
		}
		s.Seed = seed
	}
	var akm bool
	flag("akm", func(v bool) { akm = v })
	forest := legacyForest
	// The job's forest: the defaults, --akm_checks, seeded by --seed.
	num("akm_checks", func(v float64) {
		if v > 0 {
			forest.Checks = int(v)
		}
	})
	if _, ok := text("seed"); ok {
		forest.Seed = s.Seed
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, fmt.Errorf("%s: %w", ReportName, err)
	}
	if akm {
		s.Vocabulary.Forest = &forest
		ivf, err := legacyIVF(lineageJSON)
		if err != nil {
			return Settings{}, fmt.Errorf("%s: %w", LineageName, err)
		}
		s.Vocabulary.IVF = ivf
	}
	return s, nil
}

// legacyIVF reads the IVF an approximate vocabulary was trained with from
// incremental.json: the vocabulary's settings name ivf_lists, ivf_probes
// and ivf_seed when the job trained through an IVF, and nothing of the
// kind for a forest (nil, nil). Runs older still wrote the settings as one
// string, never of an IVF.
func legacyIVF(js []byte) (*IVF, error) {
	if len(js) == 0 {
		return nil, nil
	}
	var l struct {
		Vocabulary struct {
			Settings json.RawMessage `json:"settings"`
		} `json:"vocabulary"`
	}
	if err := json.Unmarshal(js, &l); err != nil {
		return nil, err
	}
	if len(l.Vocabulary.Settings) == 0 || l.Vocabulary.Settings[0] != '{' {
		return nil, nil
	}
	var set struct {
		Lists  *int    `json:"ivf_lists"`
		Probes *int    `json:"ivf_probes"`
		Seed   *uint64 `json:"ivf_seed"`
	}
	if err := json.Unmarshal(l.Vocabulary.Settings, &set); err != nil {
		return nil, fmt.Errorf("vocabulary settings: %w", err)
	}
	if set.Probes == nil {
		return nil, nil
	}
	if set.Lists == nil || set.Seed == nil || *set.Probes < 1 || *set.Lists < 0 {
		return nil, fmt.Errorf("vocabulary settings: an IVF of %s", l.Vocabulary.Settings)
	}
	return &IVF{Lists: *set.Lists, Probes: *set.Probes, Seed: *set.Seed}, nil
}
