package run

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Manifest is the content of manifest.json.
type Manifest struct {
	// Job names the job that wrote the run: "bowline" or "retrain".
	Job      string    `json:"job"`
	Finished time.Time `json:"finished"`
	// Files are the run's files, by base name, sorted; the manifest itself
	// is not among them.
	Files []ManifestFile `json:"files"`
	// Settings are what a reader needs to describe, quantise and rank a
	// query as the run did. A manifest written before they were recorded
	// has none: Load fills them from that run's report.json.
	Settings *Settings `json:"settings,omitempty"`
}

// ManifestFile is one file of a run.
type ManifestFile struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// NewManifest returns the manifest of a run job wrote, finished at
// finished, of the files of the given sizes by base name.
func NewManifest(job string, finished time.Time, sizes map[string]int64, set *Settings) Manifest {
	m := Manifest{Job: job, Finished: finished.UTC(), Settings: set}
	for n, b := range sizes {
		m.Files = append(m.Files, ManifestFile{Name: n, Bytes: b})
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
	return m
}

// Encode returns the manifest as manifest.json holds it.
func (m Manifest) Encode() ([]byte, error) {
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(js, '\n'), nil
}

// DecodeManifest reads manifest.json's content.
func DecodeManifest(js []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(js, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", ManifestName, err)
	}
	return m, nil
}

// Names returns the base names of the manifest's files.
func (m Manifest) Names() []string {
	out := make([]string, len(m.Files))
	for i, f := range m.Files {
		out[i] = f.Name
	}
	return out
}

// Has reports whether the manifest lists the file of base name name.
func (m Manifest) Has(name string) bool {
	return slices.ContainsFunc(m.Files, func(f ManifestFile) bool { return f.Name == name })
}

// ReadFunc returns the content of the file of base name name of one run
// directory, local or remote: how the caller does its I/O.
type ReadFunc func(ctx context.Context, name string) ([]byte, error)

// Load reads the manifest of a finished run through read, with its
// Settings set: the manifest's own, or, for a run whose manifest holds
// none, those its report.json and incremental.json recorded
// (LegacySettings). A manifest with neither settings nor a report (a
// run's files listed by hand) leaves Settings nil: its settings are
// unknown, which matters only to a reader that needs them.
func Load(ctx context.Context, read ReadFunc) (Manifest, error) {
	js, err := read(ctx, ManifestName)
	if err != nil {
		return Manifest{}, err
	}
	m, err := DecodeManifest(js)
	if err != nil {
		return Manifest{}, err
	}
	if m.Settings != nil {
		return m, nil
	}
	if !m.Has(ReportName) {
		// Settings stay nil: the run's settings are unknown.
		return m, nil
	}
	rep, err := read(ctx, ReportName)
	if err != nil {
		return Manifest{}, err
	}
	var lineage []byte
	if m.Has(LineageName) {
		if lineage, err = read(ctx, LineageName); err != nil {
			return Manifest{}, err
		}
	}
	set, err := LegacySettings(rep, lineage)
	if err != nil {
		return Manifest{}, err
	}
	m.Settings = &set
	return m, nil
}

// Dir is one run directory, read through Read (its I/O: Beam's file
// systems in the jobs, formats/fileio.RunDir) and named Path in errors.
type Dir struct {
	Path string
	Read ReadFunc
}

// Manifest reads the manifest of the run with its settings set (Load):
// an error naming the directory if the run did not finish.
func (d Dir) Manifest(ctx context.Context) (Manifest, error) {
	return Load(ctx, func(ctx context.Context, name string) ([]byte, error) {
		js, err := d.Read(ctx, name)
		if err != nil && name == ManifestName {
			return nil, fmt.Errorf("no finished run in %s: %w", d.Path, err)
		}
		return js, err
	})
}

// Lineage reads the run's incremental.json (LineageName).
func (d Dir) Lineage(ctx context.Context) (Lineage, error) {
	js, err := d.Read(ctx, LineageName)
	if err != nil {
		return Lineage{}, err
	}
	l, err := DecodeLineage(js)
	if err != nil {
		return Lineage{}, fmt.Errorf("%s/%s: %w", d.Path, LineageName, err)
	}
	return l, nil
}

// Report returns the content of the run's report.json (ReportName),
// which package transforms/report decodes.
func (d Dir) Report(ctx context.Context) ([]byte, error) {
	return d.Read(ctx, ReportName)
}
