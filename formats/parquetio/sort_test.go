package parquetio

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
)

// The sorter gives the rows in key order, ties by encoding, whether they fit
// one run or spill to many, and leaves no run file behind.
func TestSorterRuns(t *testing.T) {
	var rows []formats.DeadLetter
	for i := range 500 {
		rows = append(rows, formats.DeadLetter{ImageID: fmt.Sprintf("img-%03d", (i*7919)%97), Stage: "decode", Reason: fmt.Sprint(i % 13)})
	}
	want := func() []formats.DeadLetter {
		defer func(old int) { SortRunBytes = old }(SortRunBytes)
		SortRunBytes = 1 << 30
		return sortAll(t, rows)
	}()
	for i := 1; i < len(want); i++ {
		if want[i-1].ImageID > want[i].ImageID {
			t.Fatalf("rows not in key order at %d: %q after %q", i, want[i].ImageID, want[i-1].ImageID)
		}
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer func(old int) { SortRunBytes = old }(SortRunBytes)
	for _, run := range []int{5000, 300, 1} {
		SortRunBytes = run
		if got := sortAll(t, rows); !slices.Equal(got, want) {
			t.Errorf("runs of %d bytes: rows in another order than in one run", run)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
			t.Errorf("runs of %d bytes: %d run files left behind", run, len(left))
		}
	}
}

func sortAll(t *testing.T, rows []formats.DeadLetter) []formats.DeadLetter {
	t.Helper()
	s := newSorter(reflect.TypeFor[formats.DeadLetter]())
	defer s.Close()
	for _, r := range rows {
		if err := s.Add(r.Key(), r); err != nil {
			t.Fatal(err)
		}
	}
	if SortRunBytes < 1<<20 && s.Runs() < 2 {
		t.Errorf("runs of %d bytes: %d runs spilled, want several", SortRunBytes, s.Runs())
	}
	var out []formats.DeadLetter
	if err := s.Each(func(row any) error { out = append(out, row.(formats.DeadLetter)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(rows) {
		t.Fatalf("%d rows out of %d in", len(out), len(rows))
	}
	return out
}
