package train_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/bowline/bowline/learners"
	. "github.com/bowline/bowline/transforms/train"
)

func TestBatchSampleAndMatrices(t *testing.T) {
	rows := denseRows(30)
	rows[3].Label, rows[3].Tags = "", nil  // unlabelled: not sampled
	rows[4].Tags = []string{"zebra", "c1"} // tags win over the label
	const max, seed = 10, 3
	var a, b Sample
	for i, r := range rows {
		if i%2 == 0 {
			a = a.Add(r, max, seed)
		} else {
			b = b.Add(r, max, seed)
		}
	}
	one := a.Merge(b, max)
	var c Sample
	for i := len(rows) - 1; i >= 0; i-- {
		c = c.Add(rows[i], max, seed)
	}
	two := c.Trim(max)
	if len(one.Rows) != 10 || !reflect.DeepEqual(one, two) {
		t.Fatalf("samples of 10 depend on arrival order: %d rows", len(one.Rows))
	}
	X, Y, err := Matrices([]DenseRow{rows[4], rows[0], rows[1]})
	if err != nil {
		t.Fatal(err)
	}
	// Tags sorted: c0, c1, zebra.
	wantY := [][]float64{{0, 1, 1}, {1, 0, 0}, {0, 1, 0}}
	for i, want := range wantY {
		for j, v := range want {
			if Y.At(i, j) != v {
				t.Fatalf("Y[%d][%d] = %v, want %v", i, j, Y.At(i, j), v)
			}
		}
	}
	if X.At(1, 2) != float64(rows[0].X[2]) {
		t.Errorf("X[1][2] = %v, want %v", X.At(1, 2), rows[0].X[2])
	}
}

// TestRestoreEveryDenseLearner: a model restores from what the pipeline
// keeps of it — name, dims, the JSON of its Params (plus the sharding
// layout) and its state — also with non-default shape-setting params, such
// as a code length; the evaluation once restored with the defaults and
// failed on mglp with 8 bits.
func TestRestoreEveryDenseLearner(t *testing.T) {
	rows := denseRows(60)
	X, Y, err := Matrices(rows)
	if err != nil {
		t.Fatal(err)
	}
	feats := denseFeatures(rows, denseTriplets(rows, 20))
	nonDefault := map[string]map[string]float64{"itq": {"bits": 3}, "cca-itq": {"bits": 1}, "lsh": {"bits": 5}, "mglp": {"bits": 2}, "lomdml": {"rank": 2}}
	for _, name := range learners.DenseNames() {
		m, err := learners.NewDense(name, denseDims, nonDefault[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch l := m.(type) {
		case learners.DenseBatch:
			if err := l.Fit(X, Y); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		case learners.DenseOnline:
			tr, err := NewTrainer(ShardOptions{Learner: name, Dims: denseDims, Params: nonDefault[name], Shards: 1, Rounds: 1})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, ft := range feats {
				if _, err := tr.Step(ft); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if err := l.SetState(tr.State()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		params := m.Params()
		params["shards"], params["rounds"] = 2, 3
		js, _ := json.Marshal(params)
		back, err := learners.RestoreDense(learners.Model{Learner: name, Params: string(js), Dims: denseDims, State: m.State()})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		x := []float64{1, -2, 0.5, 3, 0, -1, 2}
		if a, b := m.Item(nil, x), back.Item(nil, x); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: restored Item %v, trained %v", name, b, a)
		}
	}
}
func TestRoundAndShardOf(t *testing.T) {
	const rounds, shards = 5, 4
	r := rand.New(rand.NewPCG(1, 1))
	var perRound [rounds]int
	var perShard [shards]int
	for i := 0; i < 20000; i++ {
		seq := int64(r.Uint64() >> 1)
		perRound[RoundOf(seq, rounds)]++
		perShard[ShardOf(seq, shards)]++
	}
	for i, n := range perRound {
		if n < 3600 || n > 4400 {
			t.Errorf("round %d holds %d of 20000", i, n)
		}
	}
	for i, n := range perShard {
		if n < 4500 || n > 5500 {
			t.Errorf("shard %d holds %d of 20000", i, n)
		}
	}
	if RoundOf(1<<63-1, rounds) != rounds-1 || RoundOf(0, rounds) != 0 {
		t.Error("the ends of the Seq range fall outside the rounds")
	}
}

// TestTrainShardAndAverageAreTheSimulation: a sharded pass made of
// TrainShard and Average, as the Beam wrapper runs it, gives the weights
// of the hand-written simulation, and one shard gives the sequential
// learner's.
func TestTrainShardAndAverageAreTheSimulation(t *testing.T) {
	const dim = 60
	feats := randomFeatures(400, dim)
	for _, opt := range []ShardOptions{
		{Learner: "solis-ada", Dim: dim, Shards: 3, Rounds: 2},
		{Learner: "solis-tg", Dim: dim, Shards: 1, Rounds: 3},
	} {
		want, err := simulate(feats, opt)
		if err != nil {
			t.Fatal(err)
		}
		l, err := NewTrainer(opt)
		if err != nil {
			t.Fatal(err)
		}
		st := RoundState{State: l.State()}
		for r := 0; r < opt.Rounds; r++ {
			byShard := map[int][]Feature{}
			for _, f := range feats {
				if RoundOf(f.Seq, opt.Rounds) == r {
					byShard[ShardOf(f.Seq, opt.Shards)] = append(byShard[ShardOf(f.Seq, opt.Shards)], f)
				}
			}
			var shards []ShardState
			for sh := opt.Shards - 1; sh >= 0; sh-- { // arrival order must not matter
				if len(byShard[sh]) == 0 {
					continue
				}
				out, err := TrainShard(opt, sh, st, byShard[sh])
				if err != nil {
					t.Fatal(err)
				}
				shards = append(shards, out)
			}
			if st, err = Average(st, shards); err != nil {
				t.Fatal(err)
			}
		}
		m, err := Finish(opt, st)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(m.Weights, want) {
			t.Errorf("%s %d×%d: weights differ from the simulation", opt.Learner, opt.Shards, opt.Rounds)
		}
		if m.Triplets != int64(len(feats)) || learners.Sparsity(m.Weights) == 1 {
			t.Errorf("%s: %d triplets, sparsity %v", opt.Learner, m.Triplets, learners.Sparsity(m.Weights))
		}
		var p map[string]float64
		if err := json.Unmarshal([]byte(m.Params), &p); err != nil || p["shards"] != float64(opt.Shards) {
			t.Errorf("params %q do not record the sharding", m.Params)
		}
	}
}
