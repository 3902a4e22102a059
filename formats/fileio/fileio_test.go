package fileio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/bowline/bowline/formats/gcstest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

func TestJoinAndSplit(t *testing.T) {
	for _, c := range []struct{ dir, name, want string }{
		{"gs://bucket", "a.parquet", "gs://bucket/a.parquet"},
		{"gs://bucket/", "a.parquet", "gs://bucket/a.parquet"},
		{"gs://bucket/out/run1", "a.parquet", "gs://bucket/out/run1/a.parquet"},
		{"gs://bucket/out/", "/a.parquet", "gs://bucket/out/a.parquet"},
		{"/tmp/out", "a.parquet", "/tmp/out/a.parquet"},
		{"/tmp/out/", "a.parquet", "/tmp/out/a.parquet"},
		{"out", "a.parquet", "out/a.parquet"},
		{"", "a.parquet", "a.parquet"},
	} {
		if got := Join(c.dir, c.name); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.dir, c.name, got, c.want)
		}
	}
	for _, c := range []struct{ path, dir, base string }{
		{"gs://bucket/a.parquet", "gs://bucket", "a.parquet"},
		{"gs://bucket/x/y/a.parquet", "gs://bucket/x/y", "a.parquet"},
		{"/tmp/a.parquet", "/tmp", "a.parquet"},
		{"a.parquet", ".", "a.parquet"},
	} {
		if dir, base := split(c.path); dir != c.dir || base != c.base {
			t.Errorf("split(%q) = %q, %q; want %q, %q", c.path, dir, base, c.dir, c.base)
		}
	}
}

// entries returns the names in dir, sorted.
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

func checkRoundTrips(t *testing.T, dir string) {
	ctx := context.Background()
	for _, rt := range allTrips() {
		t.Run(rt.name, func(t *testing.T) {
			path := Join(dir, formats.ShardName(rt.name, 0, 1))
			if err := rt.write(ctx, path); err != nil {
				t.Fatal(err)
			}
			got, err := rt.read(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if want := emptyNotNil(rt.rows); !reflect.DeepEqual(got, want) {
				t.Errorf("ReadFile:\n got %+v\nwant %+v", got, want)
			}
			got, err = rt.all(ctx, Join(dir, rt.name+"-*.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if want := emptyNotNil(rt.rows); !reflect.DeepEqual(got, want) {
				t.Errorf("ReadAll:\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestRoundTripLocal(t *testing.T) {
	dir := t.TempDir()
	checkRoundTrips(t, dir)
	// No temporary file is left behind.
	for _, name := range entries(t, dir) {
		if strings.HasPrefix(name, TempPrefix) {
			t.Errorf("temporary file left behind: %s", name)
		}
	}
}

func TestRoundTripGCS(t *testing.T) {
	gcstest.Start(t, "test-bucket")
	checkRoundTrips(t, "gs://test-bucket/out")
	ctx := context.Background()
	files, err := Glob(ctx, "gs://test-bucket/**")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(allTrips()) {
		t.Errorf("bucket holds %d files, want %d: %q", len(files), len(allTrips()), files)
	}
	// Glob hides temporary files, so list the bucket directly with a
	// pattern that matches them.
	tmps, err := Glob(ctx, "gs://test-bucket/out/.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if len(tmps) != 0 {
		t.Errorf("Glob returned temporary files: %q", tmps)
	}
	if n := countObjects(t, "gs://test-bucket/out/*"); n != len(allTrips()) {
		t.Errorf("bucket holds %d objects (temporary files included), want %d", n, len(allTrips()))
	}

	// Bytes too.
	if err := WriteBytes(ctx, "gs://test-bucket/report.json", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBytes(ctx, "gs://test-bucket/report.json")
	if err != nil || string(got) != `{"ok":true}` {
		t.Errorf("ReadBytes = %q, %v", got, err)
	}
}

// countObjects counts the objects matching pattern, temporary files
// included.
func countObjects(t *testing.T, pattern string) int {
	t.Helper()
	fsys, err := filesystem.New(context.Background(), pattern)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	all, err := fsys.List(context.Background(), pattern)
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func TestReadAllOrderAndEmpty(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	rows := sampleTriplets()
	// Written in reverse name order; ReadAll reads in sorted file order.
	for i := 2; i >= 0; i-- {
		if err := WriteFile(ctx, Join(dir, formats.ShardName("t", i, 3)), rows[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadAll[formats.Triplet](ctx, Join(dir, "t-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("ReadAll = %+v, want %+v", got, rows)
	}
	got, err = ReadAll[formats.Triplet](ctx, Join(dir, "nothing-*.parquet"))
	if err != nil || len(got) != 0 {
		t.Errorf("ReadAll of no match = %v, %v", got, err)
	}
	// An empty file is a valid file with no rows.
	empty := Join(dir, "empty.parquet")
	if err := WriteFile[formats.Triplet](ctx, empty, nil); err != nil {
		t.Fatal(err)
	}
	got, err = ReadFile[formats.Triplet](ctx, empty)
	if err != nil || len(got) != 0 {
		t.Errorf("ReadFile of empty file = %v, %v", got, err)
	}
	if _, err := ReadFile[formats.Triplet](ctx, Join(dir, "missing.parquet")); err == nil ||
		!strings.Contains(err.Error(), "fileio: read ") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: err = %v", err)
	}
}

func TestListLayoutAndCompression(t *testing.T) {
	ctx := context.Background()
	path := Join(t.TempDir(), "f.parquet")
	if err := WriteFile(ctx, path, sampleFeatures()); err != nil {
		t.Fatal(err)
	}
	osf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer osf.Close()
	st, _ := osf.Stat()
	f, err := parquet.OpenFile(osf, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	// Standard three-level LIST: <name> (LIST) { repeated group list { element } }.
	for _, name := range []string{"x", "descriptors"} {
		col, ok := f.Schema().Lookup(name, "list", "element")
		if !ok {
			t.Fatalf("column %s.list.element not found in schema:\n%s", name, f.Schema())
		}
		_ = col
		field := fieldByName(f.Schema().Fields(), name)
		if field == nil || field.Type().LogicalType() == nil || field.Type().LogicalType().String() != "LIST" {
			t.Errorf("column %s is not annotated LIST:\n%s", name, f.Schema())
		}
	}
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Zstd {
				t.Errorf("column %v is compressed with %v, want ZSTD", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
}

func fieldByName(fields []parquet.Field, name string) parquet.Field {
	for _, f := range fields {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

func TestManyRowsAndRowGroups(t *testing.T) {
	old := formats.RowGroupBytes
	formats.RowGroupBytes = 32 << 10
	defer func() { formats.RowGroupBytes = old }()

	ctx := context.Background()
	dir := t.TempDir()
	var rows []formats.BoW
	for i := range 2000 {
		n := i % 37
		b := formats.BoW{ImageID: strings.Repeat("x", i%5) + string(rune('a'+i%26)), Label: "l"}
		for j := range n {
			b.WordIDs = append(b.WordIDs, uint32(i*j))
			b.Weights = append(b.Weights, float32(j)/float32(n))
		}
		rows = append(rows, b)
	}
	path := Join(dir, "bow.parquet")
	if err := WriteFile(ctx, path, rows); err != nil {
		t.Fatal(err)
	}
	osf, _ := os.Open(path)
	st, _ := osf.Stat()
	f, err := parquet.OpenFile(osf, st.Size())
	osf.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.RowGroups()); n < 2 {
		t.Errorf("file has %d row groups, want several", n)
	}
	got, err := ReadFile[formats.BoW](ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if want := emptyNotNil(rows); !reflect.DeepEqual(got, want) {
		t.Errorf("rows differ after a round trip through %d row groups", len(f.RowGroups()))
	}
	// The reflective writer writes the same bytes, row groups included.
	pathOf := Join(dir, "bow-of.parquet")
	if err := WriteFileOf(ctx, pathOf, rows); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(path)
	b2, _ := os.ReadFile(pathOf)
	if !bytes.Equal(b1, b2) {
		t.Error("WriteFile and WriteFileOf wrote different bytes")
	}

	// ReadEach stops at the first error from fn and returns it as is.
	stop := errors.New("stop")
	n := 0
	err = ReadEach(ctx, path, func(*formats.BoW) error {
		if n++; n == 100 {
			return stop
		}
		return nil
	})
	if err != stop || n != 100 {
		t.Errorf("ReadEach: err = %v after %d rows, want %v after 100", err, n, stop)
	}
	// The reflective reader gives the same rows.
	var gotOf []formats.BoW
	err = ReadEachOf(ctx, path, reflect.TypeFor[formats.BoW](), func(row any) error {
		gotOf = append(gotOf, row.(formats.BoW))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotOf, got) {
		t.Error("ReadEachOf and ReadFile disagree")
	}
}

// The generic and reflective writers produce the same bytes, and a re-write
// of the same rows is byte-identical.
func TestDeterministicBytes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, rt := range allTrips() {
		a, b, c := Join(dir, rt.name+"-a.parquet"), Join(dir, rt.name+"-b.parquet"), Join(dir, rt.name+"-c.parquet")
		if err := rt.write(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := rt.write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileOf(ctx, c, rt.rows); err != nil {
			t.Fatal(err)
		}
		ba, _ := os.ReadFile(a)
		bb, _ := os.ReadFile(b)
		bc, _ := os.ReadFile(c)
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s: two writes of the same rows differ", rt.name)
		}
		if !bytes.Equal(ba, bc) {
			t.Errorf("%s: WriteFile and WriteFileOf differ", rt.name)
		}
	}
}

// TestReadBytesAllocatesItsSize: a local file is read into one buffer of
// its size, not one grown from 512 bytes (about 2.5 times the file's
// bytes allocated and copied), and a reader that announces too few bytes
// is still read whole, gs:// objects too.
func TestReadBytesAllocatesItsSize(t *testing.T) {
	ctx := context.Background()
	data := make([]byte, 3<<20+123)
	for i := range data {
		data[i] = byte(i*31 + i>>11)
	}
	path := Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadBytes(ctx, path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadBytes: %d bytes, %v; want the file's %d", len(got), err, len(data))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := ReadBytes(ctx, path)
	runtime.ReadMemStats(&after)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadBytes: %d bytes, %v", len(got), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(data))+64<<10 {
		t.Errorf("ReadBytes of %d bytes allocated %d", len(data), alloc)
	}

	for _, announced := range []int64{0, 100, int64(len(data)) - 1, int64(len(data))} {
		got, err := readAll(&announcing{Reader: bytes.NewReader(data), remain: announced})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d announced: %d bytes, %v; want %d", announced, len(got), err, len(data))
		}
	}

	gcstest.Start(t, "bytes-bucket")
	if err := WriteBytes(ctx, "gs://bytes-bucket/photo.jpg", data); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadBytes(ctx, "gs://bytes-bucket/photo.jpg"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("ReadBytes of gs://: %d bytes, %v; want %d", len(got), err, len(data))
	}
}

// announcing is a reader that announces remain bytes, as a GCS object's
// reader does.
type announcing struct {
	*bytes.Reader
	remain int64
}

func (a *announcing) Remain() int64 { return a.remain }

func TestBytes(t *testing.T) {
	ctx := context.Background()
	path := Join(t.TempDir(), "sub/dir/report.html")
	if err := WriteBytes(ctx, path, []byte("<html>ü</html>")); err != nil {
		t.Fatal(err)
	}
	got, err := ReadBytes(ctx, path)
	if err != nil || string(got) != "<html>ü</html>" {
		t.Errorf("ReadBytes = %q, %v", got, err)
	}
	if _, err := ReadBytes(ctx, path+".missing"); err == nil {
		t.Error("ReadBytes of a missing file succeeded")
	}
}

// noTemps fails the test if dir holds anything but the given names.
func onlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	if got := entries(t, dir); !slices.Equal(got, want) {
		t.Errorf("directory holds %q, want %q", got, want)
	}
}

func TestAtomicWriteFailures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := Join(dir, "out.parquet")
	// An earlier good file must survive every failed write.
	if err := WriteFile(ctx, path, sampleBoWs()); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	checkUntouched := func(t *testing.T) {
		t.Helper()
		onlyFiles(t, dir, "out.parquet")
		if now, _ := os.ReadFile(path); !bytes.Equal(now, good) {
			t.Error("the file at path was changed by a failed write")
		}
	}

	t.Run("body fails midway", func(t *testing.T) {
		boom := errors.New("boom")
		err := writeAtomic(ctx, path, func(w io.Writer) error {
			w.Write(bytes.Repeat([]byte("partial"), 10000))
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want %v", err, boom)
		}
		checkUntouched(t)
	})
	t.Run("body panics", func(t *testing.T) {
		err := writeAtomic(ctx, path, func(w io.Writer) error {
			w.Write([]byte("partial"))
			panic("parquet-go says no")
		})
		if err == nil || !strings.Contains(err.Error(), "parquet-go says no") {
			t.Errorf("err = %v", err)
		}
		checkUntouched(t)
	})
	t.Run("writer fails on close", func(t *testing.T) {
		// The parquet writer buffers the rows and writes on Close, so the
		// failing writer fails the parquet writer's Close.
		err := writeAtomic(ctx, path, func(w io.Writer) error {
			pw := parquet.NewWriter(&failingWriter{w: w, left: 100}, parquet.SchemaOf(formats.BoW{}))
			for _, r := range sampleBoWs() {
				if err := pw.Write(r); err != nil {
					return err
				}
			}
			return pw.Close()
		})
		if !errors.Is(err, errDiskFull) {
			t.Errorf("err = %v, want %v", err, errDiskFull)
		}
		checkUntouched(t)
	})
	t.Run("context cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := WriteFile(cctx, path, sampleBoWs())
		if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "fileio: write "+path) {
			t.Errorf("err = %v, want context.Canceled with context", err)
		}
		checkUntouched(t)
	})
	t.Run("context cancelled during write", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		err := writeAtomic(cctx, path, func(w io.Writer) error {
			w.Write([]byte("partial"))
			cancel()
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		checkUntouched(t)
	})
	t.Run("unsupported row type", func(t *testing.T) {
		type bad struct {
			C chan int
		}
		err := WriteFile(ctx, path, []bad{{}})
		if err == nil {
			t.Error("writing a row type with a channel succeeded")
		}
		checkUntouched(t)
		if err := WriteFileOf(ctx, path, 42); err == nil {
			t.Error("WriteFileOf of a non-slice succeeded")
		}
		checkUntouched(t)
	})
	t.Run("success replaces", func(t *testing.T) {
		if err := WriteFile(ctx, path, sampleTriplets()); err != nil {
			t.Fatal(err)
		}
		onlyFiles(t, dir, "out.parquet")
		got, err := ReadFile[formats.Triplet](ctx, path)
		if err != nil || !reflect.DeepEqual(got, sampleTriplets()) {
			t.Errorf("ReadFile = %v, %v", got, err)
		}
	})
}

func TestAtomicWriteFailuresGCS(t *testing.T) {
	gcstest.Start(t, "b")
	ctx := context.Background()
	path := "gs://b/out/x.parquet"
	boom := errors.New("boom")
	err := writeAtomic(ctx, path, func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("partial"), 100000))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want %v", err, boom)
	}
	if n := countObjects(t, "gs://b/**"); n != 0 {
		t.Errorf("a failed write left %d objects", n)
	}
}

var errDiskFull = errors.New("disk full")

// failingWriter fails once more than left bytes were written to it.
type failingWriter struct {
	w    io.Writer
	left int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n, _ := f.w.Write(p[:f.left])
		f.left = 0
		return n, errDiskFull
	}
	f.left -= len(p)
	return f.w.Write(p)
}

func TestReadWrongSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "w.parquet")
	if err := WriteFile(ctx, path, sampleImages()); err != nil {
		t.Fatal(err)
	}
	// Columns are matched by name and converted where possible; a value
	// that does not convert is an error, not a panic. (A column whose
	// structure differs, e.g. a list read as a scalar, is treated as
	// missing and reads as the zero value.)
	type wrong struct {
		ImageID int64 `parquet:"image_id"`
	}
	if _, err := ReadFile[wrong](ctx, path); err == nil {
		t.Error("reading image ids into an int64 succeeded")
	}
	// Not a parquet file at all.
	if err := WriteBytes(ctx, path, []byte("not parquet")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile[formats.Word](ctx, path); err == nil {
		t.Error("reading a non-parquet file succeeded")
	}
}

func TestCountRows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i, n := range []int{3, 0, 5} {
		rows := make([]formats.Word, n)
		for j := range rows {
			rows[j] = formats.Word{WordID: uint32(j), Centroid: []float32{1, 2}}
		}
		if err := WriteFile(ctx, Join(dir, formats.ShardName("codebook", i, 3)), rows); err != nil {
			t.Fatal(err)
		}
	}
	n, err := CountRows(ctx, Join(dir, "codebook-*.parquet"))
	if err != nil || n != 8 {
		t.Fatalf("CountRows = %d, %v; want 8", n, err)
	}
}

// TestReportTimesStayOutOfParquet: the times of a report row, different
// on every run, are not written, so that report files of two runs are
// byte-identical.
func TestReportTimesStayOutOfParquet(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	row := formats.ReportRow{Method: "m", Relevance: "label", MAP: 0.5}
	a, b := row, row
	a.TrainSeconds, a.IndexSeconds, a.QuerySeconds = 1, 2, 3
	b.TrainSeconds, b.IndexSeconds, b.QuerySeconds = 4, 5, 6
	pa, pb := Join(dir, "a.parquet"), Join(dir, "b.parquet")
	if err := WriteFile(ctx, pa, []formats.ReportRow{a}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(ctx, pb, []formats.ReportRow{b}); err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(pa)
	bb, _ := os.ReadFile(pb)
	if !bytes.Equal(ba, bb) {
		t.Error("report rows that differ only in their times wrote different files")
	}
	got, err := ReadFile[formats.ReportRow](ctx, pa)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], row) {
		t.Errorf("read back %+v, %v; want %+v", got, err, row)
	}
}

// Copy gives the same bytes under the new name, locally and on GCS, and
// fails, leaving nothing, for a file that does not exist.
func TestCopy(t *testing.T) {
	gcstest.Start(t, "copy-bucket")
	ctx := context.Background()
	for _, dir := range []string{t.TempDir(), "gs://copy-bucket/d"} {
		data := []byte("a part of a table")
		if err := WriteBytes(ctx, Join(dir, "a"), data); err != nil {
			t.Fatal(err)
		}
		if err := Copy(ctx, Join(dir, "a"), Join(dir, "b")); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if got, err := ReadBytes(ctx, Join(dir, "b")); err != nil || string(got) != string(data) {
			t.Errorf("%s: the copy holds %q, %v", dir, got, err)
		}
		if err := Copy(ctx, Join(dir, "missing"), Join(dir, "c")); err == nil {
			t.Errorf("%s: copying a missing file: no error", dir)
		}
		if names, err := Glob(ctx, Join(dir, "*")); err != nil || len(names) != 2 {
			t.Errorf("%s: after the copies the directory holds %q, %v", dir, names, err)
		}
	}
	// Locally, a link: the copy takes no room, and a file written over
	// either name later leaves the other as it was.
	dir := t.TempDir()
	a, b := Join(dir, "a"), Join(dir, "b")
	if err := WriteBytes(ctx, a, []byte("features")); err != nil {
		t.Fatal(err)
	}
	if err := Copy(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil || !os.SameFile(sa, sb) {
		t.Errorf("a local copy is not a link of the file: %v, %v", errA, errB)
	}
	if err := WriteBytes(ctx, a, []byte("features of another run")); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadBytes(ctx, b); err != nil || string(got) != "features" {
		t.Errorf("after a was written again, its copy holds %q, %v", got, err)
	}
	if err := Remove(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadBytes(ctx, b); err != nil || string(got) != "features" {
		t.Errorf("after a was removed, its copy holds %q, %v", got, err)
	}
	// Across file systems, streamed.
	local := Join(t.TempDir(), "a")
	if err := WriteBytes(ctx, local, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := Copy(ctx, local, "gs://copy-bucket/e/a"); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadBytes(ctx, "gs://copy-bucket/e/a"); err != nil || string(got) != "x" {
		t.Errorf("local to gs://: %q, %v", got, err)
	}
}

// RemoveAll removes a directory and everything beneath it, local or
// gs://, and nothing beside it; a missing directory is no error.
func TestRemoveAll(t *testing.T) {
	gcstest.Start(t, "test-bucket")
	ctx := context.Background()
	for _, root := range []string{t.TempDir(), "gs://test-bucket/run"} {
		for _, n := range []string{"scratch/a", "scratch/sub/b", "scratch2/c", "d"} {
			if err := WriteBytes(ctx, Join(root, n), []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := RemoveAll(ctx, Join(root, "scratch")); err != nil {
			t.Fatal(err)
		}
		if n := countObjects(t, Join(root, "scratch/*")) + countObjects(t, Join(root, "scratch/sub/*")); n != 0 {
			t.Errorf("%s: %d files left under scratch", root, n)
		}
		if n := countObjects(t, Join(root, "scratch2/*")) + countObjects(t, Join(root, "d")); n != 2 {
			t.Errorf("%s: %d of the 2 files beside scratch left", root, n)
		}
		if err := RemoveAll(ctx, Join(root, "scratch")); err != nil {
			t.Errorf("%s: removing it again: %v", root, err)
		}
	}
}

// A missing gs:// object is reported as a missing local file is: its
// error wraps fs.ErrNotExist, so a run without a manifest in a bucket
// reads as one (run.Dir.Manifest) and not as a failed read.
func TestMissingGCSObject(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "missing-bucket")
	if err := WriteBytes(ctx, "gs://missing-bucket/runs/1/report.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadBytes(ctx, "gs://missing-bucket/runs/1/nothing.json"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "gs://missing-bucket/runs/1/nothing.json") {
		t.Errorf("ReadBytes of a missing object: %v; want fs.ErrNotExist, naming it", err)
	}
	if _, err := Open(ctx, "gs://missing-bucket/nothing.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing object: %v; want fs.ErrNotExist", err)
	}
	if _, err := Size(ctx, "gs://missing-bucket/nothing.parquet"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Size of a missing object: %v; want fs.ErrNotExist", err)
	}
	if _, err := RunDir("gs://missing-bucket/runs/1").Manifest(ctx); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no finished run in gs://missing-bucket/runs/1") {
		t.Errorf("the manifest of a run without one: %v; want fs.ErrNotExist, naming the run", err)
	}
}

// A codebook's files are read into one table in any row order, and an
// error names the file at fault once: the file of a repeated word, every
// file when a word is missing, the file that does not decode.
func TestReadCentroids(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	word := func(id uint32) formats.Word { return formats.Word{WordID: id, Centroid: []float32{float32(id), 1}} }
	write := func(name string, words ...formats.Word) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := WriteFile(ctx, p, words); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.parquet", word(2), word(0)), write("b.parquet", word(1))
	cent, err := ReadCentroids(ctx, []string{a, b}, 3, 2)
	if err != nil || !slices.Equal(cent, []float32{0, 1, 1, 1, 2, 1}) {
		t.Errorf("ReadCentroids = %v, %v; want [0 1 1 1 2 1]", cent, err)
	}
	dup := write("dup.parquet", word(0))
	bad := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(bad, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		paths []string
		k     int
		want  []string
	}{
		{"twice", []string{a, dup}, 3, []string{dup, "word 0 twice"}},
		{"missing", []string{a}, 3, []string{a, "word 1 missing"}},
		{"outside", []string{a, b}, 2, []string{a, "word id 2 outside"}},
		{"undecodable", []string{a, bad}, 3, []string{bad}},
		{"no file", nil, 3, []string{"no file"}},
	} {
		_, err := ReadCentroids(ctx, tc.paths, tc.k, 2)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if n := strings.Count(err.Error(), w); n != 1 {
				t.Errorf("%s: error %q names %q %d times, want once", tc.name, err, w, n)
			}
		}
	}
}

// WriteCentroids writes, block by block, the bytes WriteFile writes of the
// words in word order — the codebook file of every writer is the same — and
// the content of the words; a block that does not add up to the k words,
// or a non-finite value, leaves no file.
func TestWriteCentroids(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const k, dim = 2500, 3 // more words than a row group holds
	cent := make([]float32, k*dim)
	words := make([]formats.Word, k)
	for i := range cent {
		cent[i] = float32(i%251) / 7
	}
	for i := range words {
		words[i] = formats.Word{WordID: uint32(i), Centroid: cent[i*dim : (i+1)*dim]}
	}
	ref := filepath.Join(dir, "ref.parquet")
	if err := WriteFile(ctx, ref, words); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	blocksOf := func(size int, vals []float32) func(add func([]float32) error) error {
		return func(add func([]float32) error) error {
			for lo := 0; lo < len(vals); lo += size * dim {
				if err := add(vals[lo:min(lo+size*dim, len(vals))]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	// reused hands the blocks over in one buffer, as a reader of shard
	// files does.
	reused := func(size int) func(add func([]float32) error) error {
		return func(add func([]float32) error) error {
			buf := make([]float32, size*dim)
			return blocksOf(size, cent)(func(b []float32) error { return add(buf[:copy(buf, b)]) })
		}
	}
	for _, size := range []int{1, 7, 1000, k, -7, -1000} {
		p := filepath.Join(dir, "blocks.parquet")
		blocks := blocksOf(size, cent)
		if size < 0 {
			size = -size
			blocks = reused(size)
		}
		content, err := WriteCentroids(ctx, p, k, dim, blocks)
		if err != nil {
			t.Fatalf("blocks of %d words: %v", size, err)
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("blocks of %d words: %d bytes (%v), want WriteFile's %d, equal", size, len(got), err, len(want))
		}
		if content != formats.CentroidsContent(cent) {
			t.Errorf("blocks of %d words: content %s, want %s", size, content, formats.CentroidsContent(cent))
		}
	}
	nan := slices.Clone(cent)
	nan[5*dim+1] = float32(math.NaN())
	for _, tc := range []struct {
		name   string
		k      int
		blocks func(add func([]float32) error) error
		want   string
	}{
		{"a word short", k + 1, blocksOf(10, cent), "2500 of 2501 words"},
		{"a word over", k - 1, blocksOf(10, cent), "a block of 30 values after 2490 of 2499 words"},
		{"part of a word", k, blocksOf(10, cent[:len(cent)-1]), "a block of 29 values"},
		{"not finite", k, blocksOf(10, nan), "word 5 has a non-finite centroid"},
	} {
		p := filepath.Join(dir, tc.name+".parquet")
		if _, err := WriteCentroids(ctx, p, tc.k, dim, tc.blocks); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s: %q", tc.name, err, p, tc.want)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*"+tc.name+"*")); len(left) != 0 {
			t.Errorf("%s: left %v", tc.name, left)
		}
	}
}
