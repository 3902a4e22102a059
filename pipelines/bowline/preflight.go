package bowline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/synthetic"
)

// Preflight checks, before a pipeline is built, what can be checked
// without running it, so that a mistake costs a readable error and not a
// failed job: the input exists and can be read, a labels CSV has the
// columns c.Columns names, and a local output is a directory, or can be
// created, and can be written to. A gs:// directory is left to the job.
func Preflight(ctx context.Context, c Config) error {
	if err := checkInput(ctx, c.Input, c.Columns); err != nil {
		return err
	}
	return checkOutput(c.Output)
}

func checkInput(ctx context.Context, input string, cols ingest.Columns) error {
	if synthetic.IsInput(input) {
		_, err := synthetic.Parse(input)
		return err
	}
	if strings.HasSuffix(strings.ToLower(input), ".csv") {
		r, err := fileio.Open(ctx, input)
		if err != nil {
			return fmt.Errorf("cannot read the labels CSV %s: %w", input, unwrapPath(err))
		}
		defer r.Close()
		err = ingest.CheckHeader(r, cols)
		var missing *ingest.MissingColumnError
		switch {
		case errors.As(err, &missing) && missing.Column == cols.Label:
			return fmt.Errorf("the labels CSV %s has no label column %q (its columns: %s): name it with --label_column",
				input, missing.Column, strings.Join(missing.Header, ","))
		case errors.As(err, &missing):
			return fmt.Errorf("the labels CSV %s has no column %q (its columns: %s)", input, missing.Column, strings.Join(missing.Header, ","))
		case err != nil:
			return fmt.Errorf("the labels CSV %s: %w", input, err)
		}
		return nil
	}
	if strings.Contains(input, "://") {
		return nil
	}
	st, err := os.Stat(input)
	switch {
	case err != nil:
		return fmt.Errorf("input %s: %w", input, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("input %s is neither a labels CSV (.csv) nor a directory of images", input)
	}
	if _, err := os.ReadDir(input); err != nil {
		return fmt.Errorf("input %s: %w", input, unwrapPath(err))
	}
	return nil
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
