package parquetio

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// SortRunBytes bounds the memory of a shard's sort: rows are held, encoded,
// up to this many bytes (keys, encodings and a fixed per-row overhead
// counted), then sorted and spilled to a local temporary file as one run;
// the runs are merged as the shard is written. A variable so that tests can
// force several runs.
var SortRunBytes = 64 << 20

// rowOverhead is what sorter counts for a held row besides its key and
// encoding: the record and the slice and string headers.
const rowOverhead = 64

// record is one row held by a sorter: its key and its Beam encoding, which
// orders rows of equal keys and is decoded back when the row is written.
type record struct {
	key string
	enc []byte
}

func compareRecords(a, b record) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	return bytes.Compare(a.enc, b.enc)
}

// sorter orders rows by key, rows of equal keys by their Beam encoding, so
// that the order never depends on the order the runner delivered them in,
// in memory bounded by SortRunBytes whatever the number of rows: an
// external merge sort with runs in local temporary files.
type sorter struct {
	t    reflect.Type
	enc  beam.ElementEncoder
	recs []record
	held int
	runs []*os.File
	buf  bytes.Buffer
}

func newSorter(t reflect.Type) *sorter {
	return &sorter{t: t, enc: beam.NewElementEncoder(t)}
}

// Add adds row under key.
func (s *sorter) Add(key string, row any) error {
	s.buf.Reset()
	if err := s.enc.Encode(row, &s.buf); err != nil {
		return fmt.Errorf("encode row: %w", err)
	}
	r := record{key: key, enc: bytes.Clone(s.buf.Bytes())}
	s.recs = append(s.recs, r)
	s.held += len(r.key) + len(r.enc) + rowOverhead
	if s.held >= SortRunBytes {
		return s.spill()
	}
	return nil
}

// spill sorts the rows held and writes them to a new run file.
func (s *sorter) spill() error {
	slices.SortFunc(s.recs, compareRecords)
	f, err := os.CreateTemp("", "bowline-sort-*")
	if err != nil {
		return fmt.Errorf("sort run: %w", err)
	}
	s.runs = append(s.runs, f)
	w := bufio.NewWriterSize(f, 1<<20)
	var n [2 * binary.MaxVarintLen64]byte
	for _, r := range s.recs {
		k := binary.PutUvarint(n[:], uint64(len(r.key)))
		k += binary.PutUvarint(n[k:], uint64(len(r.enc)))
		w.Write(n[:k])
		w.WriteString(r.key)
		if _, err := w.Write(r.enc); err != nil {
			return fmt.Errorf("sort run %s: %w", f.Name(), err)
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("sort run %s: %w", f.Name(), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("sort run %s: %w", f.Name(), err)
	}
	clear(s.recs)
	s.recs, s.held = s.recs[:0], 0
	return nil
}

// Runs returns the number of runs spilled so far.
func (s *sorter) Runs() int { return len(s.runs) }

// Each calls fn with every row added, decoded, in order. It may be called
// once.
func (s *sorter) Each(fn func(row any) error) error {
	slices.SortFunc(s.recs, compareRecords)
	dec := beam.NewElementDecoder(s.t)
	decode := func(r record) error {
		row, err := dec.Decode(bytes.NewReader(r.enc))
		if err != nil {
			return fmt.Errorf("decode row: %w", err)
		}
		return fn(row)
	}
	if len(s.runs) == 0 {
		for _, r := range s.recs {
			if err := decode(r); err != nil {
				return err
			}
		}
		return nil
	}
	// Merge the runs and the rows still held.
	m := &merge{}
	for _, f := range s.runs {
		src := &runReader{r: bufio.NewReaderSize(f, 256<<10), name: f.Name()}
		if err := m.push(src); err != nil {
			return err
		}
	}
	if err := m.push(&memRun{recs: s.recs}); err != nil {
		return err
	}
	for m.Len() > 0 {
		top := m.heads[0]
		if err := decode(top.rec); err != nil {
			return err
		}
		next, ok, err := top.src.next()
		if err != nil {
			return err
		}
		if ok {
			m.heads[0].rec = next
			heap.Fix(m, 0)
		} else {
			heap.Pop(m)
		}
	}
	return nil
}

// Close removes the run files.
func (s *sorter) Close() {
	for _, f := range s.runs {
		f.Close()
		os.Remove(f.Name())
	}
	s.runs, s.recs = nil, nil
}

// source is a sorted run being merged.
type source interface {
	next() (record, bool, error)
}

type memRun struct {
	recs []record
	i    int
}

func (m *memRun) next() (record, bool, error) {
	if m.i == len(m.recs) {
		return record{}, false, nil
	}
	m.i++
	return m.recs[m.i-1], true, nil
}

type runReader struct {
	r    *bufio.Reader
	name string
}

func (r *runReader) next() (record, bool, error) {
	kn, err := binary.ReadUvarint(r.r)
	if err == io.EOF {
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, fmt.Errorf("sort run %s: %w", r.name, err)
	}
	en, err := binary.ReadUvarint(r.r)
	if err != nil {
		return record{}, false, fmt.Errorf("sort run %s: %w", r.name, err)
	}
	b := make([]byte, kn+en)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return record{}, false, fmt.Errorf("sort run %s: %w", r.name, err)
	}
	return record{key: string(b[:kn]), enc: b[kn:]}, true, nil
}

// merge is a min-heap of the runs' current records.
type merge struct {
	heads []head
}

type head struct {
	rec record
	src source
}

func (m *merge) push(src source) error {
	r, ok, err := src.next()
	if err != nil || !ok {
		return err
	}
	heap.Push(m, head{r, src})
	return nil
}

func (m *merge) Len() int           { return len(m.heads) }
func (m *merge) Less(i, j int) bool { return compareRecords(m.heads[i].rec, m.heads[j].rec) < 0 }
func (m *merge) Swap(i, j int)      { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *merge) Push(x any)         { m.heads = append(m.heads, x.(head)) }
func (m *merge) Pop() any {
	h := m.heads[len(m.heads)-1]
	m.heads = m.heads[:len(m.heads)-1]
	return h
}
