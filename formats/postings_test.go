package formats

import (
	"bytes"
	"context"
	"testing"
)

// TestNumPostings: the footer's count of word ids is the bags' postings,
// an empty bag counting one, and 0 for a file without word ids.
func TestNumPostings(t *testing.T) {
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
	got, err := NumPostings(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || got != want {
		t.Errorf("NumPostings = %d, %v; want %d", got, err, want)
	}
	buf.Reset()
	if err := Encode(ctx, &buf, []Features{{ImageID: "a", Descriptors: [][]byte{make([]byte, DescriptorSize)}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := NumPostings(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil || got != 0 {
		t.Errorf("NumPostings of features = %d, %v; want 0", got, err)
	}
}
