package formats

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func TestShardName(t *testing.T) {
	if got, want := ShardName("bow", 1, 4), "bow-00001-of-00004.parquet"; got != want {
		t.Errorf("ShardName = %q, want %q", got, want)
	}
	if got, want := ShardName("x", 123456, 200000), "x-123456-of-200000.parquet"; got != want {
		t.Errorf("ShardName = %q, want %q", got, want)
	}
}

func TestKeys(t *testing.T) {
	if got, want := (Word{WordID: 42}).Key(), "0000000042"; got != want {
		t.Errorf("Word.Key = %q, want %q", got, want)
	}
	if got, want := (Posting{Learner: "l", WordID: 7}).Key(), "l/0000000007"; got != want {
		t.Errorf("Posting.Key = %q, want %q", got, want)
	}
	if got, want := (ReportRow{Method: "m", Relevance: "label"}).Key(), "m/label"; got != want {
		t.Errorf("ReportRow.Key = %q, want %q", got, want)
	}
	// Triplet keys sort like their Seq, negative ones included.
	seqs := []int64{-1 << 63, -100, -1, 0, 1, 9, 10, 1 << 40, 1<<63 - 1}
	var keys []string
	for _, s := range seqs {
		keys = append(keys, Triplet{Seq: s}.Key())
	}
	if !slices.IsSorted(keys) {
		t.Errorf("Triplet keys are not in Seq order: %q", keys)
	}
	// Word keys sort like their id.
	if !(Word{WordID: 9}.Key() < Word{WordID: 10}.Key()) {
		t.Error("Word keys are not in id order")
	}
	for _, k := range []string{"a", "b", "ünï", ""} {
		if s := ShardOf(k, 3); s < 0 || s >= 3 || s != ShardOf(k, 3) {
			t.Errorf("ShardOf(%q, 3) = %d", k, s)
		}
	}
}

// TestEncodeDecode round-trips rows through the codec in memory: the
// generic and reflective encoders write the same bytes, both decoders give
// the rows back (nil lists as empty ones), and an error from the caller's
// function comes back as it is.
func TestEncodeDecode(t *testing.T) {
	ctx := context.Background()
	rows := []BoW{
		{ImageID: "a", Label: "x", WordIDs: []uint32{1, 7}, Weights: []float32{0.6, 0.8}},
		{ImageID: "b"},
	}
	var gen, refl bytes.Buffer
	if err := Encode(ctx, &gen, rows); err != nil {
		t.Fatal(err)
	}
	if err := EncodeOf(ctx, &refl, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gen.Bytes(), refl.Bytes()) {
		t.Error("Encode and EncodeOf wrote different bytes")
	}
	r := bytes.NewReader(gen.Bytes())
	if n, _, err := NumRows(r, r.Size()); err != nil || n != 2 {
		t.Errorf("NumRows = %d, %v; want 2", n, err)
	}
	want := []BoW{rows[0], {ImageID: "b", WordIDs: []uint32{}, Weights: []float32{}}}
	var got []BoW
	if err := Decode(ctx, r, r.Size(), func(b *BoW) error { got = append(got, *b); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode = %+v, want %+v", got, want)
	}
	var gotOf []BoW
	err := DecodeOf(ctx, r, r.Size(), reflect.TypeFor[BoW](), func(row any) error { gotOf = append(gotOf, row.(BoW)); return nil })
	if err != nil || !reflect.DeepEqual(gotOf, want) {
		t.Errorf("DecodeOf = %+v, %v; want %+v", gotOf, err, want)
	}
	stop := errors.New("stop")
	if err := Decode(ctx, r, r.Size(), func(*BoW) error { return stop }); err != stop {
		t.Errorf("Decode returned %v, want the callback's error as it is", err)
	}
	if err := EncodeOf(ctx, &refl, BoW{}); err == nil {
		t.Error("EncodeOf of a non-slice succeeded")
	}
}

// TestPartsFrom: an incremental run's part count is the previous one's
// times a power of two, so that its part q draws its images from the
// previous run's part q mod prev only.
func TestPartsFrom(t *testing.T) {
	for _, c := range []struct {
		prev     int
		n        int64
		per, out int
	}{{3, 2500, 1000, 3}, {3, 3001, 1000, 6}, {3, 100, 1000, 3}, {1, 5000, 1000, 8}, {4, 4000, 1000, 4}} {
		if got := PartsFrom(c.prev, c.n, c.per); got != c.out {
			t.Errorf("PartsFrom(%d, %d, %d) = %d, want %d", c.prev, c.n, c.per, got, c.out)
		}
	}
	for i := range 1000 {
		id := fmt.Sprintf("img-%d", i)
		if q := ShardOf(id, 12); q%3 != ShardOf(id, 3) {
			t.Fatalf("%s: part %d of 12 but %d of 3", id, q, ShardOf(id, 3))
		}
	}
}

// A features file decodes as FeaturesHead: each row's image and one x per
// descriptor, read from those columns alone.
func TestFeaturesHead(t *testing.T) {
	ctx := context.Background()
	d := bytes.Repeat([]byte{7}, DescriptorSize)
	rows := []Features{
		{ImageID: "a", Label: "x", X: []float32{1, 2, 3}, Y: []float32{4, 5, 6}, Scale: []float32{1, 1, 1}, Angle: []float32{0, 0, 0}, Descriptors: [][]byte{d, d, d}},
		{ImageID: "b"},
		{ImageID: "c", X: []float32{9}, Y: []float32{9}, Scale: []float32{2}, Angle: []float32{1}, Descriptors: [][]byte{d}},
	}
	var buf bytes.Buffer
	if err := Encode(ctx, &buf, rows); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	var got []FeaturesHead
	if err := Decode(ctx, r, r.Size(), func(k *FeaturesHead) error { got = append(got, *k); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []FeaturesHead{{ImageID: "a", X: []float32{1, 2, 3}}, {ImageID: "b", X: []float32{}}, {ImageID: "c", X: []float32{9}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Decode = %+v, want %+v", got, want)
	}
}
