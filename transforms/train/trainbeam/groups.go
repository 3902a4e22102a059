package trainbeam

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/triplets"
)

func init() {
	for _, t := range []any{(*Group)(nil), (*groupsFn)(nil), (*writeTripletsFn)(nil), (*formats.Part)(nil), (*split.Cut)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// Group names the bag-of-words files of one training group
// (train.Group): the parts p with p mod Groups = Index, and the split
// whose held-out images it leaves out.
type Group struct {
	Index, Groups int
	Paths         []string
	Cut           split.Cut
	// Loads is the most groups one worker process holds loaded at once
	// (0: no limit). A runner may run every group of a round in one
	// process side by side — Prism does — and a loaded group is the
	// largest thing training holds, so this, not the corpus, bounds a
	// worker's memory.
	Loads int
	// Carried are the ids, sorted, of the group's images carried over
	// from the previous run by an incremental run (formats.Part.Carried):
	// a warm-started learner trains only on the triplets whose query is
	// not among them.
	Carried []string
}

// Groups splits bag-of-words parts (PCollection<formats.Part>) into
// train.Groups(images, postings, parts, groupImages, groupPostings,
// shards) training groups and
// returns PCollection<Group>. The groups leave out the images held out by
// the split (single-element PCollection<split.Cut>).
//
// gate is any PCollection the groups wait for (a check that must pass
// before training starts), or an invalid one. loads is Group.Loads.
func Groups(s beam.Scope, bowParts, cut, gate beam.PCollection, groupImages, groupPostings, shards, loads int) beam.PCollection {
	s = s.Scope("train.Groups")
	if !gate.IsValid() {
		gate = beam.Impulse(s)
	}
	return beam.ParDo(s, &groupsFn{GroupImages: groupImages, GroupPostings: groupPostings, Shards: shards, Loads: loads}, beam.Impulse(s),
		beam.SideInput{Input: bowParts}, beam.SideInput{Input: cut}, beam.SideInput{Input: gate})
}

type groupsFn struct{ GroupImages, GroupPostings, Shards, Loads int }

func (f *groupsFn) ProcessElement(_ []byte, parts func(*formats.Part) bool, cut split.Cut, _ func(*beam.T) bool, emit func(Group)) {
	var all []formats.Part
	var p formats.Part
	var n, postings int64
	for parts(&p) {
		all = append(all, p)
		n += p.Rows
		postings += p.Postings
	}
	if len(all) == 0 {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Part < all[j].Part })
	g := train.Groups(n, postings, len(all), f.GroupImages, f.GroupPostings, f.Shards)
	groups := make([]Group, g)
	for i := range groups {
		groups[i] = Group{Index: i, Groups: g, Cut: cut, Loads: f.Loads}
	}
	for i, p := range all {
		groups[i%g].Paths = append(groups[i%g].Paths, p.Path)
		groups[i%g].Carried = append(groups[i%g].Carried, p.Carried...)
	}
	for _, gr := range groups {
		sort.Strings(gr.Carried)
		emit(gr)
	}
}

// load reads the group's bags of words and draws its triplets, once
// fewer than g.Loads groups are loaded in this process. The caller calls
// release when it no longer needs the group (also after an error).
func (g Group) load(ctx context.Context, opt triplets.Options) (tg *train.Group, release func(), err error) {
	release, err = slots.Acquire(ctx, "train.group", g.Loads)
	if err != nil {
		return nil, release, fmt.Errorf("train: group %d: %w", g.Index, err)
	}
	tg, err = g.read(ctx, opt)
	return tg, release, err
}

func (g Group) read(ctx context.Context, opt triplets.Options) (*train.Group, error) {
	var bows []formats.BoW
	for _, path := range g.Paths {
		err := fileio.ReadEach(ctx, path, func(b *formats.BoW) error {
			bows = append(bows, *b)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("train: group %d: %w", g.Index, err)
		}
	}
	return train.NewGroup(bows, g.Cut, opt)
}

// TripletsName is the name of the triplets output.
const TripletsName = "triplets"

// WriteTriplets draws each group's triplets (PCollection<Group>) and writes
// them, in training order, to dir/triplets-g-of-G.parquet; it returns the
// parts written (PCollection<formats.Part>). The learners draw the same
// triplets again from the same bags, so these files are what they learned
// from, for the reader and for the learners of global features.
func WriteTriplets(s beam.Scope, groups beam.PCollection, opt triplets.Options, dir string) beam.PCollection {
	s = s.Scope("triplets.Write")
	return beam.ParDo(s, &writeTripletsFn{Opt: opt, Dir: dir}, beam.Reshuffle(s, groups))
}

type writeTripletsFn struct {
	Opt triplets.Options
	Dir string

	sampled beam.Counter
}

func (f *writeTripletsFn) ProcessElement(ctx context.Context, g Group) (formats.Part, error) {
	if f.sampled == (beam.Counter{}) {
		f.sampled = beam.NewCounter("triplets", "sampled")
	}
	start := time.Now()
	tg, release, err := g.load(ctx, f.Opt)
	defer release()
	if err != nil {
		return formats.Part{}, err
	}
	return writeGroupTriplets(ctx, f.Dir, g, tg, f.sampled, start)
}
