package bowline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/gcstest"
)

// TestCheckInputLabels: a labels CSV the job could not learn from is
// refused before the job, saying why; rows the job will refuse (wrong
// width, no path) are counted in warnings and do not stop it. A gs://
// CSV is read through the job's own reader (fileio), checked alike.
func TestCheckInputLabels(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "preflight-test")
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		err        string   // "" for none
		warnings   []string // substrings, one a warning
	}{
		{"one-label.csv", "image_id,path,label\na,a.jpg,cat\nb,b.jpg,cat\nc,c.jpg,cat\n", `no training triplets: the 3 labelled images all carry one label ("cat")`, nil},
		{"header.csv", "image_id,path,label\n", "has no rows below its header", nil},
		{"empty.csv", "", "is empty: it has no header row (image_id,path,label), nor any row", nil},
		{"blank.csv", "\n\n", "is empty: it has no header row (image_id,path,label), nor any row", nil},
		{"no-paths.csv", "image_id,path,label\na,,cat\nb,,dog\n", "has no usable row: all 2 would be refused, the first because labels line 2: empty path", nil},
		{"singletons.csv", "image_id,path,label\na,a.jpg,cat\nb,b.jpg,dog\nc,c.jpg,\n", "none of the 2 labels has 2 or more images", nil},
		{"unlabelled.csv", "image_id,path,label\na,a.jpg,\nb,b.jpg,\n", "no labelled images to learn from", nil},
		{"wide.csv", "image_id,path,label,tags\na,a.jpg,cat,\nParis_Louvre_Courtyard,_Looking_West,x,_Looking_West.jpg,dog,\nb,b.jpg,cat,\nc,c.jpg,dog,\nd,,dog,\nx,y,dog\nd,d.jpg,dog,\n", "",
			[]string{"has 2 rows whose field count differs from its header's, the first: labels line 3: 6 fields, header has 4", "has 1 row without a path"}},
	} {
		local := filepath.Join(dir, c.name)
		if err := os.WriteFile(local, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		remote := "gs://preflight-test/" + c.name
		if err := fileio.WriteBytes(ctx, remote, []byte(c.body)); err != nil {
			t.Fatal(err)
		}
		for _, input := range []string{local, remote} {
			cfg := DefaultConfig()
			cfg.Input = input
			warnings, err := CheckInput(ctx, cfg)
			switch {
			case c.err == "" && err != nil:
				t.Errorf("%s: %v", input, err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), input)):
				t.Errorf("%s: error %v, want one naming the CSV and saying %q", input, err, c.err)
			}
			if len(warnings) != len(c.warnings) {
				t.Errorf("%s: warnings %q, want %d", input, warnings, len(c.warnings))
				continue
			}
			for i, w := range c.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("%s: warning %q, want it to say %q", input, warnings[i], w)
				}
			}
		}
	}
}
