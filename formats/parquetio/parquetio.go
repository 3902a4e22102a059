// Package parquetio reads and writes sharded Parquet outputs from Beam
// pipelines, in the layout package formats describes:
// dir/<name>-00000-of-00004.parquet, ...
//
// Write assigns each row to shard fnv32a(row.Key()) % shards (a fixed
// count, or one that follows the data's size), sorts each shard by Key in
// bounded memory (an external merge sort whose runs spill to local
// temporary files), streams it to a temporary file, and then, in a single
// finalise step that runs after every shard is written (even when there were
// no rows), renames the temporary files to their final names, writes empty
// files for shards that got no rows and deletes shard files of an earlier
// run with another shard count. A re-run on the same input therefore writes
// byte-identical files, and a reader never sees a half-written file under a
// final name (it may see a mix of old and new shards while the finalise step
// is renaming).
//
// Read lists the files at execution time, reshuffles the list and streams
// each file.
//
// The DoFns are registered with beam.RegisterType rather than the generic
// register helpers, which cost seconds of compile time each; they run
// through Beam's reflective call path.
package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/parquet-go/parquet-go"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*shardFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeShardFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*finalizeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*globFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*readFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*partsFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*sizeFn)(nil)).Elem())
	beam.RegisterFunction(zeroFn)
	beam.RegisterType(reflect.TypeOf((*formats.Part)(nil)).Elem())
	beam.RegisterFunction(partPathFn)
	// The row types are Beam element types: registering them lets Beam
	// name them when it serialises a pipeline (a beam.EncodedType of an
	// unregistered struct decodes on the worker as an anonymous struct, not
	// as the named type) and gives them the schema row coder.
	for _, t := range formats.RowTypes {
		beam.RegisterType(t)
	}
}

var keyedType = reflect.TypeOf((*formats.Keyed)(nil)).Elem()

// checkRowType panics unless t is a struct type implementing formats.Keyed
// that parquet-go can make a schema of.
func checkRowType(t reflect.Type, needKey bool) {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("parquetio: element type %v is not a struct", t))
	}
	if needKey && !t.Implements(keyedType) {
		panic(fmt.Sprintf("parquetio: element type %v does not implement formats.Keyed", t))
	}
	// The DoFns carry t as a beam.EncodedType; an unregistered struct type
	// would decode on the worker as an anonymous struct without methods.
	if key, ok := runtime.TypeKey(t); !ok {
		panic(fmt.Sprintf("parquetio: element type %v is not a named type", t))
	} else if _, ok := runtime.LookupType(key); !ok {
		panic(fmt.Sprintf("parquetio: element type %v is not registered: call beam.RegisterType(reflect.TypeFor[%v]()) in an init function", t, t))
	}
	func() {
		defer func() {
			if r := recover(); r != nil {
				panic(fmt.Sprintf("parquetio: element type %v has no parquet schema: %v", t, r))
			}
		}()
		parquet.SchemaOf(reflect.Zero(t).Interface())
	}()
}

// TargetShardBytes is the size, in Beam-encoded bytes (about the rows'
// uncompressed size), of a shard of Write with automatic sharding.
var TargetShardBytes int64 = 192 << 20

// Write writes col, a PCollection of a row type implementing formats.Keyed,
// to shards Parquet files dir/ShardName(name, i, shards), and returns a
// PCollection<string> of the final paths, emitted only once every file is in
// place (use it as a side input to wait for the output). The row type must
// be registered with beam.RegisterType (this package registers those of package formats). Name must not hold
// "/" or glob metacharacters. Shards ≤ 0 follows the data: as many shards
// as make about TargetShardBytes each, at least one. A shard is sorted in
// bounded memory (SortRunBytes, then runs spilled to local temporary files
// and merged) and streamed to its file, so no worker holds a shard.
//
// Counters (namespace "parquetio"): rows_written_<name>,
// files_written_<name>.
func Write(s beam.Scope, dir, name string, shards int, col beam.PCollection) beam.PCollection {
	s = s.Scope("parquetio.Write")
	if name == "" || strings.ContainsAny(name, `/\*?[]`) {
		panic(fmt.Sprintf("parquetio.Write: invalid output name %q", name))
	}
	filesystem.ValidateScheme(dir)
	t := col.Type().Type()
	checkRowType(t, true)

	out := output{Dir: dir, Name: name, Shards: max(shards, 0), Target: TargetShardBytes, Run: fileio.RandomHex(), Type: beam.EncodedType{T: t}}
	// The total size decides the shard count when it follows the data; the
	// zero from the impulse makes the sum of an empty collection 0.
	total := stats.Sum(s, beam.Flatten(s, beam.ParDo(s, zeroFn, beam.Impulse(s)), beam.ParDo(s, &sizeFn{Type: out.Type}, col)))
	keyed := beam.ParDo(s, &shardFn{Out: out}, col, beam.SideInput{Input: total})
	grouped := beam.GroupByKey(s, keyed)
	temps := beam.ParDo(s, &writeShardFn{Out: out}, grouped, beam.SideInput{Input: total})
	return beam.ParDo(s, &finalizeFn{Out: out}, beam.Impulse(s), beam.SideInput{Input: temps}, beam.SideInput{Input: total})
}

func zeroFn(_ []byte) int64 { return 0 }

// sizeFn gives each row's size, Beam-encoded.
type sizeFn struct {
	Type beam.EncodedType `json:"type"`

	enc beam.ElementEncoder
	buf bytes.Buffer
}

func (f *sizeFn) ProcessElement(row beam.T) (int64, error) {
	if f.enc == nil {
		f.enc = beam.NewElementEncoder(f.Type.T)
	}
	f.buf.Reset()
	err := f.enc.Encode(row, &f.buf)
	return int64(f.buf.Len()), err
}

// output describes one sharded output; it is carried in the DoFns.
type output struct {
	Dir  string `json:"dir"`
	Name string `json:"name"`
	// Shards is the number of shards, or 0 for as many as make Target
	// bytes each.
	Shards int   `json:"shards"`
	Target int64 `json:"target"`
	// Run tags this pipeline's temporary files, so that the finalise step
	// can sweep the leftovers of failed attempts.
	Run  string           `json:"run"`
	Type beam.EncodedType `json:"type"`
}

// shards returns the number of shards of an output of total bytes.
func (o output) shards(total int64) int {
	if o.Shards > 0 {
		return o.Shards
	}
	return formats.Parts(total, int(o.Target))
}

func (o output) final(shard, shards int) string {
	return fileio.Join(o.Dir, formats.ShardName(o.Name, shard, shards))
}

// shardFn keys each row by its shard.
type shardFn struct {
	Out output `json:"out"`
}

func (f *shardFn) ProcessElement(row beam.T, total int64) (int, beam.T) {
	return formats.ShardOf(row.(formats.Keyed).Key(), f.Out.shards(total)), row
}

// writeShardFn sorts the rows of one shard and writes them to a temporary
// file, returning (shard, temporary path).
type writeShardFn struct {
	Out  output `json:"out"`
	rows beam.Counter
}

func (f *writeShardFn) Setup() {
	f.rows = beam.NewCounter("parquetio", "rows_written_"+f.Out.Name)
}

func (f *writeShardFn) ProcessElement(ctx context.Context, shard int, iter func(*beam.T) bool, total int64) (int, string, error) {
	srt := newSorter(f.Out.Type.T)
	defer srt.Close()
	var row beam.T
	n := int64(0)
	for iter(&row) {
		if err := srt.Add(row.(formats.Keyed).Key(), row); err != nil {
			return 0, "", fmt.Errorf("parquetio: shard %d of %s: %w", shard, f.Out.Name, err)
		}
		n++
	}
	shards := f.Out.shards(total)
	tmp := fileio.Join(f.Out.Dir, fmt.Sprintf("%s%s-%s-%s", fileio.TempPrefix, f.Out.Run, fileio.RandomHex(),
		formats.ShardName(f.Out.Name, shard, shards)))
	err := fileio.WriteRowsOf(ctx, tmp, f.Out.Type.T, func(write func(any) error) error { return srt.Each(write) })
	if err != nil {
		return 0, "", fmt.Errorf("parquetio: shard %d of %s (%d sort runs): %w", shard, f.Out.Name, srt.Runs(), err)
	}
	f.rows.Inc(ctx, n)
	return shard, tmp, nil
}

// finalizeFn runs once, after every shard is written: it moves the
// temporary files to their final names, writes empty files for empty shards,
// removes stale shards and leftover temporary files, and emits the final
// paths.
type finalizeFn struct {
	Out   output `json:"out"`
	files beam.Counter
}

func (f *finalizeFn) Setup() {
	f.files = beam.NewCounter("parquetio", "files_written_"+f.Out.Name)
}

func (f *finalizeFn) ProcessElement(ctx context.Context, _ []byte, temps func(*int, *string) bool, total int64, emit func(string)) error {
	o := f.Out
	shards := o.shards(total)
	fsys, err := filesystem.New(ctx, o.Dir)
	if err != nil {
		return fmt.Errorf("parquetio: finalise %s: %w", o.Name, err)
	}
	defer fsys.Close()

	tempOf := map[int]string{}
	var (
		shard int
		tmp   string
	)
	for temps(&shard, &tmp) {
		// A runner delivers each committed shard once; should one come
		// twice, either copy is right and the sweep below removes the other.
		if prev, ok := tempOf[shard]; !ok || tmp < prev {
			tempOf[shard] = tmp
		}
	}

	finals := make([]string, shards)
	keep := map[string]bool{}
	for i := range shards {
		finals[i] = o.final(i, shards)
		keep[filepath.Base(finals[i])] = true
		if tmp, ok := tempOf[i]; ok {
			if err := rename(ctx, fsys, tmp, finals[i]); err != nil {
				return fmt.Errorf("parquetio: finalise %s: rename %s to %s: %w", o.Name, tmp, finals[i], err)
			}
			continue
		}
		empty := reflect.MakeSlice(reflect.SliceOf(o.Type.T), 0, 0).Interface()
		if err := fileio.WriteFileOf(ctx, finals[i], empty); err != nil {
			return fmt.Errorf("parquetio: finalise %s: %w", o.Name, err)
		}
	}

	// Shards of an earlier run with another shard count.
	stale := regexp.MustCompile(`^` + regexp.QuoteMeta(o.Name) + `-\d{5,}-of-\d{5,}\.parquet$`)
	old, err := fileio.Glob(ctx, fileio.Join(o.Dir, o.Name+"-*-of-*.parquet"))
	if err != nil {
		return fmt.Errorf("parquetio: finalise %s: %w", o.Name, err)
	}
	for _, p := range old {
		if base := filepath.Base(p); stale.MatchString(base) && !keep[base] {
			if err := remove(ctx, fsys, p); err != nil {
				return fmt.Errorf("parquetio: finalise %s: remove stale %s: %w", o.Name, p, err)
			}
		}
	}

	// Temporary files of failed attempts of this run (fileio.Glob hides
	// temporary files, so list directly).
	left, err := fsys.List(ctx, fileio.Join(o.Dir, fileio.TempPrefix+"*"+o.Run+"-*"))
	if err != nil {
		return fmt.Errorf("parquetio: finalise %s: %w", o.Name, err)
	}
	for _, p := range left {
		if err := remove(ctx, fsys, p); err != nil {
			log.Warnf(ctx, "parquetio: finalise %s: removing leftover %s: %v", o.Name, p, err)
		}
	}

	f.files.Inc(ctx, int64(shards))
	for _, p := range finals {
		emit(p)
	}
	return nil
}

// rename moves from to to. If from is gone and to exists, an earlier attempt
// of the finalise step already moved it, and that is success.
func rename(ctx context.Context, fsys filesystem.Interface, from, to string) error {
	err := filesystem.Rename(ctx, fsys, from, to)
	if err == nil {
		return nil
	}
	if _, ferr := fsys.Size(ctx, from); ferr != nil {
		if _, terr := fsys.Size(ctx, to); terr == nil {
			return nil
		}
	}
	return err
}

func remove(ctx context.Context, fsys filesystem.Interface, path string) error {
	rm, ok := fsys.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("%T cannot remove files", fsys)
	}
	return rm.Remove(ctx, path)
}

// Read reads the rows of every Parquet file matching pattern (see
// fileio.Glob; listed when the pipeline runs) as elements of type t, a
// struct row type such as reflect.TypeFor[formats.BoW](). A pattern matching
// nothing gives an empty PCollection and logs a warning.
//
// Counter (namespace "parquetio"): rows_read.
func Read(s beam.Scope, pattern string, t reflect.Type) beam.PCollection {
	s = s.Scope("parquetio.Read")
	filesystem.ValidateScheme(pattern)
	checkRowType(t, false)
	files := beam.ParDo(s, &globFn{Pattern: pattern}, beam.Impulse(s))
	files = beam.Reshuffle(s, files)
	return beam.ParDo(s, &readFn{Type: beam.EncodedType{T: t}}, files, beam.TypeDefinition{Var: beam.TType, T: t})
}

// ReadParts reads the rows of the parts (PCollection<formats.Part>) of an
// output written part by part, as elements of type t, as Read does.
func ReadParts(s beam.Scope, parts beam.PCollection, t reflect.Type) beam.PCollection {
	s = s.Scope("parquetio.ReadParts")
	checkRowType(t, false)
	files := beam.Reshuffle(s, beam.ParDo(s, partPathFn, parts))
	return beam.ParDo(s, &readFn{Type: beam.EncodedType{T: t}}, files, beam.TypeDefinition{Var: beam.TType, T: t})
}

func partPathFn(p formats.Part) string { return p.Path }

// PartPaths returns the paths of parts (PCollection<formats.Part>) as
// PCollection<string>, as Write returns the paths it wrote.
func PartPaths(s beam.Scope, parts beam.PCollection) beam.PCollection {
	return beam.ParDo(s.Scope("parquetio.PartPaths"), partPathFn, parts)
}

// Parts lists the parts of the output name under dir as a finished run
// left them (files formats.ShardName(name, p, P)), with their row counts and,
// for bags of words, their postings: PCollection<formats.Part>. A run
// without such files fails.
func Parts(s beam.Scope, dir, name string) beam.PCollection {
	s = s.Scope("parquetio.Parts")
	filesystem.ValidateScheme(dir)
	return beam.ParDo(s, &partsFn{Dir: dir, Name: name}, beam.Impulse(s))
}

type partsFn struct {
	Dir  string `json:"dir"`
	Name string `json:"name"`
}

func (f *partsFn) ProcessElement(ctx context.Context, _ []byte, emit func(formats.Part)) error {
	files, err := fileio.Glob(ctx, fileio.Join(f.Dir, f.Name+"-*-of-*.parquet"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("parquetio: no %s parts under %s", f.Name, f.Dir)
	}
	for _, path := range files {
		base := path[strings.LastIndex(path, "/")+1:]
		var p formats.Part
		if _, err := fmt.Sscanf(strings.TrimPrefix(base, f.Name+"-"), "%05d-of-%05d.parquet", &p.Part, &p.Parts); err != nil {
			return fmt.Errorf("parquetio: %s is not a part of %s: %w", path, f.Name, err)
		}
		n, postings, err := fileio.CountRowsPostings(ctx, path)
		if err != nil {
			return err
		}
		p.Name, p.Path, p.Rows, p.Postings = f.Name, path, n, postings
		emit(p)
	}
	return nil
}

// globFn lists the files matching Pattern.
type globFn struct {
	Pattern string `json:"pattern"`
}

func (f *globFn) ProcessElement(ctx context.Context, _ []byte, emit func(string)) error {
	files, err := fileio.Glob(ctx, f.Pattern)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		log.Warnf(ctx, "parquetio.Read: no file matches %s", f.Pattern)
	}
	for _, p := range files {
		emit(p)
	}
	return nil
}

// readFn streams the rows of one file.
type readFn struct {
	Type beam.EncodedType `json:"type"`
	rows beam.Counter
}

func (f *readFn) Setup() {
	f.rows = beam.NewCounter("parquetio", "rows_read")
}

func (f *readFn) ProcessElement(ctx context.Context, path string, emit func(beam.T)) error {
	n := int64(0)
	err := fileio.ReadEachOf(ctx, path, f.Type.T, func(row any) error {
		emit(row)
		n++
		return nil
	})
	f.rows.Inc(ctx, n)
	return err
}
