package bowline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats/fileio"
)

// ManifestJSON names the manifest of a run: the last file a run writes,
// listing every file of it. Its presence means the run finished, and a
// reader trusts only the files it lists: files of a run are renamed into
// place one at a time, so while a run is writing, or after it was killed,
// the directory may hold a mix of its files and an earlier run's.
const ManifestJSON = "manifest.json"

// Manifest is the content of manifest.json.
type Manifest struct {
	// Job names the job that wrote the run: "bowline" or "retrain".
	Job      string    `json:"job"`
	Finished time.Time `json:"finished"`
	// Files are the run's files, by base name, sorted; the manifest itself
	// is not among them.
	Files []ManifestFile `json:"files"`
}

// ManifestFile is one file of a run.
type ManifestFile struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// ownName matches the names of the files the jobs write into their output
// directory: sharded Parquet tables, the reports, the manifest, and
// temporary files.
var ownName = regexp.MustCompile(`^(` +
	`[a-z0-9][a-z0-9._-]*-[0-9]{5,}-of-[0-9]{5,}\.parquet` + `|` +
	`report\.json|report\.html|manifest\.json|incremental\.json` + `|` +
	regexp.QuoteMeta(fileio.TempPrefix) + `.*` + `)$`)

// IsOwnFile reports whether a base name is that of a file the jobs write.
func IsOwnFile(name string) bool { return ownName.MatchString(name) }

// PrepareOutput readies the output directory dir (local or gs://) for a
// run, before the pipeline is built. A directory that holds anything but
// the jobs' own files — another program's output, a directory of photos —
// is refused, unless overwrite is set, in which case the files directly in
// it that the run does not write are removed when it finishes;
// sub-directories are kept (OverwriteHelp). The manifest and
// report.json of an earlier run are removed first, so that a run that is
// killed never looks finished.
func PrepareOutput(ctx context.Context, dir string, overwrite bool) error {
	names, isDir, err := fileio.Entries(ctx, dir)
	if err != nil {
		return err
	}
	var foreign, removed []string
	for _, n := range names {
		switch {
		case isDir[n]:
			foreign = append(foreign, n+"/")
		case !IsOwnFile(n):
			foreign = append(foreign, n)
			removed = append(removed, n)
		}
	}
	if len(removed) > 0 && overwrite {
		slog.Warn(fmt.Sprintf("output %s: --overwrite: when it finishes, the run removes %s directly in it that it does not write: %s",
			dir, count(int64(len(removed)), "file", "files"), strings.Join(atMost(removed, 5), ", ")))
	}
	if len(foreign) > 0 && !overwrite {
		shown := atMost(foreign, 5)
		return fmt.Errorf("output %s holds files that are not a bowline run's (%s): give an empty or new directory, "+
			"or --overwrite to have the run remove, when it finishes, the files directly in it that it did not write (sub-directories are kept)",
			dir, strings.Join(shown, ", "))
	}
	for _, n := range []string{ManifestJSON, ReportJSON} {
		if err := fileio.Remove(ctx, fileio.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// atMost returns names, or its first n and "and k more".
func atMost(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(names[:n:n], fmt.Sprintf("and %d more", len(names)-n))
}

// finishOutput completes a run whose files, by base name, are written:
// it removes every other file directly under dir — files of an earlier run
// this one did not rewrite (a learner no longer trained, another shard
// count), temporary files of killed runs, and, with overwrite, anything
// else — and then writes the manifest. Sub-directories are never touched.
// Each file removed is logged, with why. It returns the manifest.
func finishOutput(ctx context.Context, dir, job string, written []string, overwrite bool) (Manifest, error) {
	keep := map[string]bool{}
	for _, w := range written {
		keep[w] = true
	}
	names, isDir, err := fileio.Entries(ctx, dir)
	if err != nil {
		return Manifest{}, err
	}
	for _, n := range names {
		if keep[n] || isDir[n] || n == ManifestJSON || (!overwrite && !IsOwnFile(n)) {
			continue
		}
		path := fileio.Join(dir, n)
		if err := fileio.Remove(ctx, path); err != nil {
			return Manifest{}, err
		}
		why := "a file of an earlier run that this one did not write"
		if fileio.IsTemp(n) {
			why = "a temporary file of a killed run"
		} else if !IsOwnFile(n) {
			why = "not a bowline run's file (--overwrite)"
		}
		log.Infof(ctx, "output: removed %s: %s", path, why)
	}
	m := Manifest{Job: job, Finished: time.Now().UTC()}
	for n := range keep {
		size, err := fileio.Size(ctx, fileio.Join(dir, n))
		if err != nil {
			return Manifest{}, err
		}
		m.Files = append(m.Files, ManifestFile{Name: n, Bytes: size})
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Name < m.Files[j].Name })
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	return m, fileio.WriteBytes(ctx, fileio.Join(dir, ManifestJSON), append(js, '\n'))
}

// LoadManifest reads the manifest of the run under dir; an error if the
// run did not finish.
func LoadManifest(ctx context.Context, dir string) (Manifest, error) {
	path := fileio.Join(dir, ManifestJSON)
	js, err := fileio.ReadBytes(ctx, path)
	if err != nil {
		return Manifest{}, fmt.Errorf("no finished run in %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(js, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
