package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
)

// TestBottomKKeepsSmallestPriorities checks that the sample is the max
// descriptors of smallest priority whatever the order they arrive in.
func TestBottomKKeepsSmallestPriorities(t *testing.T) {
	const n, max = 1000, 37
	var want []byte
	for _, order := range []func(i int) int{func(i int) int { return i }, func(i int) int { return n - 1 - i }, func(i int) int { return (i * 7919) % n }} {
		b := &bottomK{max: max}
		for i := range n {
			j := order(i)
			d := bytes.Repeat([]byte{byte(j)}, dim)
			b.offer(mix64(uint64(j)), d)
		}
		b.trim()
		if len(b.prio) != max || len(b.desc) != max*dim {
			t.Fatalf("%d priorities, %d bytes; want %d descriptors", len(b.prio), len(b.desc), max)
		}
		for i := 1; i < max; i++ {
			if b.prio[i-1] > b.prio[i] {
				t.Fatalf("priorities out of order at %d", i)
			}
		}
		// No descriptor left out has a smaller priority than the largest kept.
		kept := 0
		for j := range n {
			if mix64(uint64(j)) <= b.prio[max-1] {
				kept++
			}
		}
		if kept != max {
			t.Errorf("%d descriptors at or below the largest kept priority, want %d", kept, max)
		}
		if want == nil {
			want = b.desc
		} else if !bytes.Equal(b.desc, want) {
			t.Errorf("the sample depends on the order of arrival")
		}
	}
}

// TestFeatureDescriptorsSplitsByPhoto checks that queries and words come
// from different photos and that the sample sizes are those asked for.
func TestFeatureDescriptorsSplitsByPhoto(t *testing.T) {
	dir := t.TempDir()
	const photos, per = 200, 30
	owner := map[string]string{} // descriptor → image id
	for f := range 2 {
		var rows []formats.Features
		for p := f * photos / 2; p < (f+1)*photos/2; p++ {
			r := formats.Features{ImageID: fmt.Sprintf("img%03d", p)}
			for i := range per {
				d := make([]byte, dim)
				d[0], d[1], d[2] = byte(p), byte(p>>8), byte(i)
				owner[string(d)] = r.ImageID
				r.Descriptors = append(r.Descriptors, d)
			}
			rows = append(rows, r)
		}
		if err := fileio.WriteFile(context.Background(), filepath.Join(dir, fmt.Sprintf("features-%05d-of-00002.parquet", f)), rows); err != nil {
			t.Fatal(err)
		}
	}
	q, w, n, total, err := featureDescriptors(filepath.Join(dir, "features-*.parquet"), 50, 1000, 3)
	if err != nil {
		t.Fatal(err)
	}
	if n != photos || total != photos*per {
		t.Errorf("read %d photos, %d descriptors; want %d, %d", n, total, photos, photos*per)
	}
	if len(q) != 50*dim || len(w) != 1000*dim {
		t.Fatalf("%d queries, %d words; want 50, 1000", len(q)/dim, len(w)/dim)
	}
	qImg := map[string]bool{}
	for i := range len(q) / dim {
		qImg[owner[string(q[i*dim:(i+1)*dim])]] = true
	}
	for i := range len(w) / dim {
		if id := owner[string(w[i*dim:(i+1)*dim])]; qImg[id] {
			t.Fatalf("word %d is from query photo %s", i, id)
		}
	}
	if len(qImg) < 2 {
		t.Errorf("queries from %d photos, want several", len(qImg))
	}
	q2, w2, _, _, err := featureDescriptors(filepath.Join(dir, "features-*.parquet"), 50, 1000, 3)
	if err != nil || !bytes.Equal(q, q2) || !bytes.Equal(w, w2) {
		t.Errorf("a second read differs (err %v)", err)
	}
}
