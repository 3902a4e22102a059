package formats

import (
	"bytes"
	"context"
	"testing"
)

// TestNumRowsPostings: the footer's count of word ids is the bags'
// postings, an empty bag counting one, and 0 for a file without word ids;
// the rows are counted beside them.
func TestNumRowsPostings(t *testing.T) {
	ctx := context.Background()
	var bows []BoW
	want := int64(0)
	for i := range 300 {
		n := i % 7 // some empty
		b := BoW{ImageID: string(rune('a' + i%26)), WordIDs: make([]uint32, n), Weights: make([]float32, n)}
		bows = append(bows, b)
		want += int64(max(n, 1))
	}
	var buf bytes.Buffer
	if err := Encode(ctx, &buf, bows); err != nil {
		t.Fatal(err)
	}
	rows, got, err := NumRows(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || got != want || rows != int64(len(bows)) {
		t.Errorf("NumRows = %d rows, %d postings, %v; want %d, %d", rows, got, err, len(bows), want)
	}
	buf.Reset()
	if err := Encode(ctx, &buf, []Features{{ImageID: "a", Descriptors: [][]byte{make([]byte, DescriptorSize)}}}); err != nil {
		t.Fatal(err)
	}
	if rows, got, err := NumRows(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil || got != 0 || rows != 1 {
		t.Errorf("NumRows of features = %d rows, %d postings, %v; want 1, 0", rows, got, err)
	}
}
