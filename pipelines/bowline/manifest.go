package bowline

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
)

// IsOwnFile reports whether a base name is that of a file the jobs write
// into their output directory: a file of a run (rundir.IsOwnFile) or a
// temporary file (fileio.IsTemp).
func IsOwnFile(name string) bool { return rundir.IsOwnFile(name) || fileio.IsTemp(name) }

// PrepareOutput readies the output directory dir (local or gs://) for a
// run, before the pipeline is built. A directory that holds anything but
// the jobs' own files — another program's output, a directory of photos —
// is refused, unless overwrite is set, in which case the files directly in
// it that the run does not write are removed when it finishes;
// sub-directories are kept (OverwriteHelp). Scratch files a killed
// job left (rundir.ScratchName) are removed. The manifest and
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
		case n == rundir.ScratchName:
			// Only a killed job leaves scratch files: none is read again.
			if err := fileio.RemoveAll(ctx, fileio.Join(dir, n)); err != nil {
				return err
			}
		case isDir[n]:
			foreign = append(foreign, n+"/")
		case !IsOwnFile(n):
			foreign = append(foreign, n)
			removed = append(removed, n)
		}
	}
	if len(removed) > 0 && overwrite {
		slog.Warn(fmt.Sprintf("output %s: --overwrite: when it finishes, the run removes %s directly in it that it does not write: %s",
			dir, files(len(removed)), strings.Join(atMost(removed, 5), ", ")))
	}
	if len(foreign) > 0 && !overwrite {
		shown := atMost(foreign, 5)
		return fmt.Errorf("output %s holds files that are not a bowline run's (%s): give an empty or new directory, "+
			"or --overwrite to have the run remove, when it finishes, the files directly in it that it did not write (sub-directories are kept)",
			dir, strings.Join(shown, ", "))
	}
	for _, n := range []string{rundir.ManifestName, rundir.ReportName} {
		if err := fileio.Remove(ctx, fileio.Join(dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// files says "1 file" or "n files".
func files(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
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
// else — and the scratch directory (rundir.ScratchName), whose files no
// stage reads any more, and then writes the manifest, with the run's
// settings. Other sub-directories are never touched. Each file removed is logged, with
// why. It returns the manifest.
func finishOutput(ctx context.Context, dir, job string, written []string, set *rundir.Settings, overwrite bool) (rundir.Manifest, error) {
	keep := map[string]bool{}
	for _, w := range written {
		keep[w] = true
	}
	if err := fileio.RemoveAll(ctx, fileio.Join(dir, rundir.ScratchName)); err != nil {
		return rundir.Manifest{}, err
	}
	names, isDir, err := fileio.Entries(ctx, dir)
	if err != nil {
		return rundir.Manifest{}, err
	}
	for _, n := range names {
		if keep[n] || isDir[n] || n == rundir.ManifestName || (!overwrite && !IsOwnFile(n)) {
			continue
		}
		path := fileio.Join(dir, n)
		if err := fileio.Remove(ctx, path); err != nil {
			return rundir.Manifest{}, err
		}
		why := "a file of an earlier run that this one did not write"
		if fileio.IsTemp(n) {
			why = "a temporary file of a killed run"
		} else if !IsOwnFile(n) {
			why = "not a bowline run's file (--overwrite)"
		}
		log.Infof(ctx, "output: removed %s: %s", path, why)
	}
	sizes := map[string]int64{}
	for n := range keep {
		size, err := fileio.Size(ctx, fileio.Join(dir, n))
		if err != nil {
			return rundir.Manifest{}, err
		}
		sizes[n] = size
	}
	m := rundir.NewManifest(job, time.Now(), sizes, set)
	js, err := m.Encode()
	if err != nil {
		return rundir.Manifest{}, err
	}
	return m, fileio.WriteBytes(ctx, fileio.Join(dir, rundir.ManifestName), js)
}
