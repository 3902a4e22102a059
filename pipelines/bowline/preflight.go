package bowline

import (
	"context"
	"log/slog"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/ingest/ingestbeam"
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
// failed job: the input (ingestbeam.CheckInput, its warnings logged) and
// the output (fileio.CheckOutput).
func Preflight(ctx context.Context, c Config) error {
	warnings, err := ingestbeam.CheckInput(ctx, c.Input, c.Columns, c.Output)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		slog.Warn(w)
	}
	return fileio.CheckOutput(c.Output)
}
