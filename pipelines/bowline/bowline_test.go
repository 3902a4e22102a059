package bowline

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/formats/gcstest"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/internal/shapestest"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/split"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

// shapes is the project's own labelled test set, made by cmd/mktestdata.
var shapes = shapestest.Labels

// testConfig is the default configuration scaled to the 96-image test set.
func testConfig(input, output string) Config {
	c := DefaultConfig()
	c.Input, c.Output = input, output
	c.Vocab.K = 200
	c.Learning.Learners = []string{"solis-ada"}
	return c
}

func run(t *testing.T, c Config) report.Report {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, c); err != nil {
		t.Fatal(err)
	}
	if err := ptest.Run(p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	js, err := fileio.ReadBytes(context.Background(), fileio.Join(c.Output, rundir.ReportName))
	if err != nil {
		t.Fatalf("no report: %v", err)
	}
	var r report.Report
	if err := json.Unmarshal(js, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// withCorruptImage writes a copy of the shapes labels CSV into dir, with
// absolute paths, plus one truncated JPEG labelled like the others.
func withCorruptImage(t *testing.T, dir string) string {
	t.Helper()
	rows := shapestest.Rows(t)
	good, err := os.ReadFile(rows[1][1])
	if err != nil {
		t.Fatal(err)
	}
	corrupt := filepath.Join(dir, "corrupt.jpg")
	if err := os.WriteFile(corrupt, good[:len(good)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	rows = append(rows, []string{"corrupt", corrupt, "class0", ""})
	return shapestest.WriteCSV(t, dir, "labels.csv", rows)
}

// TestEndToEnd runs the whole job on the shapes set plus one corrupt image:
// the corrupt image costs one dead letter and nothing else, every output is
// written whole, and the learned similarity beats TF-IDF.
func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	c := testConfig(withCorruptImage(t, dir), out)
	c.Learning = DefaultLearning()
	r := run(t, c)
	checkQueryScores(t, out, r)
	if len(r.Methods) != 2*(1+len(c.Learning.Learners)) {
		t.Errorf("report has %d rows, want TF-IDF and %d learners on held-out and on training queries", len(r.Methods), len(c.Learning.Learners))
	}
	// 6 labels of 16 described images: round(0.2·16) = 3 held out of each.
	if r.Split.QueryImages != 18 || r.Split.TrainImages != 78 || r.Split.QueryFraction != 0.2 {
		t.Errorf("split = %+v, want 18 held-out and 78 training images", r.Split)
	}

	if r.Counts.Images != 97 || r.Counts.DeadLetters != 1 || r.Counts.Described != 96 {
		t.Errorf("counts = %+v, want 97 images, 1 dead letter, 96 described", r.Counts)
	}
	dead, err := fileio.ReadAll[formats.DeadLetter](ctx, fileio.Join(out, "dead-letters-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 1 || dead[0].ImageID != "corrupt" || dead[0].Stage != "decode" || dead[0].Reason == "" {
		t.Errorf("dead letters = %+v, want one decode failure of corrupt", dead)
	}
	if d := r.DeadLetters; d.Total != 1 || len(d.Kinds) != 1 || len(d.First) != 1 || d.First[0] != dead[0] {
		t.Errorf("the report's dead letters = %+v, want the one of corrupt", d)
	}

	base, ok1 := r.Method(string(learners.BaselineTFIDF))
	ada, ok2 := r.Method("solis-ada")
	if !ok1 || !ok2 {
		t.Fatalf("report methods = %+v, want tfidf and solis-ada", r.Methods)
	}
	t.Logf("tfidf mAP %.4f; solis-ada mAP %.4f, sparsity %.3f, postings %d of %d",
		base.MAP, ada.MAP, ada.Sparsity, ada.IndexPostings, base.IndexPostings)
	if base.Split != "held-out" || base.Queries != 18 || ada.Queries != 18 {
		t.Errorf("headline: %s queries, %d and %d, want the 18 held-out images", base.Split, base.Queries, ada.Queries)
	}
	if tr, ok := r.MethodOn("solis-ada", "training"); !ok || tr.Queries != 78 {
		t.Errorf("training queries of solis-ada: %+v, want the 78 training images", tr)
	}
	if ada.Baseline != "tfidf" || !(ada.MAPLow <= ada.MAP && ada.MAP <= ada.MAPHigh) || !(ada.MAPDiffLow <= ada.MAPDiff && ada.MAPDiff <= ada.MAPDiffHigh) ||
		math.Abs(ada.MAPDiff-(ada.MAP-base.MAP)) > 1e-9 {
		t.Errorf("solis-ada: interval [%v, %v] around %v; against %q %+.4f in [%v, %v], mAPs differ by %+.4f",
			ada.MAPLow, ada.MAPHigh, ada.MAP, ada.Baseline, ada.MAPDiff, ada.MAPDiffLow, ada.MAPDiffHigh, ada.MAP-base.MAP)
	}
	noQueryTrained(t, out, c.Learning.Eval.Seed, c.Learning.Eval.QueryFraction)
	if ada.MAP <= base.MAP+0.05 {
		t.Errorf("solis-ada mAP %.4f does not beat tfidf's %.4f by 0.05", ada.MAP, base.MAP)
	}
	if ada.Sparsity <= 0 || ada.IndexPostings >= base.IndexPostings {
		t.Errorf("solis-ada sparsity %.3f with %d postings (tfidf %d): zero weights should shrink the index",
			ada.Sparsity, ada.IndexPostings, base.IndexPostings)
	}

	// The model file holds exactly the non-zero weights, and the index has
	// one posting per (non-zero-weight word, image holding it).
	model, err := fileio.ReadAll[formats.ModelWeight](ctx, fileio.Join(out, "model-solis-ada-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if want := int(math.Round(float64(r.Counts.Vocabulary) * (1 - ada.Sparsity))); len(model) != want {
		t.Errorf("model rows = %d, want %d non-zero weights", len(model), want)
	}
	postings, err := fileio.ReadAll[formats.Posting](ctx, fileio.Join(out, "index-solis-ada-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range postings {
		n += len(p.Images)
		if p.Weight == 0 {
			t.Errorf("word %d has weight 0 but a posting list", p.WordID)
		}
	}
	if int64(n) != ada.IndexPostings || len(postings) != len(model) {
		t.Errorf("index: %d postings over %d words, want %d over %d", n, len(postings), ada.IndexPostings, len(model))
	}

	for _, name := range []string{"images", "features", "codebook", "idf", "bow", "triplets", "report"} {
		files, err := fileio.Glob(ctx, fileio.Join(out, name+"-*-of-*.parquet"))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no files (%v)", name, err)
		}
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), fileio.TempPrefix) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	html, err := os.ReadFile(filepath.Join(out, rundir.ReportHTMLName))
	if err != nil || !bytes.Contains(html, []byte("solis-ada")) {
		t.Errorf("report.html missing or without the learner (%v)", err)
	}

	// Every stage reports its units, rows and time, and the rows agree with
	// the counts.
	learnersN := int64(len(c.Learning.Learners))
	want := map[string]struct{ units, in, out int64 }{
		"describe":     {-1, r.Counts.Images, r.Counts.Described},
		"vocabulary":   {1, -1, r.Counts.Vocabulary},
		"bow.quantise": {-1, r.Counts.Keypoints, r.Counts.Described},
		"bow.weight":   {-1, r.Counts.Described, r.Counts.Described},
		"triplets":     {-1, r.Split.TrainImages, r.Counts.Triplets},
		"train":        {learnersN, learnersN * r.Counts.Triplets, learnersN},
		"index":        {-1, learnersN * r.Counts.Described, -1},
		"evaluate":     {-1, (1 + learnersN) * 96, (1 + learnersN) * 96},
	}
	seen := map[string]bool{}
	for _, st := range r.Stages {
		w, ok := want[st.Name]
		if !ok {
			t.Errorf("unexpected stage %q", st.Name)
			continue
		}
		seen[st.Name] = true
		if (w.units >= 0 && st.Units != w.units) || st.Units < 1 || (w.in >= 0 && st.RowsIn != w.in) || (w.out >= 0 && st.RowsOut != w.out) {
			t.Errorf("stage %s: %d units, %d rows in, %d out; want %d, %d, %d (-1: any)", st.Name, st.Units, st.RowsIn, st.RowsOut, w.units, w.in, w.out)
		}
		if st.CPUSeconds < 0 || st.UnitWallSeconds < 0 || st.WallSeconds < 0 || st.EndMillis < st.StartMillis || st.StartMillis == 0 {
			t.Errorf("stage %s: times %+v", st.Name, st)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("stages %+v, want one of each of %v", r.Stages, want)
	}
	checkStagesMeasured(t, r)
	checkGeometry(t, out)
}

// checkStagesMeasured checks that the stages come in the job's order and
// that, on Prism in-process, the CPU of every unit was measured.
func checkStagesMeasured(t *testing.T, r report.Report) {
	t.Helper()
	var names []string
	var cpu float64
	for _, st := range r.Stages {
		names = append(names, st.Name)
		cpu += st.CPUSeconds
		if st.CPUUnits != st.Units {
			t.Errorf("stage %s: CPU of %d of %d units measured", st.Name, st.CPUUnits, st.Units)
		}
	}
	order := slices.DeleteFunc(slices.Clone(report.StageOrder), func(n string) bool { return !slices.Contains(names, n) })
	if !slices.Equal(names, order) {
		t.Errorf("stages in the order %v, want %v", names, order)
	}
	if !(cpu > 0) {
		t.Errorf("stages took %v CPU seconds", cpu)
	}
}

// noQueryTrained checks that no image the split holds out appears in any
// triplet of the run under out, and that every triplet image is described.
func noQueryTrained(t *testing.T, out string, seed uint64, fraction float64) {
	t.Helper()
	ctx := context.Background()
	bows, err := fileio.ReadAll[formats.BoW](ctx, fileio.Join(out, "bow-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var ids, labels []string
	for _, b := range bows {
		ids, labels = append(ids, b.ImageID), append(labels, b.Label)
	}
	held, err := split.Queries(ids, labels, seed, fraction)
	if err != nil {
		t.Fatal(err)
	}
	trips, err := fileio.ReadAll[formats.Triplet](ctx, fileio.Join(out, "triplets-*.parquet"))
	if err != nil || len(trips) == 0 {
		t.Fatalf("%d triplets (%v)", len(trips), err)
	}
	for _, tr := range trips {
		for _, id := range []string{tr.Query, tr.Positive, tr.Negative} {
			if held[id] {
				t.Fatalf("held-out image %s in triplet %+v", id, tr)
			}
		}
	}
}

// TestRerunIsIdentical runs the job twice and compares every Parquet file:
// the same input and seed give the same bytes. Compared with the first
// (--compare_to), the second pairs every query and finds no change; a
// third, of another seed, pairs only the queries both evaluated; and a
// copy of the first without its per-query files compares by the means
// alone.
func TestRerunIsIdentical(t *testing.T) {
	if testing.Short() {
		t.Skip("two pipeline runs")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	ra := run(t, testConfig(shapes, a))
	cb := testConfig(shapes, b)
	earlier, err := report.LoadEarlier(context.Background(), fileio.RunDir(a))
	if err != nil {
		t.Fatal(err)
	}
	cb.Earlier = earlier
	rb := run(t, cb)
	// Compared with the first run, every score is unchanged.
	for _, m := range rb.Methods {
		if d, p, ok := rb.Change(m); !ok || d != 0 || p != 0 {
			t.Errorf("%s %s: change since the first run %v %v (compared %v), want exactly 0", m.Method, m.Split, d, p, ok)
		}
	}
	checkPairedWithItself(t, rb)
	qa := checkQueryScores(t, a, ra)
	checkOldEarlier(t, a, b, rb)
	checkEarlierInOutput(t, b)
	cc := testConfig(shapes, filepath.Join(dir, "c"))
	cc.Vocab.Seed, cc.Triplets.Seed, cc.Learning.Eval.Seed = 2, 2, 2
	cc.Earlier = earlier
	rc := run(t, cc)
	checkPairedShared(t, rc, qa, checkQueryScores(t, cc.Output, rc))
	// Every Parquet file: report-*.parquet leaves the times out.
	for _, pattern := range []string{"images-*", "dead-letters-*", "features-*", "codebook-*", "idf-*", "bow-*", "triplets-*", "model-solis-ada-*", "index-solis-ada-*", "report-*", "query-scores-*"} {
		fa, _ := filepath.Glob(filepath.Join(a, pattern))
		fb, _ := filepath.Glob(filepath.Join(b, pattern))
		if len(fa) == 0 || len(fa) != len(fb) {
			t.Fatalf("%s: %d files vs %d", pattern, len(fa), len(fb))
		}
		for i := range fa {
			x, _ := os.ReadFile(fa[i])
			y, _ := os.ReadFile(fb[i])
			if !bytes.Equal(x, y) {
				t.Errorf("%s differs between runs", filepath.Base(fa[i]))
			}
		}
	}
}

// TestGCS runs the job with its input (labels CSV and images) and its
// output in a bucket on a GCS emulator.
func TestGCS(t *testing.T) {
	ctx := context.Background()
	gcstest.Start(t, "bowline-test")
	root := filepath.Dir(shapes)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		return fileio.WriteBytes(ctx, "gs://bowline-test/shapes/"+filepath.ToSlash(rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := "gs://bowline-test/run"
	c := testConfig("gs://bowline-test/shapes/labels.csv", out)
	c.Vocab.K = 100
	r := run(t, c)
	if _, ok := r.Method("solis-ada"); !ok || r.Counts.Images != 96 || r.Counts.DeadLetters != 0 {
		t.Fatalf("report = %+v", r)
	}
	bows, err := fileio.ReadAll[formats.BoW](ctx, out+"/bow-*.parquet")
	if err != nil || len(bows) != 96 {
		t.Fatalf("read %d bags of words from the bucket: %v", len(bows), err)
	}
}

// TestApproximateVocabulary runs the job with approximate k-means trained
// over several chunks and the forest quantiser.
func TestApproximateVocabulary(t *testing.T) {
	c := testConfig(shapes, filepath.Join(t.TempDir(), "out"))
	c.Vocab.Approx, c.Vocab.Chunks = true, 4
	r := run(t, c)
	base, _ := r.Method(string(learners.BaselineTFIDF))
	ada, ok := r.Method("solis-ada")
	if !ok || ada.Queries != 18 || ada.MAP <= base.MAP {
		t.Fatalf("with approximate k-means: tfidf %+v, solis-ada %+v", base, ada)
	}
	// The vocabulary's units are its chunks.
	for _, st := range r.Stages {
		if st.Name == "vocabulary" && st.Units != 4 {
			t.Errorf("vocabulary stage: %d units, want its 4 chunks", st.Units)
		}
	}
	checkStagesMeasured(t, r)
}

// TestDenseLearners runs the job with global features and learners of
// both kinds: every learner gets a report row on its input, compared with
// its baseline, the models of the dense ones are written and restore, and
// the online dense learners learn their training images.
func TestDenseLearners(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(shapes, out)
	c.Describe = c.Describe.WithGlobal()
	c.Learning.Learners = []string{"solis-ada", "lomdml", "oasis-full", "itq", "ssml"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r := run(t, c)
	checkQueryScores(t, out, r)
	inputs := map[string]string{string(learners.BaselineTFIDF): "bow", "solis-ada": "bow", string(learners.BaselineEuclidean): "global",
		"lomdml": "global", "oasis-full": "global", "itq": "global", "ssml": "global"}
	if len(r.Methods) != 2*len(inputs) {
		t.Errorf("report has %d rows, want %d methods on held-out and training queries: %+v", len(r.Methods), len(inputs), r.Methods)
	}
	for name, input := range inputs {
		m, ok := r.Method(name)
		if !ok || m.Input != input || m.Split != "held-out" || m.Queries != 18 {
			t.Errorf("%s: row %+v (found %v), want input %s and 18 held-out queries", name, m, ok, input)
		}
		if base := evaluate.BaselineOf(input); name != base && m.Baseline != base {
			t.Errorf("%s compared with %q, want %s", name, m.Baseline, base)
		}
	}
	// The online dense learners learn: on the images they trained on they
	// beat the Euclidean baseline clearly. On the 18 held-out shapes they
	// do not, by much or at all (logged): 78 training images are too few for
	// 5 modalities' metrics.
	base, _ := r.MethodOn(string(learners.BaselineEuclidean), "training")
	held, _ := r.Method(string(learners.BaselineEuclidean))
	for _, name := range []string{"lomdml", "oasis-full"} {
		m, _ := r.MethodOn(name, "training")
		h, _ := r.Method(name)
		t.Logf("%s: training-query mAP %.4f (Euclidean %.4f), held-out %.4f (Euclidean %.4f)", name, m.MAP, base.MAP, h.MAP, held.MAP)
		if m.MAP < base.MAP+0.05 {
			t.Errorf("%s training-query mAP %.4f, Euclidean %.4f: want at least 0.05 better", name, m.MAP, base.MAP)
		}
	}
	tensors, err := fileio.ReadAll[formats.ModelTensor](ctx, fileio.Join(out, "model-lomdml-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// LOMDML's state is θ and one W_i per modality.
	if len(tensors) != 6 || tensors[0].Index != 0 || len(tensors[0].Values) != 5 || len(tensors[0].Dims) != 5 {
		t.Fatalf("lomdml model rows: %d, first %+v", len(tensors), tensors[0])
	}
	st := learners.State{Learner: "lomdml", Steps: tensors[0].Steps}
	for _, row := range tensors {
		st.Vectors = append(st.Vectors, row.Values)
	}
	m, err := learners.NewDense("lomdml", global.Dims, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetState(st); err != nil {
		t.Errorf("the written lomdml model does not restore: %v", err)
	}

	c.Describe.Global = false
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--global") {
		t.Errorf("a dense learner without global features: error %v, want one naming --global", err)
	}
}

// TestSweep trains SOLIS-ADA once per λ of a sweep beside the learners
// named: each value is a learner of its own in the report, with its model
// and index, trained once; a larger λ zeroes more weights.
func TestSweep(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(shapes, out)
	c.Learning.Sweep = Sweep{Learner: "solis-ada", Param: "lambda", Values: []float64{1e-6, 1e-4}}
	r := run(t, c)
	if r.Sweep == nil || !slices.Equal(r.Sweep.Methods, []string{"solis-ada-lambda-1e-06", "solis-ada-lambda-0.0001"}) {
		t.Fatalf("report sweep %+v", r.Sweep)
	}
	var sparsity []float64
	for _, name := range r.Sweep.Methods {
		m, ok := r.Method(name)
		if !ok || m.Queries != 18 || m.Baseline != "tfidf" {
			t.Fatalf("%s: row %+v (found %v)", name, m, ok)
		}
		sparsity = append(sparsity, m.Sparsity)
		for _, f := range []string{"model-" + name, "index-" + name} {
			if files, _ := fileio.Glob(ctx, fileio.Join(out, f+"-*.parquet")); len(files) == 0 {
				t.Errorf("no %s files", f)
			}
		}
		if p := r.Params[name]["lambda"]; p != r.Sweep.Values[slices.Index(r.Sweep.Methods, name)] {
			t.Errorf("%s trained with λ %v", name, p)
		}
	}
	if !(sparsity[0] < sparsity[1]) {
		t.Errorf("sparsity %v: want more zero weights at the larger λ", sparsity)
	}
	for _, st := range r.Stages {
		if st.Name == "train" && st.Units != 3 {
			t.Errorf("train stage: %d models, want 3 (solis-ada and the two sweep values, each once)", st.Units)
		}
	}
	html, err := os.ReadFile(filepath.Join(out, rundir.ReportHTMLName))
	if err != nil || !bytes.Contains(html, []byte("mAP against sparsity")) {
		t.Errorf("report.html lacks the sweep's chart (%v)", err)
	}
}
