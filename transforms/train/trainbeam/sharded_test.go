package trainbeam

import (
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/prismretry"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/train/traintest"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

func init() { beam.RegisterType(reflect.TypeOf((*checkFn)(nil)).Elem()) }

// checkFn fails the pipeline unless the model's weights are Want, bit for
// bit: the model itself cannot leave the pipeline, so the comparison runs
// inside it.
type checkFn struct{ Want []float32 }

func (f *checkFn) ProcessElement(m learners.Model) error {
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

func runSharded(t *testing.T, feats []train.Feature, opt train.ShardOptions, want []float32) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	model := Sharded(s, beam.CreateList(s, feats), opt)
	beam.ParDo0(s, &checkFn{Want: want}, model)
	if err := ptest.Run(p); err != nil {
		t.Fatalf("%d shards × %d rounds: %v", opt.Shards, opt.Rounds, err)
	}
}

func TestShardedOneShardIsSequential(t *testing.T) {
	feats := traintest.RandomFeatures(400, dim)
	for _, name := range []string{"solis-ada", "solis-tg"} {
		seq, _ := learners.New(name, dim, nil)
		sorted := append([]train.Feature(nil), feats...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
		m, err := train.Run(seq, sorted)
		if err != nil {
			t.Fatal(err)
		}
		if learners.Sparsity(m.Weights) == 1 {
			t.Fatalf("%s learned nothing: the test would prove little", name)
		}
		for _, rounds := range []int{1, 3} {
			runSharded(t, feats, train.ShardOptions{Learner: name, Dim: dim, Shards: 1, Rounds: rounds}, m.Weights)
		}
	}
}

func TestShardedAveragesShards(t *testing.T) {
	feats := traintest.RandomFeatures(400, dim)
	opt := train.ShardOptions{Learner: "solis-ada", Dim: dim, Shards: 3, Rounds: 2}
	want, err := traintest.Simulate(feats, opt)
	if err != nil {
		t.Fatal(err)
	}
	one, err := traintest.Simulate(feats, train.ShardOptions{Learner: "solis-ada", Dim: dim, Shards: 1, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(want, one) {
		t.Fatal("three shards gave the sequential model: the test would not see averaging")
	}
	runSharded(t, feats, opt, want)
}
