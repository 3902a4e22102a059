// Package run owns a run directory: the names of its files, its manifest
// (Manifest), and the typed record of the settings a reader needs to
// reproduce the run's vectors and rankings (Settings). The jobs write a
// run's files and readers read them through this package's names and
// codecs; the I/O itself stays with each side (formats/fileio through
// Beam's file systems in the pipelines, formats/blob in the readers), so
// the package is pure Go and imports no Beam.
//
// A run directory holds sharded Parquet tables (<table>-SSSSS-of-NNNNN.parquet,
// ShardTable), report.json and report.html (ReportName, ReportHTMLName),
// incremental.json (LineageName) and, written last, manifest.json
// (ManifestName), which lists every file of the run and holds its
// Settings. A root of versioned runs holds published.json
// (PublishedName, package formats/published) beside runs/.
//
// A manifest written before Settings existed has none; Load then reads
// the settings from that run's report.json and incremental.json
// (legacy.go), the one place that knows the command-line flag names those
// files recorded.
package run

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
)

// The files of a run directory, by base name.
const (
	// ManifestName is the manifest: the last file a run writes, listing
	// every file of it and holding its Settings. Its presence means the
	// run finished, and a reader trusts only the files it lists: files
	// of a run are renamed into place one at a time, so while a run is
	// writing, or after it was killed, the directory may hold a mix of
	// its files and an earlier run's.
	ManifestName = "manifest.json"
	// ReportName and ReportHTMLName are the evaluation report
	// (transforms/report), as JSON and as a page.
	ReportName     = "report.json"
	ReportHTMLName = "report.html"
	// LineageName records what a run was built from and what an
	// incremental run starting from it needs (Lineage).
	LineageName = "incremental.json"
	// PublishedName is the pointer from a root of versioned runs to the
	// one run readers use (formats/published); it lives in the root, not
	// in a run.
	PublishedName = "published.json"
	// ScratchName is the directory of a run's scratch files: what a stage
	// writes for later stages of the same job to read, on every worker,
	// and removes once they are done (the vocabulary's sample chunks).
	// Each job writes in a sub-directory of its own, so it never reads
	// another's; what a killed job left is removed when the next run of
	// the directory starts. It is no file of the run: no manifest lists
	// it.
	ScratchName = ".scratch"
)

// QueryScoresTable is the table of the score of every query the run
// evaluated, method by method (formats.QueryScore): what a later run's
// report pairs its own queries with to compare the two runs query by
// query.
const QueryScoresTable = "query-scores"

// shardName matches the name of one file of a sharded table
// (formats.ShardName), capturing the table's name, the part and the number
// of parts. A table's name is lower-case letters, digits and "._+-" ('+'
// for a sweep's learners, "solis-ada-lambda-1e+06").
var shardName = regexp.MustCompile(`^([a-z0-9][a-z0-9._+-]*)-([0-9]{5,})-of-([0-9]{5,})\.parquet$`)

// Shard splits the name of one file of a sharded table: the table
// ("bow" of "bow-00001-of-00004.parquet"), the part (1) and the number of
// parts (4); ok is false for any other name.
func Shard(name string) (table string, part, parts int, ok bool) {
	s := shardName.FindStringSubmatch(name)
	if s == nil {
		return "", 0, 0, false
	}
	part, err1 := strconv.Atoi(s[2])
	parts, err2 := strconv.Atoi(s[3])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false
	}
	return s[1], part, parts, true
}

// ShardTable returns the table a file of a sharded table belongs to
// ("bow" of "bow-00000-of-00004.parquet"), and whether name is one.
func ShardTable(name string) (string, bool) {
	t, _, _, ok := Shard(name)
	return t, ok
}

// CorpusTables are the tables of a run that hold its images and their
// description and quantisation, before any learner: what learners train
// on and readers describe a query against. A run retrained from another
// (pipelines/retrain) holds copies of its base's, so that it is
// self-contained like any run; the learners' models, indexes and states,
// the triplets and the report rows are each job's own.
var CorpusTables = []string{"images", "dead-letters", "features", "counts", "geometry", "codebook", "idf", "bow"}

// TablePattern is the glob of the files of table in a run directory
// ("codebook-*.parquet").
func TablePattern(table string) string { return table + "-*.parquet" }

// IsOwnFile reports whether a base name is that of a file the jobs write
// into a run directory: a shard of a table, a report, the lineage or the
// manifest. (Temporary files are formats/fileio's: fileio.IsTemp.)
func IsOwnFile(name string) bool {
	if _, ok := ShardTable(name); ok {
		return true
	}
	return slices.Contains([]string{ManifestName, ReportName, ReportHTMLName, LineageName}, name)
}

// Tables groups the names of files by table (ShardTable), each table's
// names sorted; others are the names that are no table's, in the order
// given.
func Tables(names []string) (tables map[string][]string, others []string) {
	tables = map[string][]string{}
	for _, n := range names {
		if t, ok := ShardTable(n); ok {
			tables[t] = append(tables[t], n)
		} else {
			others = append(others, n)
		}
	}
	for _, ns := range tables {
		sort.Strings(ns)
	}
	return tables, others
}
