package synthetic

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := Parse("synthetic:500")
	if err != nil || s != (Spec{N: 500, Labels: 10, Descriptors: 200, Seed: 1}) {
		t.Errorf("Parse(synthetic:500) = %+v, %v", s, err)
	}
	s, err = Parse("synthetic:1000?labels=7&descriptors=50&seed=9")
	if err != nil || s != (Spec{N: 1000, Labels: 7, Descriptors: 50, Seed: 9}) {
		t.Errorf("Parse with settings = %+v, %v", s, err)
	}
	if back, err := Parse(s.String()); err != nil || back != s {
		t.Errorf("Parse(String()) = %+v, %v; want %+v", back, err, s)
	}
	for _, bad := range []string{"synthetic:x", "synthetic:0", "synthetic:5?labels=6", "synthetic:10?colour=1", "synthetic:10?labels=a", "images/"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

// TestFeaturesAreAFunctionOfTheId: an image's features depend on its id and
// the corpus only — not on the generator or on the order images are made.
func TestFeaturesAreAFunctionOfTheId(t *testing.T) {
	s := Spec{N: 50, Labels: 5, Descriptors: 40, Seed: 3}
	g1, _ := NewGenerator(s)
	g2, _ := NewGenerator(s)
	imgs := s.Images()
	a, err := g1.Features(imgs[7])
	if err != nil {
		t.Fatal(err)
	}
	g2.Features(imgs[3])
	b, _ := g2.Features(imgs[7])
	if !reflect.DeepEqual(a, b) {
		t.Error("the same image's features differ between generators")
	}
	c, _ := g1.Features(imgs[8])
	if reflect.DeepEqual(a.Descriptors, c.Descriptors) {
		t.Error("two images have the same descriptors")
	}
	other, _ := NewGenerator(Spec{N: 50, Labels: 5, Descriptors: 40, Seed: 4})
	if d, _ := other.Features(imgs[7]); reflect.DeepEqual(a.Descriptors, d.Descriptors) {
		t.Error("another seed gave the same descriptors")
	}
	for _, img := range imgs {
		f, err := g1.Features(img)
		if err != nil {
			t.Fatal(err)
		}
		n := len(f.Descriptors)
		if n < 20 || n > 60 || len(f.X) != n || len(f.Angle) != n || len(f.Descriptors[0]) != 128 || f.Label != img.Label {
			t.Fatalf("%s: %d descriptors (want 20..60), label %q", img.ImageID, n, f.Label)
		}
	}
	if _, err := g1.Features(Spec{N: 50, Labels: 9}.Image(8)); err == nil || !strings.Contains(err.Error(), "label") {
		t.Errorf("an image of another corpus: err = %v", err)
	}
}
