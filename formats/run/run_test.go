package run

import (
	"context"
	"fmt"
	"io/fs"
	"reflect"
	"testing"
	"time"
)

func TestOwnFilesAndTables(t *testing.T) {
	for name, own := range map[string]bool{
		"bow-00000-of-00004.parquet":                          true,
		"index-solis-ada-lambda-1e+06-00001-of-00002.parquet": true,
		ManifestName:         true,
		ReportName:           true,
		ReportHTMLName:       true,
		LineageName:          true,
		PublishedName:        false,
		"photo.jpg":          false,
		"bow-0-of-1.parquet": false,
	} {
		if IsOwnFile(name) != own {
			t.Errorf("IsOwnFile(%q) = %v", name, !own)
		}
	}
	tables, others := Tables([]string{"bow-00001-of-00002.parquet", ReportName, "bow-00000-of-00002.parquet", "index-solis-ada-00000-of-00001.parquet"})
	want := map[string][]string{"bow": {"bow-00000-of-00002.parquet", "bow-00001-of-00002.parquet"}, "index-solis-ada": {"index-solis-ada-00000-of-00001.parquet"}}
	if !reflect.DeepEqual(tables, want) || !reflect.DeepEqual(others, []string{ReportName}) {
		t.Fatalf("Tables: %v, %v", tables, others)
	}
}

// A manifest round-trips with its settings; Load takes them from it, and
// reads the report only for a manifest without them.
func TestManifestSettings(t *testing.T) {
	set := &Settings{SIFT: SIFT{MaxSide: 640}, TF: "sqrt", Vocabulary: Vocabulary{Words: 50, Forest: &Forest{Trees: 8}}}
	m := NewManifest("bowline", time.Unix(1, 0), map[string]int64{ReportName: 10, "bow-00000-of-00001.parquet": 3}, set)
	js, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{ManifestName: js}
	read := func(_ context.Context, name string) ([]byte, error) {
		if b, ok := files[name]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	got, err := Load(context.Background(), read)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("read back %+v, want %+v", got, m)
	}

	m.Settings = nil
	if js, err = m.Encode(); err != nil {
		t.Fatal(err)
	}
	files[ManifestName] = js
	files[ReportName] = []byte(`{"config": {"max_side": 640}}`)
	got, err = Load(context.Background(), read)
	if err != nil {
		t.Fatal(err)
	}
	if got.Settings == nil || got.Settings.SIFT.MaxSide != 640 || got.Settings.TF != "raw" {
		t.Fatalf("legacy settings %+v", got.Settings)
	}
}

// A manifest with neither settings nor a report loads, its settings
// unknown (nil).
func TestManifestWithoutSettings(t *testing.T) {
	js, err := NewManifest("bowline", time.Unix(1, 0), map[string]int64{LineageName: 2}, nil).Encode()
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(context.Background(), func(_ context.Context, name string) ([]byte, error) {
		if name != ManifestName {
			t.Fatalf("read %s", name)
		}
		return js, nil
	})
	if err != nil || m.Settings != nil || !m.Has(LineageName) {
		t.Fatalf("Load: %+v, %v", m, err)
	}
}

func TestShard(t *testing.T) {
	for name, want := range map[string]struct {
		table       string
		part, parts int
		ok          bool
	}{
		"bow-00001-of-00004.parquet":             {"bow", 1, 4, true},
		"state-solis-ada-00000-of-00001.parquet": {"state-solis-ada", 0, 1, true},
		"bow-1-of-4.parquet":                     {},
		ReportName:                               {},
	} {
		table, part, parts, ok := Shard(name)
		if table != want.table || part != want.part || parts != want.parts || ok != want.ok {
			t.Errorf("Shard(%q) = %q, %d, %d, %v; want %+v", name, table, part, parts, ok, want)
		}
	}
}
