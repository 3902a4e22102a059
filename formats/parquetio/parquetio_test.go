package parquetio_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/bowline/bowline/formats/parquetio"
	"github.com/bowline/bowline/infra/prismretry"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*checkOutputFn)(nil)).Elem())
}

func TestMain(m *testing.M) {
	ptest.MainWithDefault(m, prismretry.Runner)
}

func bows(n int) []formats.BoW {
	var rows []formats.BoW
	for i := range n {
		b := formats.BoW{ImageID: fmt.Sprintf("img-%03d-ü", i), Label: []string{"cat", "dog", "狗"}[i%3]}
		for j := range i % 5 {
			b.WordIDs = append(b.WordIDs, uint32(i*10+j))
			b.Weights = append(b.Weights, float32(j)/4)
		}
		if b.WordIDs == nil { // what a parquet round trip gives back
			b.WordIDs, b.Weights = []uint32{}, []float32{}
		}
		rows = append(rows, b)
	}
	return rows
}

func asAny[T any](rows []T) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

func sortByID(rows []formats.BoW) []formats.BoW {
	rows = slices.Clone(rows)
	sort.Slice(rows, func(i, j int) bool { return rows[i].ImageID < rows[j].ImageID })
	return rows
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func shardNames(name string, shards int) []string {
	var names []string
	for i := range shards {
		names = append(names, formats.ShardName(name, i, shards))
	}
	return names
}

func shardPaths(dir, name string, shards int) []any {
	var paths []any
	for _, n := range shardNames(name, shards) {
		paths = append(paths, fileio.Join(dir, n))
	}
	return paths
}

// checkOutputFn runs after a parquetio.Write, with its result as a side
// input, and fails unless every announced file exists and the files hold
// Rows rows in total: the result must not be emitted before the renames.
type checkOutputFn struct {
	Rows int `json:"rows"`
}

func (f *checkOutputFn) ProcessElement(ctx context.Context, _ []byte, paths func(*string) bool) error {
	var p string
	n := 0
	for paths(&p) {
		rows, err := fileio.ReadFile[formats.BoW](ctx, p)
		if err != nil {
			return err
		}
		n += len(rows)
	}
	if n != f.Rows {
		return fmt.Errorf("the output holds %d rows when announced, want %d", n, f.Rows)
	}
	return nil
}

// write runs a pipeline writing rows to dir/name-*-of-<shards>.parquet and
// checks the announced paths.
func write(t *testing.T, dir, name string, shards int, rows []formats.BoW) beam.PipelineResult {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	col := beam.CreateList(s, rows)
	paths := parquetio.Write(s, dir, name, shards, col)
	passert.Equals(s, paths, shardPaths(dir, name, shards)...)
	beam.ParDo0(s, &checkOutputFn{Rows: len(rows)}, beam.Impulse(s), beam.SideInput{Input: paths})
	pr, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatalf("write pipeline: %v", err)
	}
	return pr
}

// readBack checks that the files at pattern hold rows, with fileio.ReadAll
// and with parquetio.Read.
func readBack(t *testing.T, pattern string, rows []formats.BoW) {
	t.Helper()
	got, err := fileio.ReadAll[formats.BoW](context.Background(), pattern)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sortByID(got), sortByID(rows)) {
		t.Errorf("fileio.ReadAll(%s):\n got %+v\nwant %+v", pattern, sortByID(got), sortByID(rows))
	}
	p, s := beam.NewPipelineWithRoot()
	col := parquetio.Read(s, pattern, reflect.TypeFor[formats.BoW]())
	passert.Equals(s, col, asAny(rows)...)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("read pipeline: %v", err)
	}
}

func counter(pr beam.PipelineResult, name string) int64 {
	for _, c := range pr.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "parquetio" && c.Key.Name == name {
			return c.Committed
		}
	}
	return -1
}

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	rows := bows(40)
	pr := write(t, dir, "bow", 3, rows)

	if got, want := entries(t, dir), shardNames("bow", 3); !slices.Equal(got, want) {
		t.Fatalf("output directory holds %q, want %q", got, want)
	}
	if n := counter(pr, "rows_written_bow"); n != 40 {
		t.Errorf("counter rows_written_bow = %d, want 40", n)
	}
	if n := counter(pr, "files_written_bow"); n != 3 {
		t.Errorf("counter files_written_bow = %d, want 3", n)
	}
	// Each file holds its shard's rows, sorted by key.
	total := 0
	for i, name := range shardNames("bow", 3) {
		got, err := fileio.ReadFile[formats.BoW](context.Background(), fileio.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		total += len(got)
		for j, r := range got {
			if s := formats.ShardOf(r.Key(), 3); s != i {
				t.Errorf("%s holds %s of shard %d", name, r.ImageID, s)
			}
			if j > 0 && got[j-1].Key() > r.Key() {
				t.Errorf("%s is not sorted by key", name)
			}
		}
	}
	if total != 40 {
		t.Errorf("files hold %d rows, want 40", total)
	}
	readBack(t, fileio.Join(dir, "bow-*.parquet"), rows)

	// A re-run, with the input in another order, writes the same bytes.
	before := map[string][]byte{}
	for _, name := range shardNames("bow", 3) {
		before[name], _ = os.ReadFile(fileio.Join(dir, name))
	}
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	write(t, dir, "bow", 3, reversed)
	for _, name := range shardNames("bow", 3) {
		after, _ := os.ReadFile(fileio.Join(dir, name))
		if !bytes.Equal(before[name], after) {
			t.Errorf("%s differs between two runs", name)
		}
	}

	// A re-run with fewer shards removes the stale shards, but not the
	// files of other outputs that share the prefix.
	for _, other := range []string{"bow-extra-00000-of-00001.parquet", "bowl-00000-of-00003.parquet"} {
		if err := fileio.WriteFile(context.Background(), fileio.Join(dir, other), rows[:1]); err != nil {
			t.Fatal(err)
		}
	}
	write(t, dir, "bow", 2, rows)
	want := append(shardNames("bow", 2), "bow-extra-00000-of-00001.parquet", "bowl-00000-of-00003.parquet")
	sort.Strings(want)
	if got := entries(t, dir); !slices.Equal(got, want) {
		t.Fatalf("after a run with 2 shards the directory holds %q, want %q", got, want)
	}
	readBack(t, fileio.Join(dir, "bow-*-of-00002.parquet"), rows)
}

func TestWriteEmpty(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "bow", 3, nil)
	if got, want := entries(t, dir), shardNames("bow", 3); !slices.Equal(got, want) {
		t.Fatalf("output directory holds %q, want %q", got, want)
	}
	for _, name := range shardNames("bow", 3) {
		rows, err := fileio.ReadFile[formats.BoW](context.Background(), fileio.Join(dir, name))
		if err != nil || len(rows) != 0 {
			t.Errorf("%s: %d rows, %v; want an empty, readable file", name, len(rows), err)
		}
	}
	// Reading empty files, and a pattern matching nothing, gives nothing.
	p, s := beam.NewPipelineWithRoot()
	passert.Empty(s, parquetio.Read(s, fileio.Join(dir, "bow-*.parquet"), reflect.TypeFor[formats.BoW]()))
	passert.Empty(s, parquetio.Read(s, fileio.Join(dir, "nothing-*.parquet"), reflect.TypeFor[formats.BoW]()))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// A shard sorted in runs spilled to disk and merged is the file the
// in-memory writer made: the rows sorted by key (ties by their Beam
// encoding) and written in one go with fileio.WriteFile, byte for byte.
func TestWriteSpilledRunsSameBytes(t *testing.T) {
	rows := bows(300)
	// Ties: rows of one key that differ only in their words.
	for i := range 20 {
		rows = append(rows, formats.BoW{ImageID: "img-0007", Label: "tie", WordIDs: []uint32{uint32(20 - i)}, Weights: []float32{1}})
	}
	enc := beam.NewElementEncoder(reflect.TypeFor[formats.BoW]())
	encoding := func(b formats.BoW) []byte {
		var buf bytes.Buffer
		if err := enc.Encode(b, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	want := slices.Clone(rows)
	slices.SortFunc(want, func(a, b formats.BoW) int {
		if c := strings.Compare(a.Key(), b.Key()); c != 0 {
			return c
		}
		return bytes.Compare(encoding(a), encoding(b))
	})
	ref := fileio.Join(t.TempDir(), "ref.parquet")
	if err := fileio.WriteFile(context.Background(), ref, want); err != nil {
		t.Fatal(err)
	}
	wantBytes, _ := os.ReadFile(ref)

	defer func(old int) { parquetio.SortRunBytes = old }(parquetio.SortRunBytes)
	for _, runBytes := range []int{1 << 30, 2000, 1} {
		parquetio.SortRunBytes = runBytes
		dir := t.TempDir()
		shuffled := slices.Clone(rows)
		slices.Reverse(shuffled)
		write(t, dir, "bow", 1, shuffled)
		got, err := os.ReadFile(fileio.Join(dir, formats.ShardName("bow", 0, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, wantBytes) {
			t.Errorf("runs of %d bytes: the file differs from the in-memory writer's (%d bytes, want %d)", runBytes, len(got), len(wantBytes))
		}
	}
}

// Shards ≤ 0 makes as many shards as TargetShardBytes of encoded rows
// need, and at least one for an empty collection.
func TestWriteAutoShards(t *testing.T) {
	rows := bows(40)
	enc := beam.NewElementEncoder(reflect.TypeFor[formats.BoW]())
	var total int64
	for _, r := range rows {
		var buf bytes.Buffer
		if err := enc.Encode(r, &buf); err != nil {
			t.Fatal(err)
		}
		total += int64(buf.Len())
	}
	defer func(old int64) { parquetio.TargetShardBytes = old }(parquetio.TargetShardBytes)
	for _, c := range []struct {
		target int64
		rows   []formats.BoW
		shards int
	}{
		{1 << 30, rows, 1},
		{total / 3, rows, 4}, // ⌈total/⌊total/3⌋⌉ = 4 unless total divides by 3
		{100, nil, 1},
	} {
		if c.target == total/3 && total%3 == 0 {
			c.shards = 3
		}
		parquetio.TargetShardBytes = c.target
		dir := t.TempDir()
		p, s := beam.NewPipelineWithRoot()
		paths := parquetio.Write(s, dir, "bow", 0, beam.CreateList(s, c.rows))
		passert.Equals(s, paths, shardPaths(dir, "bow", c.shards)...)
		if err := ptest.Run(p); err != nil {
			t.Fatalf("target %d: %v", c.target, err)
		}
		if got, want := entries(t, dir), shardNames("bow", c.shards); !slices.Equal(got, want) {
			t.Errorf("target %d bytes (rows %d bytes): directory holds %q, want %q", c.target, total, got, want)
		}
		readBack(t, fileio.Join(dir, "bow-*.parquet"), c.rows)
	}
}

// Rows with equal keys are written in the same order whatever order they
// arrive in.
func TestWriteTiesDeterministic(t *testing.T) {
	rows := []formats.DeadLetter{
		{ImageID: "x", Stage: "decode", Reason: "a"},
		{ImageID: "x", Stage: "sift", Reason: "b"},
		{ImageID: "x", Stage: "decode", Reason: "c"},
		{ImageID: "w", Stage: "sift", Reason: "d"},
	}
	var files [][]byte
	for _, in := range [][]formats.DeadLetter{rows, {rows[2], rows[3], rows[1], rows[0]}} {
		dir := t.TempDir()
		p, s := beam.NewPipelineWithRoot()
		parquetio.Write(s, dir, "dead-letters", 1, beam.CreateList(s, in))
		if err := ptest.Run(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(fileio.Join(dir, formats.ShardName("dead-letters", 0, 1)))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("the order of rows with equal keys depends on the input order")
	}
}

func TestWriteReadGCS(t *testing.T) {
	gcstest.Start(t, "bkt")
	dir := "gs://bkt/run/out"
	rows := bows(12)
	write(t, dir, "bow", 2, rows)
	// List the bucket directly: fileio.Glob would hide temporary files.
	fsys, err := filesystem.New(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	files, err := fsys.List(context.Background(), "gs://bkt/**")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if want := shardPaths(dir, "bow", 2); !reflect.DeepEqual(asAny(files), want) {
		t.Errorf("bucket holds %q, want %q", files, want)
	}
	readBack(t, fileio.Join(dir, "bow-*.parquet"), rows)
}

func TestWriteRejectsBadArguments(t *testing.T) {
	for _, c := range []struct {
		name, panic string
		build       func(s beam.Scope)
	}{
		{"glob in name", "invalid output name", func(s beam.Scope) {
			parquetio.Write(s, t.TempDir(), "bow*", 1, beam.CreateList(s, bows(1)))
		}},
		{"not registered", "is not registered", func(s beam.Scope) {
			parquetio.Write(s, t.TempDir(), "x", 1, beam.CreateList(s, []unregistered{{"a"}}))
		}},
		{"not keyed", "is not a struct", func(s beam.Scope) {
			parquetio.Write(s, t.TempDir(), "x", 1, beam.Create(s, "a string"))
		}},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil {
					t.Errorf("%s: Write did not panic", c.name)
				} else if !strings.Contains(fmt.Sprint(r), c.panic) {
					t.Errorf("%s: panic %q does not contain %q", c.name, r, c.panic)
				}
			}()
			_, s := beam.NewPipelineWithRoot()
			c.build(s)
		}()
	}
}

// Read lists the files when the pipeline runs, not when it is built.
func TestReadListsAtRunTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rows := bows(5)
	p, s := beam.NewPipelineWithRoot()
	passert.Equals(s, parquetio.Read(s, fileio.Join(dir, "bow-*.parquet"), reflect.TypeFor[formats.BoW]()), asAny(rows)...)
	if err := fileio.WriteFile(ctx, fileio.Join(dir, formats.ShardName("bow", 0, 2)), rows[:2]); err != nil {
		t.Fatal(err)
	}
	if err := fileio.WriteFile(ctx, fileio.Join(dir, formats.ShardName("bow", 1, 2)), rows[2:]); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
}

// unregistered is a row type nobody registered with beam.RegisterType.
type unregistered struct{ ID string }

func (u unregistered) Key() string { return u.ID }
