package formats

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"testing"
)

// A table read row by row in any order lays the centroids out by id,
// one short of a word names the missing word, and a row is refused for an
// id outside the table, a repeated id, a centroid of another length or a
// non-finite value.
func TestCentroidTable(t *testing.T) {
	tab := NewCentroidTable(3, 2)
	for _, w := range []Word{{WordID: 2, Centroid: []float32{5, 6}}, {WordID: 0, Centroid: []float32{1, 2}}} {
		if err := tab.Add(&w); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tab.Centroids(); err == nil || !strings.Contains(err.Error(), "word 1 missing") {
		t.Errorf("two of three words: error %v, want word 1 missing", err)
	}
	if err := tab.Add(&Word{WordID: 1, Centroid: []float32{3, 4}}); err != nil {
		t.Fatal(err)
	}
	if got, err := tab.Centroids(); err != nil || !slices.Equal(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("Centroids() = %v, %v; want [1 2 3 4 5 6]", got, err)
	}
	for _, tc := range []struct {
		name string
		word Word
		want string
	}{
		{"outside", Word{WordID: 2, Centroid: []float32{1, 2}}, "word id 2 outside"},
		{"twice", Word{WordID: 0, Centroid: []float32{1, 2}}, "word 0 twice"},
		{"length", Word{WordID: 1, Centroid: []float32{1}}, "1 values"},
		{"NaN", Word{WordID: 1, Centroid: []float32{1, float32(math.NaN())}}, "non-finite"},
	} {
		tab := NewCentroidTable(2, 2)
		if err := tab.Add(&Word{WordID: 0, Centroid: []float32{1, 2}}); err != nil {
			t.Fatal(err)
		}
		if err := tab.Add(&tc.word); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

// The content of centroids is the SHA-256 of their little-endian bits,
// over any length (here past the hash's 64 KB buffer), and changes with
// any bit of any value.
func TestCentroidsContent(t *testing.T) {
	if got, want := CentroidsContent([]float32{1, 2, 3}), "sha256:8e628779e6a74ee0b36991c10158f63cafec7d340ad4e075592502c8708524dd"; got != want {
		t.Errorf("CentroidsContent(1, 2, 3) = %s, want %s", got, want)
	}
	a := make([]float32, 40000)
	var raw []byte
	for i := range a {
		a[i] = float32(i) / 7
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(a[i]))
	}
	sum := sha256.Sum256(raw)
	if got, want := CentroidsContent(a), "sha256:"+hex.EncodeToString(sum[:]); got != want {
		t.Errorf("CentroidsContent of %d values = %s, want %s", len(a), got, want)
	}
	b := slices.Clone(a)
	b[len(b)-1] = math.Nextafter32(b[len(b)-1], 1e9)
	if CentroidsContent(a) == CentroidsContent(b) {
		t.Errorf("centroids one ulp apart have one content %s", CentroidsContent(a))
	}
}

// CentroidsHash over blocks of any size is CentroidsContent of the whole.
func TestCentroidsHashInBlocks(t *testing.T) {
	cent := make([]float32, 100_000) // more than the hash's 64 KiB buffer
	for i := range cent {
		cent[i] = float32(i) / 3
	}
	want := CentroidsContent(cent)
	for _, size := range []int{1, 128, 16_385, len(cent)} {
		h := NewCentroidsHash()
		for lo := 0; lo < len(cent); lo += size {
			h.Add(cent[lo:min(lo+size, len(cent))])
		}
		if got := h.Content(); got != want {
			t.Errorf("blocks of %d: %s, want %s", size, got, want)
		}
	}
	if CentroidsContent(cent[1:]) == want {
		t.Error("the content does not change with the values")
	}
}
