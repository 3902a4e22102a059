package kmeansbeam

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// CodebookName is the name of the codebook's files in Options.Output:
// formats.ShardName(CodebookName, 0, 1), formats.Word rows in word order.
const CodebookName = "codebook"

// errNoOutput fails a vocabulary stage built with an empty
// Options.Output: the codebook's words are written there, and only the
// caller knows a directory that every worker reads and that it removes.
var errNoOutput = errors.New("vocabulary: Options.Output is empty: no directory to write the codebook's words to")

// wholeBlock hands centroids already held whole to Codebook.write as one
// block.
func wholeBlock(cent []float32) func(add func([]float32) error) error {
	return func(add func([]float32) error) error { return add(cent) }
}

// write writes the words of cb, which blocks hands over in word order a
// block at a time (fileio.WriteCentroids), to the directory out, and
// returns cb naming the file and its content.
func (cb Codebook) write(ctx context.Context, out string, blocks func(add func([]float32) error) error) (Codebook, error) {
	p := fileio.Join(out, formats.ShardName(CodebookName, 0, 1))
	content, err := fileio.WriteCentroids(ctx, p, cb.K, cb.Dim, blocks)
	if err != nil {
		return Codebook{}, fmt.Errorf("vocabulary: %w", err)
	}
	cb.Paths, cb.Content = []string{p}, content
	return cb, nil
}

// ReadCentroids returns the words of cb, row-major, from its files
// (fileio.ReadCentroids): an error naming them unless they hold cb.K words
// of cb.Dim values whose content is cb.Content.
func (cb Codebook) ReadCentroids(ctx context.Context) ([]float32, error) {
	cent, err := fileio.ReadCentroids(ctx, cb.Paths, cb.K, cb.Dim)
	if err != nil {
		return nil, err
	}
	if got := formats.CentroidsContent(cent); got != cb.Content {
		return nil, fmt.Errorf("codebook %v holds words of content %s, not the job's %s: rewritten while the job ran?", cb.Paths, got, cb.Content)
	}
	return cent, nil
}

// copyTo returns cb with its files copied to the directory out under
// their names (fileio.Copy: whole or not at all), unless they are there.
func (cb Codebook) copyTo(ctx context.Context, out string) (Codebook, error) {
	paths := make([]string, len(cb.Paths))
	for i, p := range cb.Paths {
		paths[i] = fileio.Join(out, path.Base(p))
		if paths[i] == p {
			continue
		}
		if err := fileio.Copy(ctx, p, paths[i]); err != nil {
			return Codebook{}, fmt.Errorf("vocabulary: %w", err)
		}
	}
	cb.Paths = paths
	return cb, nil
}

// Paths returns the paths of the files of the codebooks
// (PCollection<Codebook>) once they are in place: PCollection<string>.
func Paths(s beam.Scope, codebooks beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("kmeans.Paths"), pathsFn, codebooks)
}

func pathsFn(cb Codebook, emit func(string)) {
	for _, p := range cb.Paths {
		emit(p)
	}
}
