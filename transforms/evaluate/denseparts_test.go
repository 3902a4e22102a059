package evaluate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
)

// denseDims are the modality dimensions of randomDenseRows.
var denseDims = []int{3, 4}

// randomDenseRows makes n rows over denseDims with labels from 4, in a
// scrambled id order; every eighth row copies the features of the one
// before, so that every metric has ties to break by id, and one row is
// unlabelled (ranked, never a query).
func randomDenseRows(n int, seed uint64) []train.DenseRow {
	r := rand.New(rand.NewPCG(seed, 2))
	rows := make([]train.DenseRow, n)
	for i := range rows {
		c := r.IntN(4)
		x := make([]float32, 7)
		for j := range x {
			x[j] = float32(r.NormFloat64())
			if j == c {
				x[j] += 1.5
			}
		}
		rows[i] = train.DenseRow{ImageID: fmt.Sprintf("img%03d", (i*37)%n), Label: fmt.Sprintf("l%d", c), X: x}
		if i%8 == 0 && i > 0 {
			rows[i].X = rows[i-1].X
		}
	}
	rows[3].Label = ""
	return rows
}

// denseModels returns one model of each metric over rows: the Euclidean
// baseline, ITQ and LSH with a few bits (Hamming, many ties) and OASIS
// after a few triplets (Dot).
func denseModels(t *testing.T, rows []train.DenseRow) []learners.Model {
	t.Helper()
	models := []learners.Model{learners.BaselineModel(learners.BaselineEuclidean, denseDims)}
	for _, c := range []struct {
		name string
		bits float64
	}{{"itq", 3}, {"lsh", 2}} {
		m, err := train.Fit(train.BatchOptions{Learner: c.name, Params: map[string]float64{"bits": c.bits}, Dims: denseDims}, rows)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	d, err := learners.NewDense("oasis-full", denseDims, nil)
	if err != nil {
		t.Fatal(err)
	}
	on := d.(learners.DenseOnline)
	x := func(i int) []float64 { return widen(nil, rows[i].X) }
	for i := 0; i+2 < len(rows); i += 3 {
		if _, err := on.Update(x(i), x(i+1), x(i+2)); err != nil {
			t.Fatal(err)
		}
	}
	params, err := json.Marshal(on.Params())
	if err != nil {
		t.Fatal(err)
	}
	models = append(models, learners.Model{Learner: on.Name(), Params: string(params), Dims: on.Dims(), State: on.State()})
	for i, want := range []learners.Metric{learners.Euclidean, learners.Hamming, learners.Hamming, learners.Dot} {
		dm, err := learners.RestoreDense(models[i])
		if err != nil {
			t.Fatal(err)
		}
		if dm.Metric() != want {
			t.Fatalf("%s ranks by %v, want %v", models[i].Learner, dm.Metric(), want)
		}
	}
	return models
}

// bowsOf gives rows' ids and labels the shape cutOf takes.
func bowsOf(rows []train.DenseRow) []formats.BoW {
	out := make([]formats.BoW, len(rows))
	for i, r := range rows {
		out[i] = formats.BoW{ImageID: r.ImageID, Label: r.Label}
	}
	return out
}

// shardedDense evaluates rows as EvaluateDenseParts does: the queries Dense
// selects split over shards, the collection ranked chunk by chunk in a
// shuffled order. It returns the rows and the per-query scores.
func shardedDense(t *testing.T, rows []train.DenseRow, m learners.Model, cut split.Cut, opt Options, shards, chunk int) ([]formats.ReportRow, []QueryScore) {
	t.Helper()
	sorted := slices.Clone(rows)
	slices.SortFunc(sorted, func(a, b train.DenseRow) int { return cmp.Compare(a.ImageID, b.ImageID) })
	relevant := map[string]int{}
	var ids, labels []string
	x := map[string][]float32{}
	for _, r := range sorted {
		if r.Label != "" {
			relevant[r.Label]++
		}
		ids, labels = append(ids, r.ImageID), append(labels, r.Label)
		x[r.ImageID] = r.X
	}
	var queries []DenseQuery
	for _, q := range selectQueries(ids, labels, relevant, cut, opt) {
		queries = append(queries, DenseQuery{ID: q.ID, Label: q.Label, Held: q.Held, X: x[q.ID]})
	}
	order := rand.New(rand.NewPCG(uint64(shards), uint64(chunk))).Perm(len(rows))
	var scores []QueryScore
	for s := range shards {
		var mine []DenseQuery
		for i := s; i < len(queries); i += shards {
			mine = append(mine, queries[i])
		}
		r, err := NewDenseRanking(m, mine, opt.DepthFor(int64(len(rows))), int64(len(rows)), relevant)
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < len(order); lo += chunk {
			var part []train.DenseRow
			for _, i := range order[lo:min(lo+chunk, len(order))] {
				part = append(part, rows[i])
			}
			if err := r.Add(part); err != nil {
				t.Fatal(err)
			}
		}
		sc, err := r.Scores()
		if err != nil {
			t.Fatal(err)
		}
		scores = append(scores, sc...)
	}
	base := formats.ReportRow{Method: m.Learner, Input: "global", Relevance: "label", Vocabulary: 7, TrainSeconds: m.Seconds}
	return Rows(base, scores, opt), scores
}

// untimed zeroes the times of report rows and of per-query scores, the
// only columns allowed to differ between two runs.
func untimed(rows []formats.ReportRow, scores []QueryScore) ([]formats.ReportRow, []QueryScore) {
	rows, scores = slices.Clone(rows), slices.Clone(scores)
	for i := range rows {
		rows[i].QuerySeconds, rows[i].IndexSeconds = 0, 0
	}
	for i := range scores {
		scores[i].Seconds = 0
	}
	slices.SortFunc(scores, func(a, b QueryScore) int { return cmp.Compare(a.ID, b.ID) })
	return rows, scores
}

func TestDenseRankingEqualsDense(t *testing.T) {
	rows := randomDenseRows(70, 4)
	for _, m := range denseModels(t, rows) {
		for _, opt := range []Options{{}, {MaxQueries: 12, Seed: 3}, {QueryFraction: 0.25, TrainQueries: 8, Seed: 5}} {
			cut := cutOf(t, bowsOf(rows), opt.Seed, opt.QueryFraction)
			wantRows, wantScores, err := Dense(slices.Clone(rows), m, cut, opt)
			if err != nil {
				t.Fatal(err)
			}
			if sets := 1 + btoi(opt.QueryFraction > 0); len(wantRows) != sets {
				t.Fatalf("%s %+v: %d rows, want %d", m.Learner, opt, len(wantRows), sets)
			}
			wantRows, wantScores = untimed(wantRows, wantScores)
			for _, c := range []struct{ shards, chunk int }{{1, 1000}, {1, 7}, {3, 10}, {5, 13}} {
				gotRows, gotScores := untimed(shardedDense(t, rows, m, cut, opt, c.shards, c.chunk))
				if !reflect.DeepEqual(gotScores, wantScores) {
					t.Errorf("%s %+v, %d shards, chunks of %d: per-query scores differ from Dense's", m.Learner, opt, c.shards, c.chunk)
				}
				if !reflect.DeepEqual(gotRows, wantRows) {
					t.Errorf("%s %+v, %d shards, chunks of %d:\n%+v\nDense\n%+v", m.Learner, opt, c.shards, c.chunk, gotRows, wantRows)
				}
			}
		}
	}
}

// groupsOf returns the tie groups of a ranking given best first as its
// scores and relevance, cut after the group that reaches depth results
// (0: none cut).
func groupsOf(score []float64, rel []bool, depth int) []TieGroup {
	var g []TieGroup
	for i, s := range score {
		if len(g) == 0 || g[len(g)-1].Score != s {
			if depth > 0 && i >= depth {
				break
			}
			g = append(g, TieGroup{Score: s})
		}
		g[len(g)-1].N++
		if rel[i] {
			g[len(g)-1].Rel++
		}
	}
	return g
}

// The merged tie groups are those of Brute's ranking of all the rows,
// whatever the chunks; at a rank depth they are its head, the group at the
// cut whole. (The collection is made one image larger than the chunks
// bring, so that the ranking stays unscored, its groups kept to be read.)
func TestDenseRankingOrder(t *testing.T) {
	rows := randomDenseRows(60, 6)
	for _, m := range denseModels(t, rows) {
		dm, err := learners.RestoreDense(m)
		if err != nil {
			t.Fatal(err)
		}
		items := make([][]float64, len(rows))
		for i, r := range rows {
			items[i] = dm.Item(nil, widen(nil, r.X))
		}
		b, err := NewBrute(dm.Metric(), items)
		if err != nil {
			t.Fatal(err)
		}
		const qi = 10
		var sc BruteScratch
		var score []float64
		var rel []bool
		for _, i := range b.Rank(nil, dm.Query(nil, widen(nil, rows[qi].X)), qi, &sc) {
			score, rel = append(score, -sc.score[i]), append(rel, rows[i].Label == rows[qi].Label)
		}
		q := []DenseQuery{{ID: rows[qi].ImageID, Label: rows[qi].Label, X: rows[qi].X}}
		for _, depth := range []int{0, 9} {
			r, err := NewDenseRanking(m, q, depth, int64(len(rows)+1), nil)
			if err != nil {
				t.Fatal(err)
			}
			order := rand.New(rand.NewPCG(1, uint64(depth))).Perm(len(rows))
			for lo := 0; lo < len(order); lo += 11 {
				var part []train.DenseRow
				for _, i := range order[lo:min(lo+11, len(order))] {
					part = append(part, rows[i])
				}
				if err := r.Add(part); err != nil {
					t.Fatal(err)
				}
			}
			want := groupsOf(score, rel, depth)
			if got := r.r.tops[0]; !reflect.DeepEqual(got, want) {
				t.Errorf("%s depth %d: groups\n%v\nBrute's\n%v", m.Learner, depth, got, want)
			}
			if depth == 0 && len(want) == len(score) {
				t.Errorf("%s: no ties among %d results: the test would prove little", m.Learner, len(score))
			}
		}
	}
}

func TestDenseRankingErrors(t *testing.T) {
	m := learners.BaselineModel(learners.BaselineEuclidean, denseDims)
	if _, err := NewDenseRanking(m, []DenseQuery{{ID: "q", Label: "a", X: make([]float32, 6)}}, 0, 1, nil); err == nil {
		t.Error("NewDenseRanking accepted a query of the wrong width")
	}
	if _, err := NewDenseRanking(learners.BaselineModel(learners.BaselineTFIDF, nil), nil, 0, 0, nil); err == nil {
		t.Error("NewDenseRanking accepted a model of bags of words")
	}
	r, err := NewDenseRanking(m, nil, 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add([]train.DenseRow{{ImageID: "a", X: make([]float32, 8)}}); err == nil {
		t.Error("Add accepted a row of the wrong width")
	}
}
