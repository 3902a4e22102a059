package trainbeam

import (
	"fmt"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/split"
)

// TestGroupsBoundPostings: parts of real photos (1,700 postings an image)
// make as many groups as their postings need under GroupPostings, though
// their images fit one group; parts that record no postings (an older
// run's) are grouped by images alone.
func TestGroupsBoundPostings(t *testing.T) {
	for _, c := range []struct {
		name     string
		postings int64 // of each part
		want     int
	}{
		{"real photos", 1_700_000, 5}, // 17M postings in groups of at most 4M
		{"unknown postings", 0, 1},
	} {
		var parts []formats.Part
		for i := range 10 {
			parts = append(parts, formats.Part{Name: "bow", Part: i, Parts: 10, Path: fmt.Sprintf("bow-%d", i), Rows: 1000, Postings: c.postings})
		}
		f := &groupsFn{GroupImages: 200_000, GroupPostings: 4 << 20, Shards: 1}
		next := 0
		var got []Group
		f.ProcessElement(nil, func(p *formats.Part) bool {
			if next == len(parts) {
				return false
			}
			*p = parts[next]
			next++
			return true
		}, split.Cut{}, nil, func(g Group) { got = append(got, g) })
		if len(got) != c.want {
			t.Errorf("%s: %d groups, want %d", c.name, len(got), c.want)
		}
		paths := 0
		for _, g := range got {
			paths += len(g.Paths)
		}
		if paths != len(parts) {
			t.Errorf("%s: the groups hold %d parts, want %d", c.name, paths, len(parts))
		}
	}
}
