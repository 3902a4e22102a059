package trainbeam

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
)

func TestMain(m *testing.M) { ptest.Main(m) }

func init() { beam.RegisterType(reflect.TypeOf((*checkFn)(nil)).Elem()) }

// checkFn fails the pipeline unless the model's weights are Want, bit for
// bit: the model itself cannot leave the pipeline, so the comparison runs
// inside it.
type checkFn struct{ Want []float32 }

func (f *checkFn) ProcessElement(m Model) error {
	if !reflect.DeepEqual(m.Weights, f.Want) {
		for i := range f.Want {
			if i < len(m.Weights) && m.Weights[i] != f.Want[i] {
				return fmt.Errorf("%s: weight %d = %v, want %v", m.Learner, i, m.Weights[i], f.Want[i])
			}
		}
		return fmt.Errorf("%s: %d weights, want %d", m.Learner, len(m.Weights), len(f.Want))
	}
	return nil
}

const dim = 60

func randomFeatures(n int) []Feature {
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]Feature, n)
	for i := range out {
		var u sparse.Vector
		for j := 0; j < dim; j++ {
			if r.Float64() < 0.15 {
				u.Idx = append(u.Idx, uint32(j))
				v := r.Float64() * 0.5
				if j%3 == 0 { // informative words push one way
					v = -v / 3
				}
				u.Val = append(u.Val, float32(v))
			}
		}
		out[i] = Feature{Seq: int64(r.Uint64() >> 1), U: u}
	}
	return out
}

// simulate is sharded training written out by hand: the specification the
// Beam transform must meet.
func simulate(t *testing.T, feats []Feature, opt ShardOptions) []float32 {
	sorted := append([]Feature(nil), feats...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
	l, err := learners.New(opt.Learner, opt.Dim, opt.Params)
	if err != nil {
		t.Fatal(err)
	}
	state := l.State()
	for r := 0; r < opt.Rounds; r++ {
		var states []learners.State
		for sh := 0; sh < opt.Shards; sh++ {
			var mine []Feature
			for _, f := range sorted {
				if RoundOf(f.Seq, opt.Rounds) == r && ShardOf(f.Seq, opt.Shards) == sh {
					mine = append(mine, f)
				}
			}
			if len(mine) == 0 {
				continue
			}
			l, _ := learners.New(opt.Learner, opt.Dim, opt.Params)
			if err := l.SetState(state); err != nil {
				t.Fatal(err)
			}
			for _, f := range mine {
				l.Update(f.U)
			}
			states = append(states, l.State())
		}
		if len(states) > 0 {
			if state, err = learners.Average(states); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := l.SetState(state); err != nil {
		t.Fatal(err)
	}
	return l.Weights(nil)
}

func runSharded(t *testing.T, feats []Feature, opt ShardOptions, want []float32) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	model := Sharded(s, beam.CreateList(s, feats), opt)
	beam.ParDo0(s, &checkFn{Want: want}, model)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("%d shards × %d rounds: %v", opt.Shards, opt.Rounds, err)
	}
}

func TestShardedOneShardIsSequential(t *testing.T) {
	feats := randomFeatures(400)
	for _, name := range []string{"solis-ada", "solis-tg"} {
		seq, _ := learners.New(name, dim, nil)
		sorted := append([]Feature(nil), feats...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
		m, err := Run(seq, sorted)
		if err != nil {
			t.Fatal(err)
		}
		if learners.Sparsity(m.Weights) == 1 {
			t.Fatalf("%s learned nothing: the test would prove little", name)
		}
		for _, rounds := range []int{1, 3} {
			runSharded(t, feats, ShardOptions{Learner: name, Dim: dim, Shards: 1, Rounds: rounds}, m.Weights)
		}
	}
}

func TestShardedAveragesShards(t *testing.T) {
	feats := randomFeatures(400)
	opt := ShardOptions{Learner: "solis-ada", Dim: dim, Shards: 3, Rounds: 2}
	want := simulate(t, feats, opt)
	one := simulate(t, feats, ShardOptions{Learner: "solis-ada", Dim: dim, Shards: 1, Rounds: 1})
	if reflect.DeepEqual(want, one) {
		t.Fatal("three shards gave the sequential model: the test would not see averaging")
	}
	runSharded(t, feats, opt, want)
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
