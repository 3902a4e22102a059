package bowline

import (
	"bytes"
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/evaluate/evaluatebeam"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/tune"
)

// TestTuneTargetSparsity runs the job on the shapes test set with a
// sparsity target: SOLIS-ADA's λ is chosen from the grid, its reported
// model has at least the target's share of zero weights, the report
// names the choice, and the same seed chooses the same and writes the
// same model twice.
func TestTuneTargetSparsity(t *testing.T) {
	dir := t.TempDir()
	config := func(out string) Config {
		c := testConfig(shapes, out)
		c.Learning.Tune = tune.Options{Share: 0.25, TargetSparsity: 0.9}
		return c
	}
	a := filepath.Join(dir, "a")
	r := run(t, config(a))
	if r.Tuning == nil || len(r.Tuning.Learners) != 1 {
		t.Fatalf("report tuning %+v, want solis-ada's", r.Tuning)
	}
	tl := r.Tuning.Learners[0]
	if tl.Learner != "solis-ada" || len(tl.Points) != len(tune.SparsityGrid) || !reflect.DeepEqual(tl.Axes, []string{"lambda"}) {
		t.Fatalf("tuned %s over %v, %d points: want solis-ada's λ over the %d of tune.SparsityGrid", tl.Learner, tl.Axes, len(tl.Points), len(tune.SparsityGrid))
	}
	chosen := tl.ChosenPoint()
	if !tl.TargetMet || chosen.Sparsity < 0.9 {
		t.Fatalf("target 90%% zeros: met %v, chosen %+v (%s)", tl.TargetMet, chosen, tl.Why)
	}
	for _, p := range tl.Points {
		if p.Sparsity >= 0.9 && p.ValidationMAP > chosen.ValidationMAP {
			t.Errorf("%s reaches the target with validation mAP %.4f above the chosen %.4f", p.Method, p.ValidationMAP, chosen.ValidationMAP)
		}
	}
	m, ok := r.MethodOn("solis-ada", "held-out")
	if !ok || m.Sparsity < 0.9 || m.Sparsity != chosen.Sparsity {
		t.Errorf("held-out row %+v: want the chosen model, sparsity %v ≥ 0.9", m, chosen.Sparsity)
	}
	if got := r.Params["solis-ada"]["lambda"]; got != chosen.Params["lambda"] {
		t.Errorf("report's hyper-parameters: λ %v, chosen %v", got, chosen.Params["lambda"])
	}
	// 96 images, 18 held out: the validation set is a quarter of the 78
	// training images' labels, and searches those 78 only.
	if r.Tuning.TrainImages != 78 || r.Tuning.ValidationImages == 0 || r.Tuning.Queries != r.Tuning.ValidationImages {
		t.Errorf("validation: %d queries of %d images searching %d, want some searching the 78 training images",
			r.Tuning.Queries, r.Tuning.ValidationImages, r.Tuning.TrainImages)
	}
	if r.Tuning.Baseline != "tfidf" || !(r.Tuning.BaselineMAP > 0 && r.Tuning.BaselineMAP < 1) {
		t.Errorf("validation baseline %q mAP %v, want TF-IDF's", r.Tuning.Baseline, r.Tuning.BaselineMAP)
	}
	// One validation shard a grid point and TF-IDF's: every validation
	// is a unit of the stage "tune", whose time the report accounts for.
	for _, st := range r.Stages {
		if st.Name == "tune" && st.Units != int64(len(tune.SparsityGrid)+1) {
			t.Errorf("stage tune: %d units, want %d (the grid's and TF-IDF's validations)", st.Units, len(tune.SparsityGrid)+1)
		}
	}
	noQueryTrained(t, a, 1, 0.2)
	checkValidationSet(t, a, 1, 0.2, 0.25)

	b := filepath.Join(dir, "b")
	rb := run(t, config(b))
	if !reflect.DeepEqual(r.Tuning, rb.Tuning) {
		t.Errorf("tuning differs between runs of one seed:\n%+v\n%+v", r.Tuning, rb.Tuning)
	}
	for _, f := range []string{"model-solis-ada-00000-of-00001.parquet", "state-solis-ada-00000-of-00001.parquet", "triplets-00000-of-00001.parquet"} {
		x, errA := os.ReadFile(filepath.Join(a, f))
		y, errB := os.ReadFile(filepath.Join(b, f))
		if errA != nil || errB != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between runs of one seed (%v, %v)", f, errA, errB)
		}
	}
}

// checkValidationSet reads the bags of words of the run under out into
// the validation set as the job does (tune.Part, tune.Merge), with the split of
// fraction and its nested tuning split of share, and checks that no
// held-out image is a validation query or among the images searched,
// and that every image of the nested split but no held-out one is a
// query. Capped at half the validation images, the set keeps each label's
// apportioned share (evaluate.Apportion) however the parts split it.
func checkValidationSet(t *testing.T, out string, seed uint64, fraction, share float64) {
	t.Helper()
	ctx := context.Background()
	bows, err := fileio.ReadAll[formats.BoW](ctx, fileio.Join(out, "bow-*.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var ids, labels []string
	counts := map[string]int{}
	for _, b := range bows {
		ids, labels = append(ids, b.ImageID), append(labels, b.Label)
		counts[b.Label]++
	}
	cutOf := func(f float64) split.Cut {
		sel, err := split.NewSelector(seed, f, counts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ids {
			if err := sel.Offer(ids[i], labels[i]); err != nil {
				t.Fatal(err)
			}
		}
		c, err := sel.Cut()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	held, _ := split.Queries(ids, labels, seed, fraction)
	outer, _ := split.Queries(ids, labels, seed, split.Nested(fraction, share))
	var lc evaluatebeam.Labels
	for _, l := range slices.Sorted(maps.Keys(counts)) {
		if l != "" {
			lc.Names, lc.Counts = append(lc.Names, l), append(lc.Counts, int64(counts[l]))
		}
	}
	files, _ := fileio.Glob(ctx, fileio.Join(out, "bow-*.parquet"))
	set := func(cap int) tune.ValidationSet {
		var v tune.ValidationSet
		for i, f := range files {
			part, err := tune.Part(seed, cap, lc.Relevant(), cutOf(fraction), cutOf(split.Nested(fraction, share)), i, func(each func(*formats.BoW) error) error {
				return fileio.ReadEach(ctx, f, each)
			})
			if err != nil {
				t.Fatal(err)
			}
			v = tune.Merge(v, part)
		}
		return v
	}
	v := set(0)
	if want := int64(len(ids) - len(held)); v.Images != want {
		t.Errorf("validation searches %d images, want the %d training ones", v.Images, want)
	}
	if want := len(outer) - len(held); len(v.Queries) != want || want == 0 {
		t.Errorf("%d validation queries, want %d", len(v.Queries), want)
	}
	for _, q := range v.Queries {
		if held[q.ID] || !outer[q.ID] {
			t.Errorf("validation query %s: held out %v, in the tuning split %v", q.ID, held[q.ID], outer[q.ID])
		}
	}
	all := map[string]int{}
	for _, q := range v.Queries {
		all[q.Label]++
	}
	capped := set(len(v.Queries) / 2)
	quotas := evaluate.Apportion(seed, len(v.Queries)/2, all)
	got := map[string]int{}
	for _, q := range capped.Queries {
		got[q.Label]++
	}
	for l := range all {
		if got[l] != quotas.Of(l) {
			t.Errorf("capped at %d: label %s has %d validation queries, want its quota %d", len(v.Queries)/2, l, got[l], quotas.Of(l))
		}
	}
	if len(capped.Queries) != len(v.Queries)/2 {
		t.Errorf("capped at %d: %d validation queries", len(v.Queries)/2, len(capped.Queries))
	}
}

// TestGrid checks the grid's points: the product of the learner's tuned
// axes around its defaults (λ scaled to the vocabulary), a parameter the
// command line sets left alone, and under a target λ over tune.SparsityGrid.
func TestGrid(t *testing.T) {
	l := DefaultLearning()
	l.Learners = []string{"solis-ada", "solis-da", "oasis-diag"}
	l.Tune.Tune = true
	g := l.grid(10_000)
	if len(g) != 16+16+4 {
		t.Fatalf("%d points, want 16 + 16 + 4", len(g))
	}
	if p := g[0]; p.Learner != "solis-ada" || math.Abs(p.Opt.Params["eta"]-10.0/3) > 1e-12 || math.Abs(p.Opt.Params["lambda"]-1e-8) > 1e-20 || p.Name != "solis-ada-eta-3.333-lambda-1e-08" {
		t.Errorf("first point %+v", p)
	}
	l.Params = map[string]map[string]float64{"solis-ada": {"eta": 5}}
	l.Tune = tune.Options{Share: 0.2, TargetSparsity: 0.95}
	g = l.grid(1000)
	if len(g) != 2*len(tune.SparsityGrid) {
		t.Fatalf("%d points under a target, want %d λ values each for solis-ada and solis-da", len(g), 2*len(tune.SparsityGrid))
	}
	for _, p := range g {
		if p.Learner == "solis-ada" && p.Opt.Params["eta"] != 5 {
			t.Errorf("%s: η %v, want the 5 given", p.Name, p.Opt.Params["eta"])
		}
	}
	l.Params = map[string]map[string]float64{"solis-ada": {"lambda": 1e-4}, "solis-da": {"lambda": 1e-4}}
	if err := l.Validate(1000, false); err == nil {
		t.Errorf("a target with every λ given: want an error, there is nothing to choose")
	}
}
