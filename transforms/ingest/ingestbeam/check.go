package ingestbeam

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/synthetic"
)

// CheckInput checks a job's input before the job starts, so that a
// mistake costs a readable error and not a failed job: a synthetic
// corpus's specification parses; a labels CSV or a folder of images can
// be read and has labels a learner can learn from (triplets.Learnable). The
// CSV is read row by row through the reader the job uses (gs:// too) and
// has the columns cols names and rows below its header
// (ingest.CheckLabels); a folder is listed and its files told apart as
// the job tells them (WalkFolder, ingest.CheckFolder). Either way it keeps
// counts by label and kind only, so the check holds memory by labels, not
// images. Rows and files the job will refuse as dead letters, and files
// it skips, do not stop it: they come back as warnings.
//
// The input — the CSV, the folder, any file the CSV names — may not lie in
// the output directory output (an *ingest.InputInOutputError; "": none),
// whatever --overwrite says: finishing a run removes files from its
// output directory. It creates nothing.
func CheckInput(ctx context.Context, input string, cols ingest.Columns, output string) (warnings []string, err error) {
	if synthetic.IsInput(input) {
		_, err := synthetic.Parse(input)
		return nil, err
	}
	var out *fileio.Tree
	if output != "" {
		out = fileio.TreeOf(output)
	}
	csv := isLabelsCSV(input)
	if out != nil && out.Holds(input) {
		what := "the input folder " + input
		if csv {
			what = "the input labels CSV " + input
		}
		return nil, &ingest.InputInOutputError{Output: output, Input: what}
	}
	if csv {
		return checkLabels(ctx, input, cols, out, output)
	}
	return checkFolder(ctx, input)
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
	scan, err := ingest.ScanLabels(r, cols, LabelsBase(input), inside)
	return ingest.CheckLabels(input, cols, output, scan, err)
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
	err := WalkFolder(ctx, input, func(f ingest.ListedFile) error {
		scan.Add(f)
		return nil
	})
	if err != nil {
		// It names the folder, and the file it could not list.
		return nil, err
	}
	return ingest.CheckFolder(input, scan)
}
