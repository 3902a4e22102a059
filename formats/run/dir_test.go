package run

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// TestDir reads a run's files through a Dir: the manifest of a finished
// run, an error naming the directory for an unfinished one, the lineage,
// and an error naming the file for a lineage that does not decode.
func TestDir(t *testing.T) {
	ctx := context.Background()
	files := map[string]string{}
	d := Dir{Path: "/runs/a", Read: func(_ context.Context, name string) ([]byte, error) {
		if js, ok := files[name]; ok {
			return []byte(js), nil
		}
		return nil, fs.ErrNotExist
	}}
	if _, err := d.Manifest(ctx); err == nil || !strings.HasPrefix(err.Error(), "no finished run in /runs/a: ") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no manifest: %v", err)
	}
	m, err := NewManifest("bowline", time.Unix(1, 0), map[string]int64{"bow-00000-of-00001.parquet": 10}, &Settings{LabelColumn: "label"}).Encode()
	if err != nil {
		t.Fatal(err)
	}
	files[ManifestName] = string(m)
	if got, err := d.Manifest(ctx); err != nil || !got.Has("bow-00000-of-00001.parquet") || got.Settings == nil || got.Settings.LabelColumn != "label" {
		t.Errorf("manifest %+v, %v", got, err)
	}
	if _, err := d.Lineage(ctx); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no lineage: %v", err)
	}
	files[LineageName] = "{"
	if _, err := d.Lineage(ctx); err == nil || !strings.HasPrefix(err.Error(), "/runs/a/incremental.json: ") {
		t.Errorf("a lineage that does not decode: %v", err)
	}
	l, err := Lineage{Previous: "/runs/z", Parts: 3}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	files[LineageName] = string(l)
	if got, err := d.Lineage(ctx); err != nil || got.Previous != "/runs/z" || got.Parts != 3 {
		t.Errorf("lineage %+v, %v", got, err)
	}
	files[ReportName] = `{"input":"x"}`
	if js, err := d.Report(ctx); err != nil || string(js) != files[ReportName] {
		t.Errorf("report %q, %v", js, err)
	}
}

// TestReusedBy checks what a run may reuse of the one it starts from, by
// the settings keys of both lineages.
func TestReusedBy(t *testing.T) {
	prev := Lineage{Describe: "d", BoW: "b", Learning: "l", Vocabulary: VocabDecision{Settings: "v", Reference: 2}}
	for _, c := range []struct {
		name    string
		next    Lineage
		rebuild bool
		want    Reuse
	}{
		{"same", prev, false, Reuse{Features: true, Vocabulary: true, Counts: true, WarmStart: true}},
		{"description", Lineage{Describe: "d2", BoW: "b", Learning: "l", Vocabulary: VocabDecision{Settings: "v"}}, false, Reuse{Why: "the description settings changed (d, now d2): every image is described again"}},
		{"rebuild", prev, true, Reuse{Features: true, Why: "--rebuild_vocab"}},
		{"vocabulary", Lineage{Describe: "d", BoW: "b", Learning: "l", Vocabulary: VocabDecision{Settings: "v2"}}, false,
			Reuse{Features: true, Why: "the vocabulary settings changed (v, now v2)"}},
		{"bow and learning", Lineage{Describe: "d", BoW: "b2", Learning: "l2", Vocabulary: VocabDecision{Settings: "v"}}, false, Reuse{Features: true, Vocabulary: true}},
	} {
		if got := prev.ReusedBy(c.next, c.rebuild); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// Settings as objects: the changes are named, and settings recorded
	// only since the previous run make it keep no vocabulary.
	vocab := func(settings Key) Lineage {
		l := prev
		l.Vocabulary.Settings = settings
		return l
	}
	older := vocab(`{"k":10,"seed":0}`)
	for _, c := range []struct {
		name string
		next Key
		why  string
	}{
		{"changed", `{"k":20,"seed":0}`, "the vocabulary settings changed: k 10, now 20"},
		{"changed and added", `{"k":10,"sample":5}`, "the vocabulary settings changed: sample none, now 5; seed 0, now none"},
	} {
		if got := older.ReusedBy(vocab(c.next), false); got != (Reuse{Features: true, Why: c.why}) {
			t.Errorf("%s: %+v, want features only, why %q", c.name, got, c.why)
		}
	}
	// Settings the previous run predates are no change: its vocabulary
	// stays a candidate for the drift check.
	if got, want := older.ReusedBy(vocab(`{"k":10,"sample":5,"seed":0,"tol":0}`), false), (Reuse{Features: true, Vocabulary: true, Counts: true, WarmStart: true}); got != want {
		t.Errorf("settings added: %+v, want %+v", got, want)
	}
	noRef := prev
	noRef.Vocabulary.Reference = 0
	if got := noRef.ReusedBy(prev, false); got.Vocabulary || !got.Features || got.Why != "the previous run recorded no distortion of its vocabulary" {
		t.Errorf("no reference distortion: %+v", got)
	}
}
