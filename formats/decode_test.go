package formats

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
)

// photo returns a features row of n keypoints.
func photo(i, n int) Features {
	f := Features{ImageID: fmt.Sprintf("img%04d", i), Label: "l", Width: 640, Height: 480}
	for k := range n {
		d := make([]byte, DescriptorSize)
		for j := range d {
			d[j] = byte(i + k + j)
		}
		f.Descriptors = append(f.Descriptors, d)
		f.X = append(f.X, float32(k))
		f.Y = append(f.Y, float32(i))
		f.Scale = append(f.Scale, 1)
		f.Angle = append(f.Angle, 0)
	}
	return f
}

// The general path reads a photo's features row, ~11,000 values at 2,200
// keypoints, one at a time, and rows of a few values decodeBatch at a
// time; either way every row comes back as written.
func TestBatchRows(t *testing.T) {
	for _, c := range []struct {
		keypoints, want int
	}{{2200, 1}, {1000, 3}, {10, decodeBatch}, {0, decodeBatch}} {
		rows := make([]Features, 7)
		for i := range rows {
			rows[i] = photo(i, c.keypoints)
		}
		var buf bytes.Buffer
		if err := Encode(context.Background(), &buf, rows); err != nil {
			t.Fatal(err)
		}
		f, err := openFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if got := batchRows(f); got != c.want {
			t.Errorf("%d keypoints a row: batches of %d rows, want %d", c.keypoints, got, c.want)
		}
		var back []Features
		if err := decodeRows(context.Background(), f, func(r *Features) error { back = append(back, *r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(back) != len(rows) {
			t.Fatalf("%d keypoints a row: %d rows back, want %d", c.keypoints, len(back), len(rows))
		}
		for i := range rows {
			if !slices.EqualFunc(back[i].Descriptors, rows[i].Descriptors, bytes.Equal) || !slices.Equal(back[i].X, rows[i].X) || back[i].ImageID != rows[i].ImageID {
				t.Errorf("%d keypoints a row: row %d read back differs", c.keypoints, i)
			}
		}
	}
}
