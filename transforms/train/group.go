package train

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/internal/splitmix"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/triplets"
)

// Group is one training group: the bags of words of a subset of the
// corpus and the triplets drawn within it. Training at scale draws and
// learns triplets group by group, so that a worker holds one group's bags
// of words, never the corpus's, and never materialises a triplet's
// feature: it is made from the three bags when the learner steps on it.
// A group is a random subset of the corpus (images are assigned to parts,
// and parts to groups, by a hash of the image id), so drawing the positive
// and the negative from the query's group rather than from the whole
// corpus draws from the same distribution. With one group this is the
// sequential learner over triplets.Sample of the whole corpus, bit for bit.
type Group struct {
	pos      map[string]int
	vecs     []sparse.Vector
	Triplets []formats.Triplet // sorted by Seq: training order
}

// Images returns the number of bags of words the group holds.
func (g *Group) Images() int { return len(g.vecs) }

// NewGroup draws the triplets of the group of bags bows: every labelled
// bag with at least one word is a query, as in triplets.Sample. The images
// the split cut holds out for evaluation are left out of the group, so
// that none of them is ever a triplet's query, positive or negative. Mined
// negatives (opt.Negatives) are mined among the group's bags: the group's
// inverted lists and one score per image, memory of the order of the bags
// the group holds already.
func NewGroup(bows []formats.BoW, cut split.Cut, opt triplets.Options) (*Group, error) {
	g := &Group{pos: make(map[string]int, len(bows)), vecs: make([]sparse.Vector, 0, len(bows))}
	var items []triplets.Item
	for _, b := range bows {
		if cut.IsQuery(b.ImageID, b.Label) {
			continue
		}
		if _, dup := g.pos[b.ImageID]; dup {
			return nil, fmt.Errorf("train: image %s twice in one group", b.ImageID)
		}
		g.pos[b.ImageID] = len(g.vecs)
		g.vecs = append(g.vecs, sparse.Vector{Idx: b.WordIDs, Val: b.Weights})
		if b.Label != "" && len(b.WordIDs) > 0 {
			items = append(items, triplets.Item{ID: b.ImageID, Label: b.Label, Words: g.vecs[len(g.vecs)-1]})
		}
	}
	var err error
	g.Triplets, err = triplets.Sample(items, opt)
	return g, err
}

// TrainShard is TrainShard for shard shard of the round round of rounds,
// whose triplets are the group's with RoundOf(Seq, rounds) = round.
func (g *Group) TrainShard(o ShardOptions, shard int, st RoundState, round, rounds int) (ShardState, error) {
	return g.TrainShardOf(o, shard, st, round, rounds, nil)
}

// TrainShardOf is TrainShard on those of the round's triplets for which
// keep is true, in the same order; a nil keep keeps every one. A learner
// warm-started from an earlier run's model learns from the triplets of
// the images that are new since (package pipelines/bowline).
func (g *Group) TrainShardOf(o ShardOptions, shard int, st RoundState, round, rounds int, keep func(formats.Triplet) bool) (ShardState, error) {
	lo := sort.Search(len(g.Triplets), func(i int) bool { return RoundOf(g.Triplets[i].Seq, rounds) >= round })
	hi := sort.Search(len(g.Triplets), func(i int) bool { return RoundOf(g.Triplets[i].Seq, rounds) > round })
	trips := g.Triplets[lo:hi]
	if keep != nil {
		trips = nil
		for _, t := range g.Triplets[lo:hi] {
			if keep(t) {
				trips = append(trips, t)
			}
		}
	}
	var u sparse.Vector
	return trainEach(o, shard, st, len(trips), func(i int) (Feature, error) {
		t := trips[i]
		u = sparse.TripletFeature(u, g.vecs[g.pos[t.Query]], g.vecs[g.pos[t.Positive]], g.vecs[g.pos[t.Negative]])
		return Feature{Seq: t.Seq, U: u}, nil
	})
}

// ReplayAll, or any negative replay of WarmKeep, keeps every triplet: a
// warm-started learner makes one more pass over all of them.
const ReplayAll = -1

// replaySalt makes the draw of the replayed triplets independent of
// RoundOf and ShardOf, which also hash Seq.
const replaySalt = 0x7265706c6179 // "replay"

// WarmKeep returns the triplets, as the keep function of TrainShardOf,
// that a learner warm-started from an earlier run's state trains on:
// those whose query is new, not among carried (sorted ids of the images
// carried over from that run), and a share of the others, so that about
// replay old-query triplets are replayed for each new-query one: none
// when replay is 0, every one when it is negative (ReplayAll) or the
// group has too few.
//
// The new images' triplets alone pull the model towards their queries;
// replaying old queries' triplets alongside keeps the update balanced
// (trainbeam.WarmReplay has the measurements). Which old triplets are
// replayed is decided by a hash of their Seq, not a random stream, so
// that a run is deterministic whatever its sharding, and the share is the
// group's, counted over all its rounds, so that every round replays alike.
func (g *Group) WarmKeep(carried []string, replay float64) func(formats.Triplet) bool {
	isOld := func(t formats.Triplet) bool {
		_, found := slices.BinarySearch(carried, t.Query)
		return found
	}
	if replay < 0 {
		return nil
	}
	var old, young int
	for _, t := range g.Triplets {
		if isOld(t) {
			old++
		} else {
			young++
		}
	}
	share := 0.0
	if old > 0 {
		share = math.Min(1, replay*float64(young)/float64(old))
	}
	// Keep an old triplet when its hash, as a fraction of 2⁶⁴, is below
	// the share: a share of 1 keeps them all.
	cut := uint64(math.MaxUint64)
	if share < 1 {
		cut = uint64(share * (1 << 64))
	}
	return func(t formats.Triplet) bool {
		if !isOld(t) {
			return true
		}
		return share > 0 && splitmix.Mix64(uint64(t.Seq)^replaySalt) <= cut
	}
}

// Groups returns the number of training groups of a corpus of n images
// holding postings postings (words of their bags; 0 if unknown) in parts
// parts: ⌈n/groupImages⌉ or ⌈postings/groupPostings⌉, whichever is more
// (groupPostings 0: no bound by postings), at least shards (the learners'
// parallelism asked for), at most parts, and at least 1. A group's bags
// are what training holds, and a real photo's hold 15–30 times the words
// of a synthetic image's, so the postings bound the groups of photos.
func Groups(n, postings int64, parts, groupImages, groupPostings, shards int) int {
	g := max(formats.Parts(n, groupImages), shards)
	if groupPostings > 0 {
		g = max(g, formats.Parts(postings, groupPostings))
	}
	return max(min(g, parts), 1)
}
