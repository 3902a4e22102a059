package kmeansbeam

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*writeChunksFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*chunkTotalFn)(nil)).Elem())
}

// The sample's chunks live in files, not in the runner: the step that cuts
// the sample (writeChunksFn, or partChunksFn for a sample drawn in parts)
// writes each chunk's descriptors to a file of the training's scratch
// directory, and the elements of the seeding and of Lloyd's loop are
// chunks' names and sizes. Each assigning of a chunk writes its labels of
// that iteration to a file that the next iteration reads, and reads the
// centroids it assigns to from the file of its iteration's state
// (writeStateFn). Every file is written atomically (fileio.WriteBytes) and
// is a function of the chunk (or state) and the iteration, so a retried
// bundle rewrites the same bytes.
//
// The scratch directory is a sub-directory of Options.Scratch of its own,
// named when the graph is built, so no job reads what another wrote; the
// codebook's step removes it once training is done, and a job killed
// before leaves it to the next run of its output directory to remove
// (formats/run's ScratchName).

// scratchDir returns a fresh directory, under o.Scratch (or the system's
// temporary directory), for one training's files.
func (o Options) scratchDir() string {
	base := o.Scratch
	if base == "" {
		base = fileio.Join(os.TempDir(), "bowline"+rundir.ScratchName)
	}
	return fileio.Join(base, "vocabulary-"+fileio.RandomHex())
}

// chunk names a chunk of the sample: its descriptors are in the file
// descName(Index) of the training's scratch directory and, once an
// iteration has assigned them, their labels in labelsName(Index, that
// iteration). N is its number of descriptors; Lo is the index in the
// sample of its first and Total the sample's size, for the k-means‖
// seeding (a sample drawn in parts, which is not seeded over its chunks,
// leaves them 0).
type chunk struct {
	Index int
	N     int
	Lo    int
	Total int
}

// descName is the base name of the descriptors of chunk i.
func descName(i int) string { return fmt.Sprintf("chunk-%09d.desc", i) }

// labelsName is the base name of the labels of chunk i after iteration
// iter.
func labelsName(i, iter int) string { return fmt.Sprintf("chunk-%09d.labels-%03d", i, iter) }

// writeDesc writes the descriptors of chunk i to dir.
func writeDesc(ctx context.Context, dir string, i int, desc []byte) error {
	return fileio.WriteBytes(ctx, fileio.Join(dir, descName(i)), desc)
}

// readDesc returns the descriptors of c from dir.
func readDesc(ctx context.Context, dir string, c chunk) ([]byte, error) {
	b, err := fileio.ReadBytes(ctx, fileio.Join(dir, descName(c.Index)))
	if err != nil {
		return nil, fmt.Errorf("vocabulary: chunk %d: %w", c.Index, err)
	}
	if len(b) != c.N*formats.DescriptorSize {
		return nil, fmt.Errorf("vocabulary: chunk %d: %d bytes of descriptors, want %d", c.Index, len(b), c.N*formats.DescriptorSize)
	}
	return b, nil
}

// writeLabels writes the labels of chunk i after iteration iter to dir.
func writeLabels(ctx context.Context, dir string, i, iter int, labels []int32) error {
	b := make([]byte, 4*len(labels))
	for j, l := range labels {
		binary.LittleEndian.PutUint32(b[4*j:], uint32(l))
	}
	return fileio.WriteBytes(ctx, fileio.Join(dir, labelsName(i, iter)), b)
}

// readLabels reads the labels of c after iteration iter from dir into
// labels, len c.N.
func readLabels(ctx context.Context, dir string, c chunk, iter int, labels []int32) error {
	b, err := fileio.ReadBytes(ctx, fileio.Join(dir, labelsName(c.Index, iter)))
	if err != nil {
		return fmt.Errorf("vocabulary: chunk %d: %w", c.Index, err)
	}
	if len(b) != 4*len(labels) {
		return fmt.Errorf("vocabulary: chunk %d: %d bytes of labels after iteration %d, want %d", c.Index, len(b), iter, 4*len(labels))
	}
	for j := range labels {
		labels[j] = int32(binary.LittleEndian.Uint32(b[4*j:]))
	}
	return nil
}

// stateName is the base name of the centroids of the state of iteration
// iter, which writeStateFn writes for the assigning of that iteration.
func stateName(iter int) string { return fmt.Sprintf("state-%03d.centroids", iter) }

// writeCentroids writes the centroids of the state of iteration iter to
// dir, as little-endian float32.
func writeCentroids(ctx context.Context, dir string, iter int, cent []float32) error {
	b := make([]byte, 4*len(cent))
	for j, v := range cent {
		binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(v))
	}
	return fileio.WriteBytes(ctx, fileio.Join(dir, stateName(iter)), b)
}

// readCentroids returns the n centroid values of the state of iteration
// iter from dir.
func readCentroids(ctx context.Context, dir string, iter, n int) ([]float32, error) {
	b, err := fileio.ReadBytes(ctx, fileio.Join(dir, stateName(iter)))
	if err != nil {
		return nil, fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
	}
	if len(b) != 4*n {
		return nil, fmt.Errorf("vocabulary: iteration %d: %d bytes of centroids, want %d", iter, len(b), 4*n)
	}
	cent := make([]float32, n)
	for j := range cent {
		cent[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
	}
	return cent, nil
}

// writeChunksFn cuts the whole sample into the chunks splitFn's cutting
// makes (cutChunks), writes their descriptors to Dir and emits their
// names; with Seeding it says that k-means‖ seeds over them.
type writeChunksFn struct {
	Chunks, K int
	Dir       string
	Seeding   bool
}

func (f *writeChunksFn) ProcessElement(ctx context.Context, smp sample, emit func(chunk)) error {
	const d = formats.DescriptorSize
	n := len(smp.Prio)
	if n < f.K {
		return tooFew(n, f.K)
	}
	if f.Seeding {
		log.Infof(ctx, "vocabulary: choosing %d initial centroids from %d descriptors by k-means|| over the sample's chunks", f.K, n)
	}
	var err error
	cutChunks(f.Chunks, n, func(i, lo, hi int) {
		if err == nil {
			if err = writeDesc(ctx, f.Dir, i, smp.Desc[lo*d:hi*d]); err == nil {
				emit(chunk{Index: i, N: hi - lo, Lo: lo, Total: n})
			}
		}
	})
	return err
}

// chunkTotalFn counts chunks, for the codebook's report of them.
type chunkTotalFn struct{}

func (chunkTotalFn) CreateAccumulator() int         { return 0 }
func (chunkTotalFn) AddInput(n int, _ chunk) int    { return n + 1 }
func (chunkTotalFn) MergeAccumulators(a, b int) int { return a + b }
func (chunkTotalFn) ExtractOutput(n int) int        { return n }
