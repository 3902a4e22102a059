package bowline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	rundir "github.com/bowline/bowline/formats/run"

	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/synthetic"
)

// walkJSONKeys calls fn with every object key in v, a decoded JSON value.
func walkJSONKeys(v any, path string, fn func(key, path string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			fn(k, path+"."+k)
			walkJSONKeys(e, path+"."+k, fn)
		}
	case []any:
		for _, e := range x {
			walkJSONKeys(e, path+"[]", fn)
		}
	}
}

// incremental.json holds its settings as JSON objects with snake_case
// keys, not as strings of JSON with Go field names inside; and reads back
// equal to the settings they were made from.
func TestLineageSettingsAreSnakeCaseObjects(t *testing.T) {
	c := DefaultConfig()
	c.Vocab.Approx = true
	l := rundir.Lineage{Describe: c.describeKey(), Learning: c.learningKey(), BoW: c.bowKey(), Parts: 2,
		Vocabulary: rundir.VocabDecision{Settings: c.vocabKey(), Kept: true, Reason: "kept", Reference: 1}}
	js, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"describe", "learning", "bow"} {
		if _, ok := v[k].(map[string]any); !ok {
			t.Errorf("%s is %T, want an object:\n%s", k, v[k], js)
		}
	}
	if vs, _ := v["vocabulary"].(map[string]any)["settings"].(map[string]any); vs["k"] != 1000.0 || vs["approx"] != true {
		t.Errorf("vocabulary settings %v, want an object with k 1000 and approx true", vs)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	walkJSONKeys(v, "", func(k, path string) {
		if !snake.MatchString(k) {
			t.Errorf("key %s is not snake_case", path)
		}
	})
	if d := v["describe"].(map[string]any); d["sift"].(map[string]any)["max_side"] == nil {
		t.Errorf("describe settings lack sift.max_side: %v", d)
	}
	var back rundir.Lineage
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Describe != c.describeKey() || back.Learning != c.learningKey() || back.BoW != c.bowKey() || back.Vocabulary.Settings != c.vocabKey() {
		t.Errorf("read back %+v,\nwant %+v", back, l)
	}
}

// A run whose incremental.json was written before settings were objects
// (strings of JSON with Go field names, the vocabulary's as name=value)
// is still a run to start from: its settings read as today's, so an
// incremental run keeps its features, vocabulary, counts and learners.
// (Such a file's vocabulary settings lacked how it was built:
// TestChangedVocabularyBuildRebuilds covers that.)
func TestStartFromOldLineage(t *testing.T) {
	c := DefaultConfig()
	dir := t.TempDir()
	c.Previous, c.Output = dir, filepath.Join(t.TempDir(), "out")
	d := c.Describe
	d.PartImages = 0
	bowOpts := c.BoW
	bowOpts.TF = "" // no option of its time, and no key of the counts (bowKey)
	old := func(v any) string {
		js, err := json.Marshal(v) // Go field names, as settingsKey wrote them
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	learning := old(struct {
		Seed          uint64
		QueryFraction float64
		Triplets      any
	}{c.Learning.Eval.Seed, c.Learning.Eval.QueryFraction, c.Triplets})
	lineage, err := json.Marshal(map[string]any{
		"describe": old(d), "learning": learning, "bow": old(bowOpts), "parts": 1,
		"images":     map[string]any{"listed": 10, "described": 10, "carried": 0},
		"vocabulary": map[string]any{"settings": c.Vocab.Settings(), "kept": false, "reason": "a full run", "reference": 1234.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	writePrevious(t, dir, lineage, nil)
	p, err := loadPrevious(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CarryFeatures || !p.KeepVocab || !p.CarryCounts || !p.WarmStart {
		t.Errorf("from an old incremental.json: carry features %v, keep vocabulary %v, carry counts %v, warm start %v (%s); want all",
			p.CarryFeatures, p.KeepVocab, p.CarryCounts, p.WarmStart, p.Why)
	}
}

// writePrevious writes into dir the manifest of a finished one-part run
// with features, counts and a solis-ada state, and its incremental.json.
func writePrevious(t *testing.T, dir string, lineage []byte, set *rundir.Settings) {
	t.Helper()
	manifest, err := rundir.NewManifest("bowline", time.Now(), map[string]int64{
		"images-00000-of-00001.parquet": 1, "features-00000-of-00001.parquet": 1, "counts-00000-of-00001.parquet": 1,
		"state-solis-ada-00000-of-00001.parquet": 1, rundir.LineageName: int64(len(lineage))}, set).Encode()
	if err != nil {
		t.Fatal(err)
	}
	for name, js := range map[string][]byte{rundir.LineageName: lineage, rundir.ManifestName: manifest} {
		if err := os.WriteFile(filepath.Join(dir, name), js, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fullLineage returns the incremental.json of a full one-part run made
// with c's settings.
func fullLineage(t *testing.T, c Config) []byte {
	t.Helper()
	lineage, err := json.Marshal(rundir.Lineage{Describe: c.describeKey(), Learning: c.learningKey(), BoW: c.bowKey(), Parts: 1,
		Vocabulary: rundir.VocabDecision{Settings: c.vocabKey(), Reason: "a full run", Reference: 1234.5}})
	if err != nil {
		t.Fatal(err)
	}
	return lineage
}

// A run started from one described with other settings (a night whose
// --max_side, --sift_double (on, off or a bound) or --dct_scale differs
// from the published run's, by flag or by the job's defaults) describes
// its images again and builds its vocabulary, counts and learners afresh:
// features of two settings never mix. A change of those sizing settings
// alone, from a run that recorded its settings (one that recorded no
// dct_scale decoded at full size), carries the images both settings
// describe alike (describebeam decides which, by their size) and keeps
// the rest as a same-settings night would.
func TestChangedDescriptionRedescribes(t *testing.T) {
	base := DefaultConfig()
	base.Describe.SIFT.MaxSide, base.Describe.SIFT.DoubleImage, base.Describe.SIFT.DoubleBelow = 1600, true, 0
	base.Describe.DCTScale = false
	for _, tc := range []struct {
		name     string
		set      func(c *Config)
		settings bool // the previous run recorded its settings
		carry    bool
		resized  bool
	}{
		{"same settings", func(*Config) {}, true, true, false},
		{"another part size", func(c *Config) { c.Describe.PartImages++ }, true, true, false},
		{"max_side 800", func(c *Config) { c.Describe.SIFT.MaxSide = 800 }, true, true, true},
		{"max_side 800, no recorded settings", func(c *Config) { c.Describe.SIFT.MaxSide = 800 }, false, false, false},
		{"max_side 800 and no sift_double", func(c *Config) { c.Describe.SIFT.MaxSide, c.Describe.SIFT.DoubleImage = 800, false }, true, false, false},
		{"no sift_double", func(c *Config) { c.Describe.SIFT.DoubleImage = false }, true, false, false},
		{"sift_double 512", func(c *Config) { c.Describe.SIFT.DoubleBelow = 512 }, true, true, true},
		{"max_side 800, sift_double 512", func(c *Config) { c.Describe.SIFT.MaxSide, c.Describe.SIFT.DoubleBelow = 800, 512 }, true, true, true},
		{"dct_scale", func(c *Config) { c.Describe.DCTScale = true }, true, true, true},
		{"dct_scale, no recorded settings", func(c *Config) { c.Describe.DCTScale = true }, false, false, false},
		{"dct_scale and max_pixels", func(c *Config) { c.Describe.DCTScale, c.Describe.MaxPixels = true, 1e6 }, true, false, false},
		{"the job's defaults", func(c *Config) { c.Describe = DefaultConfig().Describe }, true, true, base.describeKey() != DefaultConfig().describeKey()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var set *rundir.Settings
			if tc.settings {
				set = base.RunSettings()
			}
			writePrevious(t, dir, fullLineage(t, base), set)
			c := base
			tc.set(&c)
			c.Previous, c.Output = dir, filepath.Join(t.TempDir(), "out")
			p, err := loadPrevious(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if tc.carry {
				if !p.CarryFeatures || !p.KeepVocab || !p.CarryCounts || !p.WarmStart {
					t.Errorf("carry features %v, keep vocabulary %v, carry counts %v, warm start %v (%s); want all",
						p.CarryFeatures, p.KeepVocab, p.CarryCounts, p.WarmStart, p.Why)
				}
				if got := p.describe().Describe; got.SIFT != base.Describe.SIFT || got.DCTScale != base.Describe.DCTScale {
					t.Errorf("the previous run's SIFT options %+v and dct_scale %v, want %+v and %v", got.SIFT, got.DCTScale, base.Describe.SIFT, base.Describe.DCTScale)
				}
				want := "photos both settings describe alike keep their features"
				if strings.Contains(p.Why, want) != tc.resized {
					t.Errorf("why %q: naming %q %v, want %v", p.Why, want, !tc.resized, tc.resized)
				}
				return
			}
			if p.CarryFeatures || p.KeepVocab || p.CarryCounts || p.WarmStart || p.describe().Dir != "" || p.counts().Dir != "" {
				t.Errorf("carry features %v, keep vocabulary %v, carry counts %v, warm start %v; want none", p.CarryFeatures, p.KeepVocab, p.CarryCounts, p.WarmStart)
			}
			if !strings.Contains(p.Why, "description settings changed") || !strings.Contains(p.Why, string(base.describeKey())) || !strings.Contains(p.Why, string(c.describeKey())) {
				t.Errorf("why %q: want the description settings named, before and now", p.Why)
			}
		})
	}
}

// A run started from one whose vocabulary was built otherwise — another
// --vocab_sample, --vocab_iter, --vocab_init, --seed or --akm, or exact
// training moved between one worker and distributed, whose re-seeding of
// empty clusters differs — builds its vocabulary again and says why, and
// carries the features over. What trains the same centroids keeps it: the
// chunk count of distributed training, the part loads, the word shards
// of the update, --vocab_init auto for the method it resolves to. A
// previous run whose lineage predates the build settings recorded only
// how its vocabulary quantises: nothing shows it was built as this run
// asks, so it is built again, and the reason names what was not recorded.
func TestChangedVocabularyBuildRebuilds(t *testing.T) {
	base := DefaultConfig()
	base.Vocab.Sample = 20000
	distributed := base
	distributed.Vocab.Chunks = 2
	akm := base
	akm.Vocab.Approx = true
	for _, tc := range []struct {
		name       string
		prev       Config
		set        func(c *Config)
		keep       bool
		why        string
		oldLineage string
	}{
		{name: "same settings", prev: base, set: func(*Config) {}, keep: true},
		{name: "other part loads and word shards", prev: base, set: func(c *Config) { c.Vocab.PartLoads, c.Vocab.ShardWords = 7, 9 }, keep: true},
		{name: "vocab_init auto as kmeans||", prev: base, set: func(c *Config) { c.Vocab.Init = kmeans.InitParallel }, keep: true},
		{name: "distributed, other vocab_chunks", prev: distributed, set: func(c *Config) { c.Vocab.Chunks = 5 }, keep: true},
		{name: "akm, one worker to distributed", prev: akm, set: func(c *Config) { c.Vocab.Chunks = 3 }, keep: true},
		{name: "vocab_sample", prev: base, set: func(c *Config) { c.Vocab.Sample = 30000 }, why: "the vocabulary settings changed: sample 20000, now 30000"},
		{name: "vocab_iter", prev: base, set: func(c *Config) { c.Vocab.MaxIter = 10 }, why: "the vocabulary settings changed: max_iter 25, now 10"},
		{name: "vocab_init random", prev: base, set: func(c *Config) { c.Vocab.Init = kmeans.InitRandom }, why: "the vocabulary settings changed: init \"kmeans||\", now \"random\""},
		{name: "seed", prev: base, set: func(c *Config) { c.Vocab.Seed = 2 }, why: "the vocabulary settings changed: train_seed 1, now 2"},
		{name: "tol", prev: base, set: func(c *Config) { c.Vocab.Tol = 0 }, why: "the vocabulary settings changed: tol 0.00025, now 0"},
		{name: "akm", prev: base, set: func(c *Config) { c.Vocab.Approx = true }, why: "the vocabulary settings changed: approx false, now true; checks 0, now 256; ivf_lists none, now 0"},
		{name: "akm, train probes", prev: akm, set: func(c *Config) { c.Vocab.TrainProbes = 2 }, why: "the vocabulary settings changed: ivf_train_probes 4, now 2"},
		{name: "exact, one worker to distributed", prev: base, set: func(c *Config) { c.Vocab.Chunks = 3 }, why: "the vocabulary settings changed: reseed \"farthest\", now \"split\""},
		{name: "lineage without build settings", prev: base, set: func(*Config) {}, oldLineage: "k=1000 approx=false trees=0 leaf=0 checks=0 seed=0", keep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lineage := fullLineage(t, tc.prev)
			if tc.oldLineage != "" {
				var l map[string]any
				if err := json.Unmarshal(lineage, &l); err != nil {
					t.Fatal(err)
				}
				l["vocabulary"].(map[string]any)["settings"] = tc.oldLineage
				var err error
				if lineage, err = json.Marshal(l); err != nil {
					t.Fatal(err)
				}
			}
			writePrevious(t, dir, lineage, nil)
			c := tc.prev
			tc.set(&c)
			c.Previous, c.Output = dir, filepath.Join(t.TempDir(), "out")
			p, err := loadPrevious(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if !p.CarryFeatures {
				t.Errorf("features not carried (%s)", p.Why)
			}
			if tc.keep {
				if !p.KeepVocab || !p.CarryCounts || !p.WarmStart {
					t.Errorf("keep vocabulary %v, carry counts %v, warm start %v (%s); want all", p.KeepVocab, p.CarryCounts, p.WarmStart, p.Why)
				}
				return
			}
			if p.KeepVocab || p.CarryCounts || p.WarmStart {
				t.Errorf("keep vocabulary %v, carry counts %v, warm start %v; want none", p.KeepVocab, p.CarryCounts, p.WarmStart)
			}
			if !strings.HasPrefix(p.Why, tc.why) {
				t.Errorf("why %q: want it to start %q", p.Why, tc.why)
			}
		})
	}
}

// A run described before sift.Options.DoubleBelow doubled every image and
// decoded at full size, and its incremental.json's description settings
// hold no double_below and no dct_scale (testdata/legacy-run): a night that
// doubles every image with its other settings carries its features over;
// one that doubles only small images, as the job's defaults do, describes
// every image again.
func TestDescribeKeyBeforeDoubleBelow(t *testing.T) {
	js, err := os.ReadFile("../../testdata/legacy-run/" + rundir.LineageName)
	if err != nil {
		t.Fatal(err)
	}
	l, err := rundir.DecodeLineage(js)
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	c.Describe.SIFT.MaxSide, c.Describe.SIFT.DoubleBelow, c.Describe.DCTScale = 400, 0, false
	if l.Describe != c.describeKey() {
		t.Errorf("every image doubled: key %s, the run's %s", c.describeKey(), l.Describe)
	}
	c.Describe.SIFT.DoubleBelow = DefaultConfig().Describe.SIFT.DoubleBelow
	if c.Describe.SIFT.DoubleBelow == 0 || l.Describe == c.describeKey() {
		t.Errorf("doubled below %d: key %s, the run's the same", c.Describe.SIFT.DoubleBelow, c.describeKey())
	}
}

// A learner trained on one labelling is no warm start for another: a run
// started from one made with another --label_column keeps the features,
// vocabulary and counts (they do not depend on labels) and trains its
// learners afresh; with the same label column it warm-starts them.
func TestLabelColumnChangeTrainsAfresh(t *testing.T) {
	base := DefaultConfig()
	base.Columns.Label = "object"
	dir := t.TempDir()
	writePrevious(t, dir, fullLineage(t, base), &rundir.Settings{LabelColumn: "object"})
	for _, label := range []string{"object", "category"} {
		c := base
		c.Columns.Label = label
		c.Previous, c.Output = dir, filepath.Join(t.TempDir(), "out")
		p, err := loadPrevious(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if !p.CarryFeatures || !p.KeepVocab || !p.CarryCounts {
			t.Errorf("%s: carry features %v, keep vocabulary %v, carry counts %v (%s); want all", label, p.CarryFeatures, p.KeepVocab, p.CarryCounts, p.Why)
		}
		if same := label == "object"; p.WarmStart != same {
			t.Errorf("%s: warm start %v (%s), want %v", label, p.WarmStart, p.Why, same)
		}
		if label == "category" && !strings.Contains(p.Why, "label column changed (object, now category)") {
			t.Errorf("why %q: want the label columns named", p.Why)
		}
	}
}

// The counts files hold raw counts whatever --tf is, so incremental.json's
// bow settings leave TF out: a run may carry the counts of one made with
// another TF, or made before TF existed, and weights them afresh.
func TestBoWKeyLeavesOutTF(t *testing.T) {
	c := DefaultConfig()
	before, err := json.Marshal(struct{ Soft any }{c.BoW.Soft}) // bowbeam.Options before TF
	if err != nil {
		t.Fatal(err)
	}
	for _, tf := range []bow.TF{"", bow.TFRaw, bow.TFSqrt, bow.TFLog} {
		c.BoW.TF = tf
		if got, want := c.bowKey(), settingsKey(json.RawMessage(before)); got != want {
			t.Errorf("tf %q: bow settings %s, want %s", tf, got, want)
		}
	}
	soft := c
	soft.BoW.Soft.R = 3
	if soft.bowKey() == c.bowKey() {
		t.Errorf("soft assignment leaves the bow settings %s", c.bowKey())
	}
}

// The description settings leave --dct_scale and the version of its
// transforms out when it is off, so that a run described before the
// setting existed carries its features into a run that turns it off; on,
// they hold both.
func TestDescribeKeyDCTScale(t *testing.T) {
	c := DefaultConfig()
	c.Describe.DCTScale = false
	d := c.Describe
	d.PartImages, d.Synthetic = 0, synthetic.Spec{}
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(js, &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "DCTScale")
	delete(v, "DCTVersion")
	before, err := json.Marshal(v) // describe.Options before DCTScale and DCTVersion
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.describeKey(), settingsKey(json.RawMessage(before)); got != want {
		t.Errorf("description settings %s, want %s", got, want)
	}
	c.Describe.DCTScale = true
	if k := string(c.describeKey()); !strings.Contains(k, `"dct_scale":true`) || !strings.Contains(k, `"dct_version":1`) {
		t.Errorf("description settings with --dct_scale: %s", k)
	}
}

// A night over a run DCT-scaled through other reduced transforms (one
// that recorded no dct_version: libjpeg's) is a change of sizing: it
// carries what describebeam finds alike, with the previous run's options
// to judge by, so the photos the run DCT-scaled are described again and
// no run mixes the two versions' features.
func TestDCTVersionChangeIsResized(t *testing.T) {
	base := DefaultConfig()
	base.Describe.DCTVersion = 0
	dir := t.TempDir()
	writePrevious(t, dir, fullLineage(t, base), base.RunSettings())
	if base.RunSettings().DCTVersion != 0 {
		t.Fatalf("the previous run records dct_version %d", base.RunSettings().DCTVersion)
	}
	c := DefaultConfig()
	c.Previous, c.Output = dir, filepath.Join(t.TempDir(), "out")
	p, err := loadPrevious(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !p.CarryFeatures || !strings.Contains(p.Why, "dct_version 0, now 1") {
		t.Errorf("carry features %v (%s); want carried as a change of sizing, dct_version 0, now 1", p.CarryFeatures, p.Why)
	}
	if got := p.describe().Describe; got.DCTVersion != 0 || !got.DCTScale {
		t.Errorf("the previous run's options: dct_scale %v, dct_version %d; want on, 0", got.DCTScale, got.DCTVersion)
	}
}
