package bowline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/ingest/ingestbeam"
	"github.com/bowline/bowline/transforms/synthetic"
	"github.com/bowline/bowline/transforms/triplets"
)

// OverwriteHelp is the help of the commands' --overwrite: what
// PrepareOutput and the end of a run do with a directory that holds
// files that are not a bowline run's, exactly.
const OverwriteHelp = "let the run use an output directory that holds other files than a bowline run's: when the run finishes, " +
	"it removes every file directly in the directory that it did not write; sub-directories, and what they hold, are kept. " +
	"Without it such a directory is refused. An earlier run's files are replaced either way. " +
	"A directory that holds what the run reads (its input, an image a labels CSV names, the run it starts from) is refused with or without it"

// Preflight checks, before a pipeline is built, what can be checked
// without running it, so that a mistake costs a readable error and not a
// failed job: the input (CheckInput, its warnings logged) and the output
// (CheckOutput).
func Preflight(ctx context.Context, c Config) error {
	warnings, err := CheckInput(ctx, c)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		slog.Warn(w)
	}
	return CheckOutput(c.Output)
}

// CheckInput checks c's input before the job starts: a synthetic corpus's
// specification parses; a labels CSV or a folder of images can be read and
// has labels a learner can learn from (triplets.Learnable: two labels, one
// of them with two images). The CSV is read row by row through the reader
// the job uses (gs:// too) and has the columns c.Columns names and rows
// below its header; a folder is listed and its files told apart as the
// job tells them (ingestbeam.WalkFolder). Either way it keeps counts by
// label and kind only, so the check holds memory by labels, not images.
// Rows and files the job will refuse as dead letters, and files it skips,
// do not stop it: they come back as warnings.
//
// The input — the CSV, the folder, any file the CSV names — may not lie in
// c.Output (an *InputInOutputError; Validate checks c.Previous), whatever
// c.Overwrite says: finishing a run removes files from its output
// directory. It creates nothing.
func CheckInput(ctx context.Context, c Config) (warnings []string, err error) {
	input := c.Input
	if synthetic.IsInput(input) {
		_, err := synthetic.Parse(input)
		return nil, err
	}
	var out *fileio.Tree
	if c.Output != "" {
		out = fileio.TreeOf(c.Output)
	}
	csv := strings.HasSuffix(strings.ToLower(input), ".csv")
	if out != nil && out.Holds(input) {
		what := "the input folder " + input
		if csv {
			what = "the input labels CSV " + input
		}
		return nil, &InputInOutputError{Output: c.Output, Input: what}
	}
	if csv {
		return checkLabels(ctx, input, c.Columns, out, c.Output)
	}
	return checkFolder(ctx, input)
}

// InputInOutputError is the error of an output directory that holds what
// the job reads.
type InputInOutputError struct {
	Output string
	// Input says what the output holds: "the input folder photos".
	Input string
}

func (e *InputInOutputError) Error() string {
	return fmt.Sprintf("--output %s holds %s: a run replaces and removes files in its output directory, "+
		"so it may not hold what the run reads, with or without --overwrite: give an output directory outside the input", e.Output, e.Input)
}

func checkLabels(ctx context.Context, input string, cols ingest.Columns, out *fileio.Tree, output string) ([]string, error) {
	r, err := fileio.Open(ctx, input)
	if err != nil {
		return nil, fmt.Errorf("cannot read the labels CSV %s: %w", input, fileio.PathCause(err))
	}
	defer r.Close()
	var inside func(string) bool
	if out != nil {
		inside = out.Holds
	}
	scan, err := ingest.ScanLabels(r, cols, ingestbeam.LabelsBase(input), inside)
	var missing *ingest.MissingColumnError
	switch {
	case errors.Is(err, ingest.ErrEmptyLabels):
		return nil, fmt.Errorf("the labels CSV %s is empty: it has no header row (image_id,path,label), nor any row", input)
	case errors.As(err, &missing) && missing.Column == cols.Label:
		return nil, fmt.Errorf("the labels CSV %s has no label column %q (its columns: %s): name it with --label_column",
			input, missing.Column, strings.Join(missing.Header, ","))
	case errors.As(err, &missing):
		return nil, fmt.Errorf("the labels CSV %s has no column %q (its columns: %s)", input, missing.Column, strings.Join(missing.Header, ","))
	case err != nil:
		return nil, fmt.Errorf("the labels CSV %s: %w", input, err)
	case scan.Inside > 0:
		return nil, &InputInOutputError{Output: output, Input: fmt.Sprintf("%s the labels CSV %s names, the first at %s", count(scan.Inside, "image", "images"), input, scan.FirstInside)}
	case scan.Rows == 0:
		return nil, fmt.Errorf("the labels CSV %s has no rows below its header", input)
	case scan.Usable == 0:
		return nil, fmt.Errorf("the labels CSV %s has no usable row: all %d would be refused, the first because %s", input, scan.Rows, scan.FirstRefused)
	}
	if err := learnable(scan.Labels); err != nil {
		return nil, fmt.Errorf("the labels CSV %s (column %q): %w", input, cols.Label, err)
	}
	var warnings []string
	if scan.Wide > 0 {
		warnings = append(warnings, fmt.Sprintf("the labels CSV %s has %s whose field count differs from its header's, the first: %s; the job refuses them as dead letters",
			input, rows(scan.Wide), scan.FirstWide))
	}
	if n := scan.Refused - scan.Wide; n > 0 {
		warnings = append(warnings, fmt.Sprintf("the labels CSV %s has %s without a path; the job refuses them as dead letters", input, rows(n)))
	}
	return warnings, nil
}

// checkFolder lists the folder input as the job will (local or gs://),
// counting its images by label and the files it refuses or skips by kind.
func checkFolder(ctx context.Context, input string) ([]string, error) {
	if !strings.Contains(input, "://") {
		st, err := os.Stat(input)
		switch {
		case err != nil:
			return nil, fmt.Errorf("input %s: %w", input, fileio.PathCause(err))
		case !st.IsDir():
			return nil, fmt.Errorf("input %s is neither a labels CSV (.csv) nor a directory of images", input)
		}
	}
	var scan ingest.FolderScan
	err := ingestbeam.WalkFolder(ctx, input, func(f ingest.ListedFile) error {
		scan.Add(f)
		return nil
	})
	if err != nil {
		// It names the folder, and the file it could not list.
		return nil, err
	}
	summary := scan.Summary()
	switch {
	case scan.Images == 0 && len(scan.FirstRefused) > 0:
		return nil, fmt.Errorf("the folder %s has no image to describe: of its %s, %s; the first refused: %s",
			input, count(scan.Files, "file", "files"), summary, strings.Join(scan.FirstRefused, "; "))
	case scan.Images == 0:
		return nil, fmt.Errorf("the folder %s has no image to describe: of its %s, %s", input, count(scan.Files, "file", "files"), summary)
	}
	if err := learnable(scan.Labels); err != nil {
		return nil, fmt.Errorf("the folder %s (labelled by sub-folder): %w", input, err)
	}
	if summary == "" {
		return nil, nil
	}
	return []string{fmt.Sprintf("the folder %s: %s taken; %s", input, count(scan.Images, "image", "images"), summary)}, nil
}

// learnable is triplets.Learnable of counts by label, the unlabelled
// ones (under "") left out.
func learnable(labels map[string]int64) error {
	labelled := make(map[string]int, len(labels))
	for l, n := range labels {
		if l != "" {
			labelled[l] = int(n)
		}
	}
	return triplets.Learnable(labelled)
}

// count says "1 <one>" or "n <many>".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// rows says "1 row" or "n rows".
func rows(n int64) string { return count(n, "row", "rows") }

// CheckOutput checks that a local output is a directory, or can be
// created, and can be written to; it creates the directory if need be. A
// gs:// directory is left to the job.
func CheckOutput(output string) error {
	return checkOutput(output)
}

func checkOutput(output string) error {
	if strings.Contains(output, "://") {
		return nil
	}
	if st, err := os.Stat(output); err == nil && !st.IsDir() {
		return fmt.Errorf("output %s is a file, not a directory", output)
	}
	if err := os.MkdirAll(output, 0o755); err != nil {
		return fmt.Errorf("cannot create the output directory %s: %w", output, fileio.PathCause(err))
	}
	probe, err := os.CreateTemp(output, fileio.TempPrefix+"probe-")
	if err != nil {
		return fmt.Errorf("cannot write to the output directory %s: %w", output, fileio.PathCause(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}
