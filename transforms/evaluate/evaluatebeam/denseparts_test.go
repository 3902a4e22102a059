package evaluatebeam

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/infra/prismretry"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

func init() {
	beam.RegisterType(reflect.TypeOf((*sameEvaluationFn)(nil)).Elem())
}

// denseSet is a small features set on disk: its features parts and rows.
type denseSet struct {
	features []formats.Features
	parts    []formats.Part
}

// newDenseSet writes n images with random global features in 4 labels to
// parts features parts under a fresh directory. Every seventh image copies
// the global features of the one before (ties for every metric); one is
// unlabelled; two have no global features (one of them the second image
// of label "solo", whose other image has them, so that "solo" has a query
// only if the images without global features are counted).
func newDenseSet(t *testing.T, n, parts int) denseSet {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 22))
	mk := func(d, class int) []float32 {
		x := make([]float32, d)
		for i := range x {
			x[i] = float32(r.IntN(256)) / 256
			if i < 3 {
				x[i] += float32(class) / 3
			}
		}
		return x
	}
	var set denseSet
	for i := range n {
		c := r.IntN(4)
		f := formats.Features{ImageID: fmt.Sprintf("img%03d", (i*37)%n), Label: fmt.Sprintf("l%d", c),
			Colour: mk(global.ColourDim, c), Edge: mk(global.EdgeDim, c), Gabor: mk(global.GaborDim, c),
			LBP: mk(global.LBPDim, c), GIST: mk(global.GISTDim, c)}
		if i%7 == 0 && i > 0 {
			p := set.features[i-1]
			f.Colour, f.Edge, f.Gabor, f.LBP, f.GIST = p.Colour, p.Edge, p.Gabor, p.LBP, p.GIST
		}
		set.features = append(set.features, f)
	}
	set.features[4].Label = ""
	set.features[5].Label, set.features[6].Label = "solo", "solo"
	set.features[6].Colour, set.features[6].Edge, set.features[6].Gabor, set.features[6].LBP, set.features[6].GIST = nil, nil, nil, nil, nil
	set.features = append(set.features, formats.Features{ImageID: "bare", Label: "l0"})
	dir := t.TempDir()
	byPart := make([][]formats.Features, parts)
	for _, f := range set.features {
		p := formats.ShardOf(f.ImageID, parts)
		byPart[p] = append(byPart[p], f)
	}
	for p, feats := range byPart {
		path := fileio.Join(dir, formats.ShardName("features", p, parts))
		if err := fileio.WriteFile(context.Background(), path, feats); err != nil {
			t.Fatal(err)
		}
		set.parts = append(set.parts, formats.Part{Name: "features", Part: p, Parts: parts, Path: path, Rows: int64(len(feats))})
	}
	return set
}

// rows returns the set's dense rows as trainbeam.ReadDense makes them,
// scaled by the moments computed here, and those moments.
func (d denseSet) rows(t *testing.T) ([]train.DenseRow, global.Moments) {
	t.Helper()
	var raw []train.DenseRow
	var m global.Moments
	for _, f := range d.features {
		if x, err := global.Concat(nil, f.Colour, f.Edge, f.Gabor, f.LBP, f.GIST); err == nil {
			raw = append(raw, train.DenseRow{ImageID: f.ImageID, Label: f.Label, X: x})
			m.Add(x)
		}
	}
	sc, err := global.NewScaler(m, global.Dims)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i].X = sc.Apply(nil, raw[i].X)
	}
	return raw, m
}

// cut holds out fraction of the labelled images of the set, those without
// global features included, as the pipeline's split of the bags of words.
func (d denseSet) cut(t *testing.T, seed uint64, fraction float64) split.Cut {
	t.Helper()
	counts := map[string]int{}
	for _, f := range d.features {
		counts[f.Label]++
	}
	sel, err := split.NewSelector(seed, fraction, counts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.features {
		if err := sel.Offer(f.ImageID, f.Label); err != nil {
			t.Fatal(err)
		}
	}
	c, err := sel.Cut()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameEvaluationFn fails the pipeline unless the two evaluations' report
// rows and per-query scores are equal but for their times.
type sameEvaluationFn struct{ Sets int }

func (f *sameEvaluationFn) ProcessElement(_ []byte, wantRows, gotRows func(*formats.ReportRow) bool, wantScores, gotScores func(*evaluate.Scores) bool) error {
	rowsOf := func(it func(*formats.ReportRow) bool) []formats.ReportRow {
		var out []formats.ReportRow
		var r formats.ReportRow
		for it(&r) {
			r.QuerySeconds, r.IndexSeconds = 0, 0
			out = append(out, r)
			r = formats.ReportRow{}
		}
		slices.SortFunc(out, func(a, b formats.ReportRow) int { return cmp.Compare(a.Split, b.Split) })
		return out
	}
	scoresOf := func(it func(*evaluate.Scores) bool) []evaluate.Scores {
		var out []evaluate.Scores
		var s evaluate.Scores
		for it(&s) {
			out = append(out, s)
			s = evaluate.Scores{}
		}
		return out
	}
	want, got := rowsOf(wantRows), rowsOf(gotRows)
	if len(want) != f.Sets {
		return fmt.Errorf("evaluate.Dense gave %d rows, want %d", len(want), f.Sets)
	}
	for _, r := range want {
		if r.MAP == 0 || r.Queries == 0 {
			return fmt.Errorf("evaluate.Dense's %s row has mAP %v over %d queries: the test would prove little", r.Split, r.MAP, r.Queries)
		}
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("EvaluateDenseParts' rows\n%+v\nevaluate.Dense's\n%+v", got, want)
	}
	ws, gs := scoresOf(wantScores), scoresOf(gotScores)
	if len(ws) != 1 || len(gs) != 1 {
		return fmt.Errorf("%d and %d scores, want one each", len(gs), len(ws))
	}
	if !reflect.DeepEqual(gs[0], ws[0]) {
		return fmt.Errorf("EvaluateDenseParts' scores\n%+v\nevaluate.Dense's\n%+v", gs[0], ws[0])
	}
	return nil
}

// TestEvaluateDensePartsEqualsDense: over features parts, shard by shard of
// queries and chunk by chunk of rows, the report rows and scores are
// evaluate.Dense's over every row at once, for the Euclidean
// baseline and for ITQ (Hamming distance over a few bits: many ties, tie
// groups merged across chunks), with and without held-out queries and caps.
func TestEvaluateDensePartsEqualsDense(t *testing.T) {
	set := newDenseSet(t, 60, 3)
	rows, moments := set.rows(t)
	itq, err := train.Fit(train.BatchOptions{Learner: "itq", Params: map[string]float64{"bits": 6}, Dims: global.Dims}, rows)
	if err != nil {
		t.Fatal(err)
	}
	models := []learners.Model{learners.BaselineModel(learners.BaselineEuclidean, global.Dims), itq}
	for _, opt := range []evaluate.Options{
		{QueryFraction: 0.25, MaxQueries: 9, TrainQueries: 7, Seed: 3, ShardQueries: 3, ChunkImages: 7},
		{Seed: 4, ShardQueries: 20, ChunkImages: 11},
	} {
		cut := set.cut(t, opt.Seed, opt.QueryFraction)
		// The query count, hence the shards, from evaluate.Dense itself.
		_, qs, err := evaluate.Dense(slices.Clone(rows), models[0], cut, opt)
		if err != nil {
			t.Fatal(err)
		}
		shards := formats.Parts(int64(len(qs)), opt.ShardQueries)
		if shards < 3 {
			t.Fatalf("%+v: %d shards of %d queries: the test would not shard", opt, shards, len(qs))
		}
		sets := 1
		if opt.QueryFraction > 0 {
			sets = 2
		}

		p, s := beam.NewPipelineWithRoot()
		// The moments computed here, so that the pipeline scales the rows
		// bit for bit as rows holds them.
		momentsC := beam.Create(s, moments)
		cutC := beam.Create(s, cut)
		parts := beam.CreateList(s, set.parts)
		for _, m := range models {
			s := s.Scope(m.Learner)
			model := beam.Create(s, m)
			want, scores, err := evaluate.Dense(slices.Clone(rows), m, cut, opt)
			if err != nil {
				t.Fatal(err)
			}
			wantRows, wantScores := beam.CreateList(s, want), beam.Create(s, lightScores(m.Learner, "global", scores))
			gotRows, gotScores, stages, perQuery := EvaluateDenseParts(s, parts, momentsC, cutC, model, opt, 1)
			beam.ParDo0(s, &sameEvaluationFn{Sets: sets}, beam.Impulse(s), beam.SideInput{Input: wantRows}, beam.SideInput{Input: gotRows},
				beam.SideInput{Input: wantScores}, beam.SideInput{Input: gotScores})
			passert.Count(s, stages, "evaluate stages", shards)
			passert.Count(s, perQuery, "per-query rows", len(scores))
		}
		if err := ptest.Run(p); err != nil {
			t.Fatalf("%+v: %v", opt, err)
		}
	}
}
