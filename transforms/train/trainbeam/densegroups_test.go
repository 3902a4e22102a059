package trainbeam

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
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
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*checkDigestFn)(nil)).Elem())
}

// modelDigest is what a model is compared by: everything but Seconds, the
// state as a hash of its bits, so that a large state (oasis-full's is
// d² = 809²) need not travel in the pipeline.
type modelDigest struct {
	Learner, Params string
	Dims            []int
	Steps           int64
	StateHash       uint64
	Triplets        int64
	Violations      int64
	MeanLoss        float64
}

func digestOf(m learners.Model) modelDigest {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d;", m.State.Learner, m.State.Steps, len(m.State.Vectors))
	var b [8]byte
	for _, v := range m.State.Vectors {
		fmt.Fprintf(h, "%d:", len(v))
		for _, x := range v {
			u := math.Float64bits(x)
			for i := range b {
				b[i] = byte(u >> (8 * i))
			}
			h.Write(b[:])
		}
	}
	return modelDigest{Learner: m.Learner, Params: m.Params, Dims: m.Dims, Steps: m.State.Steps, StateHash: h.Sum64(),
		Triplets: m.Triplets, Violations: m.Violations, MeanLoss: m.MeanLoss}
}

// checkDigestFn fails the pipeline unless the model is Want, bit for bit;
// with StateOnly, only its state and triplet count are compared.
type checkDigestFn struct {
	Want      modelDigest
	StateOnly bool
}

func (f *checkDigestFn) ProcessElement(m learners.Model) error {
	got := digestOf(m)
	if f.StateOnly {
		got.Params, got.Violations, got.MeanLoss = f.Want.Params, f.Want.Violations, f.Want.MeanLoss
	}
	if !reflect.DeepEqual(got, f.Want) {
		return fmt.Errorf("model\n got %+v\nwant %+v", got, f.Want)
	}
	return nil
}

// denseCorpus is a small corpus on disk: features parts and triplets parts
// as the pipeline writes them, and what the dense learners should see of
// it.
type denseCorpus struct {
	features  []formats.Features
	featParts []formats.Part
	tripParts []formats.Part
	groups    [][]formats.Triplet // by group, in Seq order
	moments   global.Moments
	rows      map[string][]float32 // scaled
	dropped   int                  // triplets naming an image without global features
}

// corruptPart is the features part newDenseCorpus corrupts when asked:
// no triplet names an image of it.
const corruptPart = 0

// corpusOptions shape a denseCorpus.
type corpusOptions struct {
	// Groups of Images images and Trips triplets each, features in Parts
	// parts.
	Groups, Images, Trips, Parts int
	// With Drops, two triplets of group 0 name an image without global
	// features: one with no features row, one with a row without them.
	Drops bool
	// With Corrupt, features part corruptPart, which no triplet needs, is
	// not a Parquet file.
	Corrupt bool
	// With EarlyRounds > 0, the triplets of the last group all fall in
	// round 0 of EarlyRounds: it has none in the later rounds.
	EarlyRounds int
}

// newDenseCorpus writes, under a fresh directory, o.Parts features parts
// and one triplets part per group. The images of group g are labelled in
// two classes by their first modality; the triplets of group g name only
// images of group g and have train.ShardOf(Seq, groups) = g.
func newDenseCorpus(t *testing.T, o corpusOptions) *denseCorpus {
	t.Helper()
	groups, images, tripsPerGroup, parts, drops, corrupt := o.Groups, o.Images, o.Trips, o.Parts, o.Drops, o.Corrupt
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(11, 12))
	c := &denseCorpus{groups: make([][]formats.Triplet, groups), rows: map[string][]float32{}}
	// Values are multiples of 1/256 below 2, so the moments' sums are
	// exact in any order: the pipeline's combine, however it associates
	// them, gives the moments computed here.
	// The class shows in the first few values of the modalities with
	// signal, weakly enough that the learners have something to learn.
	mk := func(n, class int, signal bool) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.IntN(256)) / 256
			if signal && i < 4 {
				x[i] += float32(class) / 2
			}
		}
		return x
	}
	// id returns a fresh image id of group g that is not in the corrupt part.
	next := 0
	id := func(g int) string {
		for {
			s := fmt.Sprintf("g%d-img%04d", g, next)
			next++
			if !corrupt || formats.ShardOf(s, parts) != corruptPart {
				return s
			}
		}
	}
	byGroup := make([][]formats.Features, groups)
	for g := range groups {
		for i := range images {
			class := i % 2
			f := formats.Features{ImageID: id(g), Label: fmt.Sprintf("c%d", class), Width: 8, Height: 8,
				X: []float32{1, 2}, Y: []float32{3, 4}, Scale: []float32{1, 1}, Angle: []float32{0, 1},
				Descriptors: [][]byte{make([]byte, 128), make([]byte, 128)},
				Colour:      mk(global.ColourDim, class, true), Edge: mk(global.EdgeDim, class, false),
				Gabor: mk(global.GaborDim, class, false), LBP: mk(global.LBPDim, class, false),
				GIST: mk(global.GISTDim, class, true)}
			byGroup[g] = append(byGroup[g], f)
		}
		c.features = append(c.features, byGroup[g]...)
	}
	// The images of the corrupt part, which no triplet names.
	if corrupt {
		for i := 0; i < 3; {
			s := fmt.Sprintf("unused%04d", next)
			next++
			if formats.ShardOf(s, parts) == corruptPart {
				c.features = append(c.features, formats.Features{ImageID: s, Label: "c0",
					Colour: mk(global.ColourDim, 0, true), Edge: mk(global.EdgeDim, 0, false),
					Gabor: mk(global.GaborDim, 0, false), LBP: mk(global.LBPDim, 0, false), GIST: mk(global.GISTDim, 0, true)})
				i++
			}
		}
	}
	for _, f := range c.features {
		x, err := global.Concat(nil, f.Colour, f.Edge, f.Gabor, f.LBP, f.GIST)
		if err != nil {
			t.Fatal(err)
		}
		c.moments.Add(x)
	}
	sc, err := global.NewScaler(c.moments, global.Dims)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range c.features {
		x, _ := global.Concat(nil, f.Colour, f.Edge, f.Gabor, f.LBP, f.GIST)
		c.rows[f.ImageID] = sc.Apply(nil, x)
	}
	seq := func(g int) int64 {
		for {
			s := int64(r.Uint64() >> 1)
			early := o.EarlyRounds > 0 && g == groups-1
			if train.ShardOf(s, groups) == g && (!early || train.RoundOf(s, o.EarlyRounds) == 0) {
				return s
			}
		}
	}
	for g := range groups {
		imgs := byGroup[g]
		for len(c.groups[g]) < tripsPerGroup {
			q, p, n := imgs[r.IntN(len(imgs))], imgs[r.IntN(len(imgs))], imgs[r.IntN(len(imgs))]
			if q.ImageID == p.ImageID || q.Label != p.Label || q.Label == n.Label {
				continue
			}
			c.groups[g] = append(c.groups[g], formats.Triplet{Seq: seq(g), Query: q.ImageID, Positive: p.ImageID, Negative: n.ImageID})
		}
	}
	if drops {
		// An image described without global features: in the features,
		// but without a dense row.
		bare := formats.Features{ImageID: id(0), Label: "c0"}
		c.features = append(c.features, bare)
		q, ng := byGroup[0][0], byGroup[0][1]
		c.groups[0] = append(c.groups[0],
			formats.Triplet{Seq: seq(0), Query: q.ImageID, Positive: id(0), Negative: ng.ImageID}, // not described at all
			formats.Triplet{Seq: seq(0), Query: q.ImageID, Positive: q.ImageID, Negative: bare.ImageID})
		c.dropped = 2
	}
	ctxWrite := func(path string, rows any) {
		t.Helper()
		if err := fileio.WriteFileOf(ctx, path, rows); err != nil {
			t.Fatal(err)
		}
	}
	for g, trips := range c.groups {
		sort.Slice(trips, func(i, j int) bool { return trips[i].Seq < trips[j].Seq })
		path := fileio.Join(dir, formats.ShardName(TripletsName, g, groups))
		ctxWrite(path, trips)
		c.tripParts = append(c.tripParts, formats.Part{Name: TripletsName, Part: g, Parts: groups, Path: path, Rows: int64(len(trips))})
	}
	byPart := make([][]formats.Features, parts)
	for _, f := range c.features {
		p := formats.ShardOf(f.ImageID, parts)
		byPart[p] = append(byPart[p], f)
	}
	for p, feats := range byPart {
		path := fileio.Join(dir, formats.ShardName("features", p, parts))
		if corrupt && p == corruptPart {
			if len(feats) == 0 {
				t.Fatal("the corrupt part holds no image")
			}
			if err := fileio.WriteBytes(ctx, path, []byte("not a parquet file")); err != nil {
				t.Fatal(err)
			}
		} else {
			ctxWrite(path, feats)
		}
		c.featParts = append(c.featParts, formats.Part{Name: "features", Part: p, Parts: parts, Path: path, Rows: int64(len(feats))})
	}
	return c
}

// features returns the triplets' features, those naming an image without
// global features left out, by group.
func (c *denseCorpus) feats() [][]train.Feature {
	out := make([][]train.Feature, len(c.groups))
	for g, trips := range c.groups {
		for _, t := range trips {
			x, okx := c.rows[t.Query]
			p, okp := c.rows[t.Positive]
			n, okn := c.rows[t.Negative]
			if okx && okp && okn {
				out[g] = append(out[g], train.Feature{Seq: t.Seq, X: x, P: p, N: n})
			}
		}
	}
	return out
}

// simulate is ShardedDenseGroups written out as a loop: round by round,
// group by group from the round's state, groups without triplets left
// out of the average.
func (c *denseCorpus) simulate(t *testing.T, opt train.ShardOptions) learners.Model {
	t.Helper()
	l, err := train.NewTrainer(opt)
	if err != nil {
		t.Fatal(err)
	}
	st := train.RoundState{State: l.State()}
	byGroup := c.feats()
	for r := range opt.Rounds {
		var shards []train.ShardState
		for g, feats := range byGroup {
			var mine []train.Feature
			for _, ft := range feats {
				if train.RoundOf(ft.Seq, opt.Rounds) == r {
					mine = append(mine, ft)
				}
			}
			if len(mine) == 0 {
				continue
			}
			sh, err := train.TrainShard(opt, g, st, mine)
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

func tripletsDropped(pr beam.PipelineResult) int64 {
	var n int64
	for _, c := range pr.Metrics().AllMetrics().Counters() {
		if c.Key.Namespace == "train" && c.Key.Name == "triplets_without_bow" {
			n += c.Committed
		}
	}
	return n
}

// TestShardedDenseGroupsOneGroupIsSequential: with one group the model is
// the sequential learner's over the same triplets, bit for bit, for any
// number of rounds.
func TestShardedDenseGroupsOneGroupIsSequential(t *testing.T) {
	c := newDenseCorpus(t, corpusOptions{Groups: 1, Images: 16, Trips: 120, Parts: 3})
	feats := c.feats()[0]
	if len(feats) != 120 {
		t.Fatalf("%d features, want 120", len(feats))
	}
	for _, name := range []string{"oasis-full", "lomdml"} {
		if !slices.Contains(learners.DenseNames(), name) {
			t.Fatalf("no dense learner %s", name)
		}
		params := map[string]float64{}
		if name == "lomdml" {
			params["rank"] = 3
		}
		opt := train.ShardOptions{Learner: name, Params: params, Dims: global.Dims, Shards: 1, Rounds: 1}
		// The sequential learner: one trainer stepping over every triplet
		// in Seq order.
		seq, err := train.NewTrainer(opt)
		if err != nil {
			t.Fatal(err)
		}
		first := seq.State()
		var loss float64
		var viol int64
		for _, ft := range feats {
			ls, err := seq.Step(ft)
			if err != nil {
				t.Fatal(err)
			}
			if ls > 0 {
				loss += ls
				viol++
			}
		}
		if reflect.DeepEqual(first.Vectors, seq.State().Vectors) || viol == 0 {
			t.Fatalf("%s learned nothing: the test would prove little", name)
		}
		for _, rounds := range []int{1, 3} {
			opt.Rounds = rounds
			m, err := train.Finish(opt, train.RoundState{State: seq.State(), Triplets: int64(len(feats)), Loss: loss, Violations: viol})
			if err != nil {
				t.Fatal(err)
			}
			want := digestOf(m)
			p, s := beam.NewPipelineWithRoot()
			featParts := beam.CreateList(s, c.featParts)
			got := ShardedDenseGroups(s, beam.CreateList(s, c.tripParts), featParts, DenseMoments(s, featParts), opt)
			// Over several rounds the loss is summed round by round, so
			// only the state and the counts are the sequential pass's.
			beam.ParDo0(s, &checkDigestFn{Want: want, StateOnly: rounds > 1}, got)
			if err := ptest.Run(p); err != nil {
				t.Fatalf("%s, %d rounds: %v", name, rounds, err)
			}
		}
	}
}

// TestShardedDenseGroups: with several groups and rounds the model is the
// groups' states averaged round by round, bit for bit (a group without
// triplets in a round left out of its average); the triplets naming an image without global features are
// dropped and counted; the features part no triplet needs, which is not
// even a Parquet file, is never read.
func TestShardedDenseGroups(t *testing.T) {
	const groups, parts, rounds = 4, 4, 3
	c := newDenseCorpus(t, corpusOptions{Groups: groups, Images: 12, Trips: 60, Parts: parts, Drops: true, Corrupt: true, EarlyRounds: rounds})
	opt := train.ShardOptions{Learner: "lomdml", Params: map[string]float64{"rank": 3}, Dims: global.Dims, Shards: groups, Rounds: rounds}
	want := c.simulate(t, opt)
	kept := 0
	for _, f := range c.feats() {
		kept += len(f)
	}
	if want.Triplets != int64(kept) || kept != groups*60 {
		t.Fatalf("simulation over %d triplets, %d kept, want %d", want.Triplets, kept, groups*60)
	}
	one := c.simulate(t, train.ShardOptions{Learner: opt.Learner, Params: opt.Params, Dims: opt.Dims, Shards: groups, Rounds: 1})
	if reflect.DeepEqual(want.State, one.State) {
		t.Fatal("three rounds gave the one-round model: the test would not see the rounds")
	}

	p, s := beam.NewPipelineWithRoot()
	model := ShardedDenseGroups(s, beam.CreateList(s, c.tripParts), beam.CreateList(s, c.featParts), beam.Create(s, c.moments), opt)
	beam.ParDo0(s, &checkDigestFn{Want: digestOf(want)}, model)
	pr, err := ptest.RunWithMetrics(p)
	if err != nil {
		t.Fatal(err)
	}
	if n := tripletsDropped(pr); n != int64(c.dropped) {
		t.Errorf("counter train/triplets_without_bow = %d, want %d", n, c.dropped)
	}

}

// TestShardedDenseGroupsReadsOnlyNeededParts: the corrupt features part
// is harmless while no triplet needs it, and fails the pipeline once one
// does: it is read exactly when needed.
func TestShardedDenseGroupsReadsOnlyNeededParts(t *testing.T) {
	const groups, parts = 2, 3
	opt := train.ShardOptions{Learner: "lomdml", Params: map[string]float64{"rank": 3}, Dims: global.Dims, Shards: groups, Rounds: 2}
	run := func(c *denseCorpus) error {
		p, s := beam.NewPipelineWithRoot()
		model := ShardedDenseGroups(s, beam.CreateList(s, c.tripParts), beam.CreateList(s, c.featParts), beam.Create(s, c.moments), opt)
		beam.ParDo0(s, &checkDigestFn{Want: digestOf(c.simulate(t, opt))}, model)
		return ptest.Run(p)
	}
	c := newDenseCorpus(t, corpusOptions{Groups: groups, Images: 10, Trips: 40, Parts: parts, Corrupt: true})
	if err := run(c); err != nil {
		t.Fatalf("with an unneeded corrupt part: %v", err)
	}

	// A triplet of group 1 whose negative is in the corrupt part.
	var unused string
	for _, f := range c.features {
		if strings.HasPrefix(f.ImageID, "unused") {
			unused = f.ImageID
		}
	}
	trips := append([]formats.Triplet(nil), c.groups[1]...)
	trips[0].Negative = unused
	if err := fileio.WriteFile(context.Background(), c.tripParts[1].Path, trips); err != nil {
		t.Fatal(err)
	}
	err := run(c)
	if err == nil || !strings.Contains(err.Error(), c.featParts[corruptPart].Path) {
		t.Fatalf("with a triplet in the corrupt part: %v, want an error reading %s", err, c.featParts[corruptPart].Path)
	}
}

// A group of a dense round trains for seconds: its step takes what it
// reads paired with it, and no side input (testkitbeam.SideInputs).
func TestShardedDenseGroupsTakeNoSideInputs(t *testing.T) {
	opt := train.ShardOptions{Learner: "oasis", Dims: global.Dims, Shards: 1, Rounds: 2}
	p, s := beam.NewPipelineWithRoot()
	parts := beam.Create(s, formats.Part{})
	ShardedDenseGroups(s, parts, parts, beam.Create(s, global.Moments{}), opt)
	if got := testkitbeam.SideInputs(t, p, (*denseGroupShardFn)(nil)); !slices.Equal(got, []int{0, 0}) {
		t.Errorf("the rounds' group steps take %v side inputs, want none", got)
	}
}
