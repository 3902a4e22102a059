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
	"github.com/bowline/bowline/transforms/synthetic"
	"github.com/bowline/bowline/transforms/triplets"
)

// OverwriteHelp is the help of the commands' --overwrite: what
// PrepareOutput and the end of a run do with a directory that holds
// files that are not a bowline run's, exactly.
const OverwriteHelp = "let the run use an output directory that holds other files than a bowline run's: when the run finishes, " +
	"it removes every file directly in the directory that it did not write; sub-directories, and what they hold, are kept. " +
	"Without it such a directory is refused. An earlier run's files are replaced either way"

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
// specification parses; a directory exists and can be read; a labels CSV
// can be read and has the columns c.Columns names, rows below its header,
// and labels a learner can learn from (triplets.Learnable: two labels,
// one of them with two images). The CSV is read row by row through the
// reader the job uses (gs:// too), keeping counts by label only, so the
// check holds memory by labels, not rows. Rows the job will refuse as dead
// letters (a field count other than the header's, no path) do not stop
// it: they come back as warnings. It creates nothing.
func CheckInput(ctx context.Context, c Config) (warnings []string, err error) {
	input := c.Input
	if synthetic.IsInput(input) {
		_, err := synthetic.Parse(input)
		return nil, err
	}
	if strings.HasSuffix(strings.ToLower(input), ".csv") {
		return checkLabels(ctx, input, c.Columns)
	}
	if strings.Contains(input, "://") {
		return nil, nil
	}
	st, err := os.Stat(input)
	switch {
	case err != nil:
		return nil, fmt.Errorf("input %s: %w", input, unwrapPath(err))
	case !st.IsDir():
		return nil, fmt.Errorf("input %s is neither a labels CSV (.csv) nor a directory of images", input)
	}
	if _, err := os.ReadDir(input); err != nil {
		return nil, fmt.Errorf("input %s: %w", input, unwrapPath(err))
	}
	return nil, nil
}

func checkLabels(ctx context.Context, input string, cols ingest.Columns) ([]string, error) {
	r, err := fileio.Open(ctx, input)
	if err != nil {
		return nil, fmt.Errorf("cannot read the labels CSV %s: %w", input, unwrapPath(err))
	}
	defer r.Close()
	scan, err := ingest.ScanLabels(r, cols)
	var missing *ingest.MissingColumnError
	switch {
	case errors.As(err, &missing) && missing.Column == cols.Label:
		return nil, fmt.Errorf("the labels CSV %s has no label column %q (its columns: %s): name it with --label_column",
			input, missing.Column, strings.Join(missing.Header, ","))
	case errors.As(err, &missing):
		return nil, fmt.Errorf("the labels CSV %s has no column %q (its columns: %s)", input, missing.Column, strings.Join(missing.Header, ","))
	case err != nil:
		return nil, fmt.Errorf("the labels CSV %s: %w", input, err)
	case scan.Rows == 0:
		return nil, fmt.Errorf("the labels CSV %s has no rows below its header", input)
	case scan.Usable == 0:
		return nil, fmt.Errorf("the labels CSV %s has no usable row: all %d would be refused, the first because %s", input, scan.Rows, scan.FirstRefused)
	}
	labelled := make(map[string]int, len(scan.Labels))
	for l, n := range scan.Labels {
		if l != "" {
			labelled[l] = int(n)
		}
	}
	if err := triplets.Learnable(labelled); err != nil {
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

// rows says "1 row" or "n rows".
func rows(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}

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
		return fmt.Errorf("cannot create the output directory %s: %w", output, unwrapPath(err))
	}
	probe, err := os.CreateTemp(output, fileio.TempPrefix+"probe-")
	if err != nil {
		return fmt.Errorf("cannot write to the output directory %s: %w", output, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// unwrapPath drops the path an *os.PathError repeats, which the message
// around it already names: "open x: no such file or directory" becomes
// "no such file or directory".
func unwrapPath(err error) error {
	for e := err; e != nil; {
		if pe, ok := e.(*os.PathError); ok {
			return pe.Err
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	return err
}
