package tune

import (
	"errors"
	"math"
	"testing"

	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/train"
)

// TestChoose checks the choice of a grid point: the best validation mAP
// (the first of equals), among the points at the target sparsity if
// any; the sparsest, flagged, if none reaches it.
func TestChoose(t *testing.T) {
	pts := []report.TunePoint{
		{ValidationMAP: 0.5, Sparsity: 0.2},
		{ValidationMAP: 0.7, Sparsity: 0.5},
		{ValidationMAP: 0.6, Sparsity: 0.96},
		{ValidationMAP: 0.6, Sparsity: 0.97},
		{ValidationMAP: 0.4, Sparsity: 0.99},
	}
	for _, c := range []struct {
		target float64
		l1     bool
		want   int
		met    bool
	}{
		{0, true, 1, true},
		{0.95, true, 2, true},   // 2 and 3 tie on mAP: the first
		{0.98, true, 4, true},   // the only one at the target
		{0.995, true, 4, false}, // none: the sparsest, flagged
		{0.95, false, 1, false}, // no λ: the best, below the target
	} {
		got, met, why := Choose(pts, c.target, c.l1)
		if got != c.want || met != c.met || why == "" {
			t.Errorf("target %v (λ %v): chose %d (met %v, %q), want %d (met %v)", c.target, c.l1, got, met, why, c.want, c.met)
		}
	}
}

// TestPoints checks the grid of explicit base options: the product of a
// learner's axes in name order, values ascending, a given parameter left
// alone, and under a target without Tune only λ, over SparsityGrid.
func TestPoints(t *testing.T) {
	bases := []train.ShardOptions{
		{Learner: "solis-ada", Params: map[string]float64{"eta": 10, "lambda": 1e-5}},
		{Learner: "oasis-diag", Params: map[string]float64{"c": 10}},
	}
	none := func(string, string) bool { return false }
	if g := (Options{Share: 0.2}).Points(bases, none); g != nil {
		t.Errorf("inactive options: %d points", len(g))
	}
	g := Options{Tune: true, Share: 0.2}.Points(bases, none)
	if len(g) != 16+4 {
		t.Fatalf("%d points, want 16 + 4", len(g))
	}
	if p := g[0]; p.Learner != "solis-ada" || p.Name != "solis-ada-eta-3.333-lambda-1e-07" || math.Abs(p.Opt.Params["lambda"]-1e-7) > 1e-20 || len(p.Axes) != 2 {
		t.Errorf("first point %+v", p)
	}
	if p := g[16]; p.Learner != "oasis-diag" || p.Opt.Params["c"] != 1 || p.Name != "oasis-diag-c-1" {
		t.Errorf("oasis-diag's first point %+v", p)
	}
	etaGiven := func(l, p string) bool { return l == "solis-ada" && p == "eta" }
	g = Options{Share: 0.2, TargetSparsity: 0.9}.Points(bases, etaGiven)
	if len(g) != len(SparsityGrid) {
		t.Fatalf("%d points under a target, want solis-ada's λ over the %d of SparsityGrid", len(g), len(SparsityGrid))
	}
	for _, p := range g {
		if p.Opt.Params["eta"] != 10 || len(p.Axes) != 1 || p.Axes[0] != "lambda" {
			t.Errorf("%s: η %v over %v, want the 10 given, λ alone tuned", p.Name, p.Opt.Params["eta"], p.Axes)
		}
	}
	if bases[0].Params["lambda"] != 1e-5 {
		t.Errorf("Points changed its bases' parameters: %v", bases[0].Params)
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (Options{TargetSparsity: 0}).Validate(); err != nil {
		t.Errorf("inactive: %v", err)
	}
	for name, o := range map[string]Options{
		"tune.Share":          {Tune: true, Share: 1},
		"tune.TargetSparsity": {Share: 0.2, TargetSparsity: 1},
	} {
		var e *setting.Error
		if err := o.Validate(); !errors.As(err, &e) || e.Name() != name {
			t.Errorf("%+v: %v, want a setting error of %s", o, err, name)
		}
	}
}

// TestReport checks the sum of a grid's validation shards into each
// learner's choice, and the refusal of a point short of queries.
func TestReport(t *testing.T) {
	grid := []Point{
		{Learner: "solis-ada", Name: "a-1", Axes: []string{"lambda"}, Opt: train.ShardOptions{Params: map[string]float64{"lambda": 1}}},
		{Learner: "solis-ada", Name: "a-2", Axes: []string{"lambda"}, Opt: train.ShardOptions{Params: map[string]float64{"lambda": 2}}},
	}
	v := ValidationSet{Images: 10, Validation: 4}
	v.Queries = make([]evaluate.Query, 4)
	results := []Validated{
		{Point: 0, SumAP: 1, Queries: 2}, {Point: 0, SumAP: 1, Queries: 2},
		{Point: 1, SumAP: 3, Queries: 4},
		{Point: 2, SumAP: 2, Queries: 4},
	}
	sp := []PointSparsity{{Point: 0, Sparsity: 0.5}, {Point: 1, Sparsity: 0.95}}
	r, err := Report(grid, 0.2, 0.9, v, results, sp)
	if err != nil {
		t.Fatal(err)
	}
	if r.BaselineMAP != 0.5 || len(r.Learners) != 1 || r.Learners[0].Chosen != 1 || !r.Learners[0].TargetMet || r.Learners[0].Params["lambda"] != 2 {
		t.Errorf("report %+v", r)
	}
	if Chosen(r, "solis-ada") != "a-2" || Chosen(r, "oasis-diag") != "" {
		t.Errorf("chosen %q, %q", Chosen(r, "solis-ada"), Chosen(r, "oasis-diag"))
	}
	if _, err := Report(grid, 0.2, 0.9, v, results[1:], sp); err == nil {
		t.Errorf("a point short of queries: no error")
	}
}
