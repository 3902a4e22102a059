package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bowline/bowline/transforms/ingest"
)

// eth80 is ETH-80's labels CSV beside the checkout, where CI has it.
const eth80 = "../../../shared/data/eth80/labels.csv"

// sourceCSV writes a labels CSV of the first n ETH-80 photos of each of a
// few objects (absolute paths), so that a test reads a few photos only.
func sourceCSV(t testing.TB, perObject int, objects ...string) string {
	t.Helper()
	f, err := os.Open(eth80)
	if err != nil {
		t.Skipf("ETH-80 is not beside the checkout: %v", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	base, err := filepath.Abs(filepath.Dir(eth80))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	w.Write(rows[0])
	taken := map[string]int{}
	for _, r := range rows[1:] {
		for _, o := range objects {
			if r[2] == o && taken[o] < perObject {
				taken[o]++
				w.Write([]string{r[0], filepath.Join(base, r[1]), r[2], r[3]})
			}
		}
	}
	w.Flush()
	p := filepath.Join(t.TempDir(), "labels.csv")
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func testConfig(t testing.TB, source string, n, workers int) config {
	t.Helper()
	c, err := parseFlags([]string{"--source", source, "--out", t.TempDir(), "--n", fmt.Sprint(n),
		"--workers", fmt.Sprint(workers), "--two_objects", "0.5"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// files maps every file under dir (relative path) to its bytes, except
// corpus.json's directory-independent content is compared as well.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDeterministic: the same settings give the same bytes whatever the
// number of workers, and any image made alone equals the corpus's copy.
func TestDeterministic(t *testing.T) {
	src := sourceCSV(t, 3, "cow1", "cup2", "car3")
	const n = 8
	one, three := testConfig(t, src, n, 1), testConfig(t, src, n, 3)
	for _, c := range []config{one, three} {
		if err := run(context.Background(), c, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	a, b := files(t, one.Out), files(t, three.Out)
	if len(a) != n+2 {
		t.Fatalf("%d files, want %d images, labels.csv and corpus.json", len(a), n)
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between --workers 1 and 3", name)
		}
	}
	sources, digest, err := readSources(src)
	if err != nil {
		t.Fatal(err)
	}
	s := one.Settings
	s.SourceDigest = digest
	const i = 5
	alone, err := Render(s, PlanImage(s, Order(s.Seed, len(sources)), sources, i),
		func(j int) (image.Image, error) { return loadSource(sources, j) })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(alone, a[imagePath(i)]) {
		t.Errorf("image %d made alone differs from the corpus's", i)
	}
}

// TestSameSourceDiffers: images of one source photo are other photos of
// it, not copies: their pixels differ by far more than JPEG noise.
func TestSameSourceDiffers(t *testing.T) {
	src := sourceCSV(t, 1, "horse2") // one source: every image uses it
	c := testConfig(t, src, 4, 2)
	if err := run(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	var imgs []*image.YCbCr
	for i := range 4 {
		data, err := os.ReadFile(filepath.Join(c.Out, imagePath(i)))
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := ingest.Decode(data, 1<<24)
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 480 {
			t.Fatalf("image %d is %v, want 640×480", i, b)
		}
		imgs = append(imgs, img.(*image.YCbCr))
	}
	for i := range imgs {
		for j := i + 1; j < len(imgs); j++ {
			var sum float64
			for k := range imgs[i].Y {
				sum += math.Abs(float64(imgs[i].Y[k]) - float64(imgs[j].Y[k]))
			}
			if mad := sum / float64(len(imgs[i].Y)); mad < 10 {
				t.Errorf("images %d and %d of the same source: mean |ΔY| %.1f, want ≥ 10", i, j, mad)
			}
		}
	}
}

// TestLabels: the labels CSV reads with the job's own reader under each
// of its label columns, names every image once, and its labels are the
// sources'.
func TestLabels(t *testing.T) {
	src := sourceCSV(t, 2, "apple1", "dog3", "pear4")
	c := testConfig(t, src, 12, 2)
	if err := run(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	sources, _, err := readSources(src)
	if err != nil {
		t.Fatal(err)
	}
	category := map[string]string{}
	for _, s := range sources {
		category[s.Object] = s.Category
	}
	data, err := os.ReadFile(filepath.Join(c.Out, "labels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	byColumn := map[string][]string{}
	for _, col := range []string{"label", "object", "category"} {
		cols := ingest.DefaultColumns()
		cols.Label = col
		imgs, dead, err := ingest.ParseLabels(bytes.NewReader(data), c.Out, cols)
		if err != nil || len(dead) > 0 || len(imgs) != c.N {
			t.Fatalf("--label_column %s: %d images, %d dead letters, %v; want %d images", col, len(imgs), len(dead), err, c.N)
		}
		for _, im := range imgs {
			if _, err := os.Stat(im.URI); err != nil {
				t.Errorf("image %s: %v", im.ImageID, err)
			}
			byColumn[col] = append(byColumn[col], im.Label)
		}
	}
	for i, obj := range byColumn["object"] {
		if cat := byColumn["category"][i]; category[obj] != cat || byColumn["label"][i] != cat {
			t.Errorf("row %d: object %s, category %s, label %s; want %s's category %s", i, obj, cat, byColumn["label"][i], obj, category[obj])
		}
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	seconds := 0
	for _, r := range rows[1:] {
		if r[6] != "" {
			seconds++
			if r[6] == r[3] || category[r[6]] != r[7] {
				t.Errorf("row %v: the second object must be another object, with its category", r)
			}
		}
	}
	if seconds == 0 || seconds == c.N {
		t.Errorf("%d of %d images have a second object at --two_objects 0.5", seconds, c.N)
	}
}

// TestResume: a re-run makes only the missing images, the same bytes as
// before, and removes a killed run's temporary files; a directory made
// with another seed is refused.
func TestResume(t *testing.T) {
	src := sourceCSV(t, 2, "tomato1", "cup1")
	c := testConfig(t, src, 6, 2)
	if err := run(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	before := files(t, c.Out)
	gone := filepath.Join(c.Out, imagePath(3))
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	temp := filepath.Join(filepath.Dir(gone), tempPrefix+"p0000004.jpg-123")
	if err := os.WriteFile(temp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := run(context.Background(), c, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "(1 made, 5 already there)") {
		t.Errorf("re-run log %q, want 1 made and 5 already there", log.String())
	}
	after := files(t, c.Out)
	if len(after) != len(before) {
		t.Errorf("%d files after the re-run, want %d (temporary file left?)", len(after), len(before))
	}
	for name, data := range before {
		if !bytes.Equal(data, after[name]) {
			t.Errorf("%s changed on the re-run", name)
		}
	}
	// A larger --n extends the corpus: the images there are kept and the
	// labels CSV's first rows are the same.
	more := c
	more.N += 2
	log.Reset()
	if err := run(context.Background(), more, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "(2 made, 6 already there)") {
		t.Errorf("extending run's log %q, want 2 made and 6 already there", log.String())
	}
	labels, err := os.ReadFile(filepath.Join(c.Out, "labels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(labels, before["labels.csv"]) || bytes.Count(labels, []byte("\n")) != more.N+1 {
		t.Errorf("extended labels.csv does not start with the old one or has not %d rows:\n%s", more.N, labels)
	}
	other := c
	other.Settings.Seed++
	if err := run(context.Background(), other, io.Discard); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("a re-run with another seed into the same --out: %v, want refused", err)
	}
}

// TestProgress: a slow run prints progress lines while it works.
func TestProgress(t *testing.T) {
	src := sourceCSV(t, 1, "car1")
	c := testConfig(t, src, 4, 1)
	c.progress = time.Millisecond
	var log strings.Builder
	if err := run(context.Background(), c, &log); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(log.String(), "images/s"); got < 2 {
		t.Errorf("%d progress lines, want one while it ran and one at the end:\n%s", got, log.String())
	}
}

func TestHomography(t *testing.T) {
	from := [4][2]float64{{0, 0}, {10, 0}, {10, 20}, {0, 20}}
	to := [4][2]float64{{3, 1}, {40, -2}, {35, 50}, {-4, 30}}
	h, ok := homography(from, to)
	if !ok {
		t.Fatal("not solved")
	}
	for k, p := range from {
		w := h[2][0]*p[0] + h[2][1]*p[1] + h[2][2]
		u := (h[0][0]*p[0] + h[0][1]*p[1] + h[0][2]) / w
		v := (h[1][0]*p[0] + h[1][1]*p[1] + h[1][2]) / w
		if math.Abs(u-to[k][0]) > 1e-9 || math.Abs(v-to[k][1]) > 1e-9 {
			t.Errorf("corner %d maps to (%g, %g), want %v", k, u, v, to[k])
		}
	}
	if _, ok := homography(from, [4][2]float64{{0, 0}, {1, 1}, {2, 2}, {3, 3}}); ok {
		t.Error("a degenerate quadrilateral was solved")
	}
}

func TestParseFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--out", "x"},
		{"--source", "s"},
		{"--source", "s", "--out", "x", "--quality", "95-60"},
		{"--source", "s", "--out", "x", "--quality", "0"},
		{"--source", "s", "--out", "x", "--n", "0"},
		{"--source", "s", "--out", "gs://b/x"},
		{"--source", "s", "--out", "x", "--two_objects", "1.5"},
		{"--source", "s", "--out", "x", "--size", "4000"},
		{"--source", "s", "--out", "x", "--size", "63x480"},
		{"--source", "s", "--out", "x", "--size", "640x9000"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	c, err := parseFlags([]string{"--source", "s", "--out", "x", "--quality", "70-80"})
	if err != nil || c.Settings.QualityMin != 70 || c.Settings.QualityMax != 80 || c.Workers != runtime.GOMAXPROCS(0) ||
		c.Settings.Width != 640 || c.Settings.Height != 480 {
		t.Errorf("got %+v, %v", c, err)
	}
	c, err = parseFlags([]string{"--source", "s", "--out", "x", "--size", "4000x3000"})
	if err != nil || c.Settings.Width != 4000 || c.Settings.Height != 3000 {
		t.Errorf("--size 4000x3000: got %+v, %v", c.Settings, err)
	}
}

// TestSize: --size renders images of that size, 4:2:0 as a camera's,
// with the --quality range's quantisation.
func TestSize(t *testing.T) {
	src := sourceCSV(t, 1, "cow1", "cup2")
	c, err := parseFlags([]string{"--source", src, "--out", t.TempDir(), "--n", "2", "--workers", "1",
		"--size", "1030x770", "--quality", "90-95"})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	for i := range c.N {
		data, err := os.ReadFile(filepath.Join(c.Out, imagePath(i)))
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 1030 || b.Dy() != 770 {
			t.Errorf("image %d is %v, want 1030x770", i, b)
		}
		if y, ok := img.(*image.YCbCr); !ok || y.SubsampleRatio != image.YCbCrSubsampleRatio420 {
			t.Errorf("image %d: %T, want 4:2:0 YCbCr", i, img)
		}
		// image/jpeg's luma DC step at quality q is (16·(200−2q)+50)/100:
		// 3 at 90, 2 at 91–95.
		if dc := lumaDCStep(data); dc < 2 || dc > 3 {
			t.Errorf("image %d: luma DC quantisation step %d, want 2–3 (quality 90–95)", i, dc)
		}
	}
}

// lumaDCStep returns the first quantisation table's DC entry (0 if none).
func lumaDCStep(data []byte) int {
	i := bytes.Index(data, []byte{0xff, 0xdb})
	if i < 0 || i+5 >= len(data) {
		return 0
	}
	return int(data[i+5]) // length (2 bytes), precision/id, then entry 0
}

// BenchmarkRender makes one image per iteration at each size, sources
// decoded included: go test ./cmd/mkcorpus -run '^$' -bench Render -cpu 1.
func BenchmarkRender(b *testing.B) {
	src := sourceCSV(b, 4, "cow2", "cup3", "apple4", "horse5")
	sources, digest, err := readSources(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range [][2]int{{640, 480}, {1024, 768}, {4000, 3000}} {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			c := testConfig(b, src, 1, 1)
			s := c.Settings
			s.SourceDigest = digest
			s.Width, s.Height = size[0], size[1]
			order := Order(s.Seed, len(sources))
			var bytes int
			b.ResetTimer()
			for i := range b.N {
				data, err := Render(s, PlanImage(s, order, sources, i), func(j int) (image.Image, error) { return loadSource(sources, j) })
				if err != nil {
					b.Fatal(err)
				}
				bytes += len(data)
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "bytes/image")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
