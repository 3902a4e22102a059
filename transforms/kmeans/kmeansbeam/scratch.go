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
// centroids it assigns to from the files of its iteration's state, which
// writeStateFn's head names. Every file is written atomically (fileio.WriteBytes) and
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

// A state of Lloyd's loop lives in files of the scratch directory, never
// in the runner (see stateFile): stateDir(iter) holds the centroids of the
// state of iteration iter, a file per word shard (stateShardName) and, if
// the update that made it split empty clusters, one of the rows the splits
// touched (splitRowsName), which replace the shard files' rows. A file of
// centroids is a header — uvarints of the iteration, the dimension and the
// number of runs — and its runs of consecutive rows: for each, uvarints of
// its first row and its number of rows, then their values as
// little-endian float32.

// stateDir is the directory, under the scratch directory, of the
// centroids of the state of iteration iter.
func stateDir(iter int) string { return fmt.Sprintf("state-%03d", iter) }

// stateShardName is the base name of the rows of word shard shard of a
// state.
func stateShardName(shard int) string { return fmt.Sprintf("shard-%06d.centroids", shard) }

// splitRowsName is the base name of the rows of a state that the splits
// of its update touched.
const splitRowsName = "split.centroids"

// appendCentroids appends to buf the file of centroids of iteration iter
// and dimension dim whose runs are the rows cent[i] from row lo[i] on.
func appendCentroids(buf []byte, iter, dim int, lo []int, cent [][]float32) []byte {
	for _, v := range []int{iter, dim, len(lo)} {
		buf = binary.AppendUvarint(buf, uint64(v))
	}
	for i, c := range cent {
		if len(c)%dim != 0 {
			panic(fmt.Sprintf("vocabulary: a run of %d values of dimension %d", len(c), dim))
		}
		buf = binary.AppendUvarint(buf, uint64(lo[i]))
		buf = binary.AppendUvarint(buf, uint64(len(c)/dim))
		for _, v := range c {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	return buf
}

// decodeCentroids reads the file of centroids b, which must be of
// iteration iter and dimension dim and hold rows of [0, k) only, and
// copies its rows within [lo, hi) to dst, row r at dst[(r−lo)·dim:]. It
// returns how many rows it copied.
func decodeCentroids(b []byte, iter, dim, k, lo, hi int, dst []float32) (int, error) {
	var head [3]uint64
	for i := range head {
		v, m := binary.Uvarint(b)
		if m <= 0 {
			return 0, fmt.Errorf("a truncated header")
		}
		head[i], b = v, b[m:]
	}
	if head[0] != uint64(iter) || head[1] != uint64(dim) {
		return 0, fmt.Errorf("iteration %d, dimension %d, want %d, %d", head[0], head[1], iter, dim)
	}
	copied := 0
	for run := range head[2] {
		var r [2]uint64
		for i := range r {
			v, m := binary.Uvarint(b)
			if m <= 0 {
				return 0, fmt.Errorf("run %d of %d truncated", run, head[2])
			}
			r[i], b = v, b[m:]
		}
		if r[0] > uint64(k) || r[1] > uint64(k)-r[0] || uint64(len(b)) < 4*uint64(dim)*r[1] {
			return 0, fmt.Errorf("run %d: %d rows from row %d, of %d rows in %d bytes", run, r[1], r[0], k, len(b))
		}
		first, n := int(r[0]), int(r[1])
		vals := b[:4*dim*n]
		b = b[4*dim*n:]
		a, z := max(first, lo), min(first+n, hi)
		for row := a; row < z; row++ {
			src := vals[4*dim*(row-first):]
			out := dst[(row-lo)*dim : (row-lo+1)*dim]
			for j := range out {
				out[j] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*j:]))
			}
		}
		copied += max(z-a, 0)
	}
	if len(b) != 0 {
		return 0, fmt.Errorf("%d bytes after its %d runs", len(b), head[2])
	}
	return copied, nil
}

// writeStateFile writes the file of centroids b of the state of iteration
// iter to dir under the base name name.
func writeStateFile(ctx context.Context, dir string, iter int, name string, b []byte) error {
	if err := fileio.WriteBytes(ctx, fileio.Join(fileio.Join(dir, stateDir(iter)), name), b); err != nil {
		return fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
	}
	return nil
}

// readStateRows copies the rows [lo, hi) of the state st, whose head names
// its files (st.Files), from the scratch directory dir to dst, one file at
// a time: the word shards' files that overlap them and then the rows the
// splits touched.
func readStateRows(ctx context.Context, dir string, st state, lo, hi int, dst []float32) error {
	rows := 0
	for _, f := range st.Files {
		if !f.Split && (f.Lo >= hi || f.Lo+f.Rows <= lo) {
			continue
		}
		b, err := fileio.ReadBytes(ctx, fileio.Join(fileio.Join(dir, stateDir(st.Iter)), f.Name))
		if err != nil {
			return fmt.Errorf("vocabulary: iteration %d: %w", st.Iter, err)
		}
		n, err := decodeCentroids(b, st.Iter, st.Dim, st.K, lo, hi, dst)
		if err != nil {
			return fmt.Errorf("vocabulary: iteration %d: centroids %s: %v", st.Iter, f.Name, err)
		}
		if !f.Split {
			rows += n
		}
	}
	if rows != hi-lo {
		return fmt.Errorf("vocabulary: iteration %d: the files of the state hold %d of its rows [%d, %d)", st.Iter, rows, lo, hi)
	}
	return nil
}

// readStateCentroids returns all the centroids of the state st, whose head
// names its files, from the scratch directory dir.
func readStateCentroids(ctx context.Context, dir string, st state) ([]float32, error) {
	cent := make([]float32, st.K*st.Dim)
	if err := readStateRows(ctx, dir, st, 0, st.K, cent); err != nil {
		return nil, err
	}
	return cent, nil
}

// removeState removes the centroids of the state of iteration iter from
// dir.
func removeState(ctx context.Context, dir string, iter int) error {
	if err := fileio.RemoveAll(ctx, fileio.Join(dir, stateDir(iter))); err != nil {
		return fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
	}
	return nil
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

// The sums of an iteration's assigning live in files too, in the
// iteration's directory sumsDir(iter), so that neither the runner nor a
// merge ever holds more than a word shard's sums. An assigning bundle
// writes its sparse sums, a file per word shard (Options.ShardWords), each
// time they reach Options.SumsRows rows and when it finishes
// (assignFn.writeSums), and emits a small record of each file (sumsFile)
// keyed by its shard. The merge of a shard (mergeSumsFn) reads only the
// files its records name, so the files of a failed bundle, whose records
// the runner drops, are never read: every bundle's file has a name of its
// own (bundleSumsName), and a retry writes new ones. The merge writes the
// shard's merged sums (mergedName), which the shard's update reads
// (shardFn), and the next iteration's writeStateFn removes the whole
// directory, orphans included, as it removes the previous state.
//
// A file of sums is a header — uvarints of the iteration, the shard, the
// dimension and the number of rows — and its rows, words ascending: for
// each, uvarints of the word's distance from the previous row's (from −1
// for the first), its count and its Dim sums. Descriptors are bytes, so
// the sums are non-negative integers, and at 10⁶ words a bundle's row
// typically sums one or two descriptors: about 1.5 bytes a value.

// sumsDir is the directory, under the scratch directory, of the sums of
// iteration iter.
func sumsDir(iter int) string { return fmt.Sprintf("sums-%03d", iter) }

// bundleSumsName returns a fresh base name for a file of an assigning
// bundle's sums of word shard shard.
func bundleSumsName(shard int) string {
	return fmt.Sprintf("shard-%06d-%s.sums", shard, fileio.RandomHex())
}

// mergedName is the base name of the merged sums of word shard shard.
func mergedName(shard int) string { return fmt.Sprintf("merged-%06d.sums", shard) }

// sumsFile names a file of sums of word shard (its key) in the directory
// of iteration Iter, of Rows rows. Name is empty for the record every
// shard receives once so that every shard is merged (shardMarkFn), even
// one no descriptor fell in. N, Changed and SSE are the totals of the
// part of the assigning whose sums the file holds (see partial): an
// assigning bundle sets them on one file of each write, zeros on the
// others, so that their totals over all records are the iteration's.
type sumsFile struct {
	Iter            int
	Name            string
	Rows            int
	N, Changed, SSE int64
}

// appendSums appends to buf the file of sums of iteration iter, word
// shard shard and dimension dim with the rows rows, which row(i) returns:
// the word (ascending), the count and the dim sums of row i.
func appendSums(buf []byte, iter, shard, dim, rows int, row func(i int) (int32, int64, []int64)) []byte {
	for _, v := range []int{iter, shard, dim, rows} {
		buf = binary.AppendUvarint(buf, uint64(v))
	}
	prev := int64(-1)
	for i := range rows {
		w, n, sum := row(i)
		if int64(w) <= prev || n < 1 || len(sum) != dim {
			panic(fmt.Sprintf("vocabulary: sums row of word %d after word %d, count %d, %d values of dimension %d", w, prev, n, len(sum), dim))
		}
		buf = binary.AppendUvarint(buf, uint64(int64(w)-prev))
		buf = binary.AppendUvarint(buf, uint64(n))
		for _, v := range sum {
			buf = binary.AppendUvarint(buf, uint64(v))
		}
		prev = int64(w)
	}
	return buf
}

// decodeSums reads the file of sums b, which must be of iteration iter,
// word shard shard, dimension dim and, unless rows is negative, rows rows,
// its words within [lo, hi), and calls fn with each row's word, count and
// sums (a buffer fn must not keep). A shard's file holds at most hi−lo
// rows, one a word.
func decodeSums(b []byte, iter, shard, dim, rows, lo, hi int, fn func(w int, n int64, sum []int64)) error {
	var head [4]uint64
	for i := range head {
		v, m := binary.Uvarint(b)
		if m <= 0 {
			return fmt.Errorf("a truncated header")
		}
		head[i], b = v, b[m:]
	}
	if head[0] != uint64(iter) || head[1] != uint64(shard) || head[2] != uint64(dim) || (rows >= 0 && head[3] != uint64(rows)) || head[3] > uint64(hi-lo) {
		return fmt.Errorf("iteration %d, word shard %d, dimension %d, %d rows, want %d, %d, %d, %d", head[0], head[1], head[2], head[3], iter, shard, dim, rows)
	}
	n := int(head[3])
	sum := make([]int64, dim)
	w := int64(-1)
	for r := range n {
		var vals [2]uint64
		for i := range vals {
			v, m := binary.Uvarint(b)
			if m <= 0 {
				return fmt.Errorf("row %d of %d truncated", r, n)
			}
			vals[i], b = v, b[m:]
		}
		if vals[0] == 0 || vals[0] >= uint64(int64(hi)-w) {
			return fmt.Errorf("row %d: a step of %d words after word %d, want 1 to %d", r, vals[0], w, int64(hi)-w-1)
		}
		w += int64(vals[0])
		if w < int64(lo) || w >= int64(hi) || vals[1] == 0 || vals[1] > math.MaxInt64 {
			return fmt.Errorf("row %d: word %d, count %d, want words ascending in [%d, %d) and a positive count", r, w, vals[1], lo, hi)
		}
		for j := range sum {
			v, m := binary.Uvarint(b)
			if m <= 0 {
				return fmt.Errorf("row %d of %d truncated", r, n)
			}
			if v > math.MaxInt64 {
				return fmt.Errorf("row %d: a sum of %d, past int64", r, v)
			}
			sum[j], b = int64(v), b[m:]
		}
		fn(int(w), int64(vals[1]), sum)
	}
	if len(b) != 0 {
		return fmt.Errorf("%d bytes after its %d rows", len(b), n)
	}
	return nil
}

// readSums reads the file of sums name of iteration iter from the scratch
// directory dir (see decodeSums).
func readSums(ctx context.Context, dir, name string, iter, shard, dim, rows, lo, hi int, fn func(w int, n int64, sum []int64)) error {
	b, err := fileio.ReadBytes(ctx, fileio.Join(fileio.Join(dir, sumsDir(iter)), name))
	if err != nil {
		return fmt.Errorf("vocabulary: iteration %d: sums of word shard %d: %w", iter, shard, err)
	}
	if err := decodeSums(b, iter, shard, dim, rows, lo, hi, fn); err != nil {
		return fmt.Errorf("vocabulary: iteration %d: sums %s of word shard %d: %v", iter, name, shard, err)
	}
	return nil
}

// writeSumsFile writes the file of sums b of iteration iter to dir under
// the base name name.
func writeSumsFile(ctx context.Context, dir string, iter int, name string, b []byte) error {
	if err := fileio.WriteBytes(ctx, fileio.Join(fileio.Join(dir, sumsDir(iter)), name), b); err != nil {
		return fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
	}
	return nil
}

// removeSums removes the sums of iteration iter from dir.
func removeSums(ctx context.Context, dir string, iter int) error {
	if err := fileio.RemoveAll(ctx, fileio.Join(dir, sumsDir(iter))); err != nil {
		return fmt.Errorf("vocabulary: iteration %d: %w", iter, err)
	}
	return nil
}
