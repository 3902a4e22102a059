package trainbeam

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	for _, t := range []any{(*sameModelFn)(nil), (*samePartsFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// bowCorpus writes images bags of words of vocabulary dim, in parts
// parts named as the pipeline names them, under a fresh directory, and
// returns the parts and a split holding out a fifth of each label.
func bowCorpus(t *testing.T, images, parts, dim int) ([]formats.Part, split.Cut) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(21, 22))
	byPart := make([][]formats.BoW, parts)
	counts := map[string]int{}
	var all []formats.BoW
	for i := range images {
		b := formats.BoW{ImageID: fmt.Sprintf("img%04d", i), Label: fmt.Sprintf("c%d", i%4)}
		for w := range dim {
			// The label shows in a few words, so there is something to learn.
			if r.IntN(4) == 0 || (w%4 == i%4 && r.IntN(2) == 0) {
				b.WordIDs = append(b.WordIDs, uint32(w))
				b.Weights = append(b.Weights, r.Float32())
			}
		}
		p := formats.ShardOf(b.ImageID, parts)
		byPart[p] = append(byPart[p], b)
		counts[b.Label]++
		all = append(all, b)
	}
	var out []formats.Part
	for p, rows := range byPart {
		path := fileio.Join(dir, formats.ShardName("bow", p, parts))
		if err := fileio.WriteFile(ctx, path, rows); err != nil {
			t.Fatal(err)
		}
		out = append(out, formats.Part{Name: "bow", Part: p, Parts: parts, Path: path, Rows: int64(len(rows))})
	}
	sel, err := split.NewSelector(3, 0.2, counts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		if err := sel.Offer(b.ImageID, b.Label); err != nil {
			t.Fatal(err)
		}
	}
	cut, err := sel.Cut()
	if err != nil {
		t.Fatal(err)
	}
	return out, cut
}

// sameModel reports how got differs from want, bit for bit, but for
// Seconds.
func sameModel(got, want learners.Model) error {
	f32 := func(x []float32) []uint32 {
		out := make([]uint32, len(x))
		for i, v := range x {
			out[i] = math.Float32bits(v)
		}
		return out
	}
	f64 := func(x [][]float64) [][]uint64 {
		out := make([][]uint64, len(x))
		for i, v := range x {
			for _, y := range v {
				out[i] = append(out[i], math.Float64bits(y))
			}
		}
		return out
	}
	switch {
	case !slices.Equal(f32(got.Weights), f32(want.Weights)):
		return fmt.Errorf("%s: weights differ", want.Learner)
	case !reflect.DeepEqual(f64(got.State.Vectors), f64(want.State.Vectors)):
		return fmt.Errorf("%s: state vectors differ", want.Learner)
	case math.Float64bits(got.MeanLoss) != math.Float64bits(want.MeanLoss):
		return fmt.Errorf("%s: mean loss %v, want %v", want.Learner, got.MeanLoss, want.MeanLoss)
	}
	got.Weights, want.Weights = nil, nil
	got.State.Vectors, want.State.Vectors = nil, nil
	got.MeanLoss, want.MeanLoss = 0, 0
	got.Seconds, want.Seconds = 0, 0
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("model\n got %+v\nwant %+v", got, want)
	}
	return nil
}

// sameModelFn fails the pipeline unless TrainGroupsFrom's model equals
// the one simulated (sameModel) and has learned something; it counts the
// models compared, so that a comparison that never ran shows.
type sameModelFn struct{ compared beam.Counter }

func (f *sameModelFn) Setup() { f.compared = beam.NewCounter("test", "models_compared") }

func (f *sameModelFn) ProcessElement(ctx context.Context, _ []byte, got, want func(*learners.Model) bool) error {
	var g, w learners.Model
	if !got(&g) || !want(&w) {
		return fmt.Errorf("a model is missing")
	}
	if err := sameModel(g, w); err != nil {
		return err
	}
	if w.Triplets == 0 || w.Violations == 0 || learners.Sparsity(w.Weights) == 1 {
		return fmt.Errorf("%s learned nothing from %d triplets: the test would prove little", w.Learner, w.Triplets)
	}
	f.compared.Inc(ctx, 1)
	return nil
}

// samePartsFn fails the pipeline unless TrainGroupsFrom's triplets parts are
// WriteTriplets' but for the directory (Got and Want) and the timings.
type samePartsFn struct {
	Got, Want string
	Groups    int
	compared  beam.Counter
}

func (f *samePartsFn) Setup() { f.compared = beam.NewCounter("test", "parts_compared") }

func (f *samePartsFn) ProcessElement(ctx context.Context, _ []byte, got, want func(*formats.Part) bool) error {
	collect := func(iter func(*formats.Part) bool, dir string) ([]formats.Part, error) {
		var out []formats.Part
		var p formats.Part
		for iter(&p) {
			if p.StartMillis == 0 || p.EndMillis < p.StartMillis {
				return nil, fmt.Errorf("part %d: not timed: %+v", p.Part, p)
			}
			if !strings.HasPrefix(p.Path, dir) {
				return nil, fmt.Errorf("part %d at %s, not under %s", p.Part, p.Path, dir)
			}
			p.Path = strings.TrimPrefix(p.Path, dir)
			p.StartMillis, p.EndMillis = 0, 0
			out = append(out, p)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Part < out[j].Part })
		return out, nil
	}
	g, err := collect(got, f.Got)
	if err != nil {
		return err
	}
	w, err := collect(want, f.Want)
	if err != nil {
		return err
	}
	if len(w) != f.Groups || !reflect.DeepEqual(g, w) {
		return fmt.Errorf("triplets parts\n got %+v\nwant %+v (%d groups)", g, w, f.Groups)
	}
	for _, p := range w {
		if p.Rows == 0 || p.Inputs == 0 {
			return fmt.Errorf("part %d: %d triplets from %d images: the test would prove little", p.Part, p.Rows, p.Inputs)
		}
	}
	f.compared.Inc(ctx, 1)
	return nil
}

// counters sums the counters of namespace ns and name name by step.
func counters(pr beam.PipelineResult, ns, name string) map[string]int64 {
	out := map[string]int64{}
	for _, c := range pr.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == ns && c.Key.Name == name {
			out[c.Key.Step] += c.Committed
		}
	}
	return out
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// simulateGroups is sharded training over the groups written out as a
// loop: the groups Groups makes of bowParts, each loaded and trained from
// the round's state (train.Group.TrainShard), the shards averaged in group
// order round by round.
func simulateGroups(t *testing.T, bowParts []formats.Part, cut split.Cut, groupImages int, opt train.ShardOptions, trip triplets.Options) learners.Model {
	t.Helper()
	f := &groupsFn{GroupImages: groupImages, Shards: 1, Loads: 1}
	var groups []Group
	f.ProcessElement(nil, iter(bowParts...), cut, nil, func(g Group) { groups = append(groups, g) })
	l, err := train.NewTrainer(opt)
	if err != nil {
		t.Fatal(err)
	}
	st := train.RoundState{State: l.State()}
	for r := range opt.Rounds {
		var shards []train.ShardState
		for _, g := range groups {
			tg, err := g.read(context.Background(), trip)
			if err != nil {
				t.Fatal(err)
			}
			sh, err := tg.TrainShard(opt, g.Index, st, r, opt.Rounds)
			if err != nil {
				t.Fatal(err)
			}
			shards = append(shards, sh)
		}
		if st, err = train.Average(st, shards); err != nil {
			t.Fatal(err)
		}
	}
	m, err := train.Finish(opt, st)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTrainGroups: every model of TrainGroupsFrom is the simulated
// sharded training's for its learner (simulateGroups), bit for bit but
// for Seconds; its triplets files are WriteTriplets', byte for byte, and
// so are its parts and its triplets/sampled counter; each group is loaded
// once a round.
func TestTrainGroups(t *testing.T) {
	const images, parts, dim, groupImages = 160, 6, 24, 50
	bowParts, cut := bowCorpus(t, images, parts, dim)
	if cut.Queries == 0 {
		t.Fatal("the split holds nothing out: the test would not see the cut")
	}
	groups := train.Groups(images, 0, parts, groupImages, 0, 1)
	if groups < 3 {
		t.Fatalf("%d groups: the test would not see the averaging", groups)
	}
	trip := triplets.Options{PerQuery: 4, Seed: 9}
	for _, rounds := range []int{1, 2} {
		t.Run(fmt.Sprintf("rounds=%d", rounds), func(t *testing.T) {
			var opts []train.ShardOptions
			for _, l := range []struct {
				name   string
				params map[string]float64
			}{
				{"solis-ada", map[string]float64{"eta": 1, "lambda": 1e-3}},
				{"oasis-diag", nil},
				{"solis-tg", nil},
			} {
				if !slices.Contains(learners.Names(), l.name) {
					t.Fatalf("no learner %s", l.name)
				}
				opts = append(opts, train.ShardOptions{Learner: l.name, Params: l.params, Dim: dim, Shards: groups, Rounds: rounds})
			}
			gotDir, wantDir := t.TempDir(), t.TempDir()

			p, s := beam.NewPipelineWithRoot()
			gs := Groups(s, beam.CreateList(s, bowParts), beam.Create(s, cut), beam.PCollection{}, groupImages, 0, 1, 1)
			models, _, tripParts := TrainGroupsFrom(s, gs, opts, trip, gotDir, beam.PCollection{})
			if len(models) != len(opts) {
				t.Fatalf("%d models for %d learners", len(models), len(opts))
			}
			wantParts := WriteTriplets(s, gs, trip, wantDir)
			for i, o := range opts {
				want := beam.Create(s, simulateGroups(t, bowParts, cut, groupImages, o, trip))
				beam.ParDo0(s, &sameModelFn{}, beam.Impulse(s), beam.SideInput{Input: models[i]}, beam.SideInput{Input: want})
			}
			beam.ParDo0(s, &samePartsFn{Got: gotDir, Want: wantDir, Groups: groups}, beam.Impulse(s),
				beam.SideInput{Input: tripParts}, beam.SideInput{Input: wantParts})
			pr, err := ptest.RunWithMetrics(p)
			if err != nil {
				t.Fatal(err)
			}
			if n := sum(counters(pr, "test", "models_compared")); n != int64(len(opts)) {
				t.Errorf("%d models compared, want %d", n, len(opts))
			}
			if n := sum(counters(pr, "test", "parts_compared")); n != 1 {
				t.Errorf("parts compared %d times, want 1", n)
			}
			if n := sum(counters(pr, "train", "group_loads")); n != int64(groups*rounds) {
				t.Errorf("train/group_loads = %d, want %d groups × %d rounds", n, groups, rounds)
			}
			var rows int64
			for g := range groups {
				name := formats.ShardName(TripletsName, g, groups)
				got, err := os.ReadFile(filepath.Join(gotDir, name))
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(wantDir, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes, WriteTriplets' %d, or other bytes", name, len(got), len(want))
				}
				trips, err := fileio.ReadFile[formats.Triplet](context.Background(), filepath.Join(wantDir, name))
				if err != nil {
					t.Fatal(err)
				}
				rows += int64(len(trips))
			}
			// Prism names steps by transform id: one is WriteTriplets', the
			// other TrainGroupsFrom's round 0.
			sampled := counters(pr, "triplets", "sampled")
			if len(sampled) != 2 {
				t.Errorf("triplets/sampled counted by %d steps, want 2: %v", len(sampled), sampled)
			}
			for step, n := range sampled {
				if n != rows {
					t.Errorf("triplets/sampled = %d in step %s, want %d", n, step, rows)
				}
			}
			for _, dir := range []string{gotDir, wantDir} {
				if files, _ := os.ReadDir(dir); len(files) != groups {
					t.Errorf("%d files under %s, want %d", len(files), dir, groups)
				}
			}
		})
	}
}

// TestTrainGroupsNoLearners: without learners TrainGroupsFrom only writes
// the triplets.
func TestTrainGroupsNoLearners(t *testing.T) {
	bowParts, cut := bowCorpus(t, 60, 3, 12)
	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	gs := Groups(s, beam.CreateList(s, bowParts), beam.Create(s, cut), beam.PCollection{}, 20, 0, 1, 0)
	models, _, tripParts := TrainGroupsFrom(s, gs, nil, triplets.Options{PerQuery: 2, Seed: 1}, dir, beam.PCollection{})
	if models != nil || !tripParts.IsValid() {
		t.Fatalf("%d models, triplets parts valid: %v", len(models), tripParts.IsValid())
	}
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir(dir); len(files) != 3 {
		t.Errorf("%d triplets files, want 3", len(files))
	}
}

// TestTrainGroupsRoundsMustAgree: learners that do not share their rounds,
// or train none, are a mistake in the pipeline's construction.
func TestTrainGroupsRoundsMustAgree(t *testing.T) {
	for _, opts := range [][]train.ShardOptions{
		{{Learner: "solis-ada", Dim: 4, Shards: 1, Rounds: 1}, {Learner: "solis-tg", Dim: 4, Shards: 1, Rounds: 2}},
		{{Learner: "solis-ada", Dim: 4, Shards: 1, Rounds: 0}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("rounds %d, %d: no panic", opts[0].Rounds, opts[len(opts)-1].Rounds)
				}
			}()
			_, s := beam.NewPipelineWithRoot()
			TrainGroupsFrom(s, beam.Impulse(s), opts, triplets.Options{PerQuery: 1}, t.TempDir(), beam.PCollection{})
		}()
	}
}

// A group trains for seconds: its step takes the learners' states paired
// with it, and no side input (testkitbeam.SideInputs).
func TestTrainGroupsTakeNoSideInputs(t *testing.T) {
	opts := []train.ShardOptions{{Learner: "solis-ada", Dim: 4, Shards: 1, Rounds: 2}}
	p, s := beam.NewPipelineWithRoot()
	gs := Groups(s, beam.Create(s, formats.Part{}), beam.Create(s, split.Cut{}), beam.PCollection{}, 10, 0, 1, 1)
	TrainGroupsFrom(s, gs, opts, triplets.Options{PerQuery: 1}, t.TempDir(), beam.PCollection{})
	if got := testkitbeam.SideInputs(t, p, (*trainGroupFn)(nil)); !slices.Equal(got, []int{0, 0}) {
		t.Errorf("the rounds' group steps take %v side inputs, want none", got)
	}
}
