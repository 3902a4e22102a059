package bowline

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestDirectoryWithSameFileNames: two class folders holding files of the
// same names are twelve images of two labels. Ids used to be file names,
// so six images became dead letters, one label was left, no triplet was
// drawn, and every method scored mAP 1.
func TestDirectoryWithSameFileNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for class, folder := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(in, folder), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 6; i++ {
			src := filepath.Join(filepath.Dir(shapes), "images", fmt.Sprintf("class%d", class), fmt.Sprintf("class%d-%02d.jpg", class, i))
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, folder, fmt.Sprintf("img%d.jpg", i)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := testConfig(in, filepath.Join(dir, "out"))
	c.Vocab.K = 50
	r := run(t, c)
	if r.Counts.Images != 12 || r.Counts.Described != 12 || r.Counts.DeadLetters != 0 || r.Counts.Triplets == 0 {
		t.Errorf("counts = %+v, want 12 images described, no dead letter, some triplets", r.Counts)
	}
	// Of each folder's 6 images round(0.2·6) = 1 is held out.
	if m, ok := r.Method("solis-ada"); !ok || m.Split != "held-out" || m.Queries != 2 {
		t.Errorf("solis-ada row = %+v (present %v), want 2 held-out queries", m, ok)
	}
	if m, ok := r.MethodOn("solis-ada", "training"); !ok || m.Queries != 10 || m.MAP >= 1 {
		t.Errorf("solis-ada training row = %+v (present %v), want 10 queries and a mAP below 1", m, ok)
	}
}
