package search

import (
	"context"
	"os"
	"slices"
	"testing"
)

// A run written before manifest.json held its settings (testdata/legacy-run:
// the shapes set with --vocab 50 --learners solis-ada --max_side 400, only
// the files a query reads) opens, and answers by id and by photo what the
// code that wrote it answered.
func TestLegacyRunAnswers(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, "../../testdata/legacy-run", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ix.set.describe.SIFT.MaxSide != 400 {
		t.Fatalf("max side %d, want the run's 400", ix.set.describe.SIFT.MaxSide)
	}
	// It recorded no bound on doubling: it doubled every image.
	if !ix.set.describe.SIFT.DoubleImage || ix.set.describe.SIFT.DoubleBelow != 0 {
		t.Fatalf("double %v below %d, want every image doubled", ix.set.describe.SIFT.DoubleImage, ix.set.describe.SIFT.DoubleBelow)
	}
	top := func(res Result, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range res.Hits {
			ids = append(ids, h.ImageID)
		}
		return ids
	}
	photo, err := os.ReadFile("../../testdata/shapes/images/class2/class2-03.jpg")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  []string
		want []string
	}{
		// query --run testdata/legacy-run --image_id class0-00 --k 3, and
		// with --learner tfidf, and --image …/class2-03.jpg, by that code.
		{"solis-ada by id", top(ix.SearchID("solis-ada", "class0-00", 3)), []string{"class4-00", "class0-05", "class0-10"}},
		{"tfidf by id", top(ix.SearchID(TFIDF, "class0-00", 3)), []string{"class0-05", "class0-10", "class3-09"}},
		{"solis-ada by photo", top(ix.SearchImage(ctx, "solis-ada", photo, 3)), []string{"class0-03", "class3-13", "class2-15"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
