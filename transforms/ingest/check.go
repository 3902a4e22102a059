package ingest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bowline/bowline/transforms/triplets"
)

// InputInOutputError is the error of an output directory that holds what
// the job reads: finishing a run removes files from its output directory.
type InputInOutputError struct {
	Output string
	// Input says what the output holds: "the input folder photos".
	Input string
}

func (e *InputInOutputError) Error() string {
	return fmt.Sprintf("--output %s holds %s: a run replaces and removes files in its output directory, "+
		"so it may not hold what the run reads, with or without --overwrite: give an output directory outside the input", e.Output, e.Input)
}

// CheckLabels judges the labels CSV input from its scan (ScanLabels's
// result and error, with the columns cols): an error, naming input, if
// the job cannot run on it — no header, a missing column, no usable row,
// a file it names inside the output directory output (an
// *InputInOutputError), labels no learner can learn from (learnable) —
// and otherwise a warning for each kind of row the job will refuse as a
// dead letter.
func CheckLabels(input string, cols Columns, output string, scan LabelsScan, err error) ([]string, error) {
	var missing *MissingColumnError
	switch {
	case errors.Is(err, ErrEmptyLabels):
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
			input, count(scan.Wide, "row", "rows"), scan.FirstWide))
	}
	if n := scan.Refused - scan.Wide; n > 0 {
		warnings = append(warnings, fmt.Sprintf("the labels CSV %s has %s without a path; the job refuses them as dead letters", input, count(n, "row", "rows")))
	}
	return warnings, nil
}

// CheckFolder judges the folder input from its scan: an error, naming
// input, if it has no image to describe or labels no learner can learn
// from (learnable); otherwise a warning of the files the job refuses or
// skips, if any.
func CheckFolder(input string, scan FolderScan) ([]string, error) {
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
// ones (under "") left out: two labels, one of them with two images.
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
