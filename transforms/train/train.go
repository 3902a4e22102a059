// Package train holds the training logic of the similarity learners of
// package learners as the pipeline runs them, without Beam: the per-triplet
// features the online learners consume (Feature), training groups that
// draw and learn their own triplets (Group, Groups), one shard of a
// sharded pass with periodic parameter averaging (ShardOptions,
// TrainShard, Average, Finish; RoundOf says which round a triplet belongs
// to), and the batch learners of global features on a bounded,
// hash-chosen sample of images (Sample, Fit). Package trainbeam wires them
// into Beam transforms.
//
// # Sharded training
//
// The corpus is cut into training groups, random subsets chosen by a hash
// of the image id (Groups says how many); each group is a shard, holding
// its images' bags of words and drawing its triplets among them. A pass
// over a group's triplets, in Seq order, is cut into Rounds rounds by
// ranges of Seq (RoundOf); every shard starts a round from the round's
// state, learns from its triplets of the round in Seq order, and hands
// back its state; the states are averaged into the next round's
// (Average). With one group and one round this is the sequential learner,
// bit for bit: the learners' states hold their running sums, not derived
// weights, so a restored learner continues exactly where it stopped.
package train

import (
	"github.com/bowline/bowline/learners/sparse"

	// The learners register themselves with learners.New and
	// learners.NewDense by name.
	_ "github.com/bowline/bowline/learners/euclidean"
	_ "github.com/bowline/bowline/learners/itq"
	_ "github.com/bowline/bowline/learners/lego"
	_ "github.com/bowline/bowline/learners/mglp"
	_ "github.com/bowline/bowline/learners/oasis"
	_ "github.com/bowline/bowline/learners/omdml"
	_ "github.com/bowline/bowline/learners/rca"
	_ "github.com/bowline/bowline/learners/solis"
	_ "github.com/bowline/bowline/learners/ssml"
)

// Feature is the learner's view of a triplet: u = x ⊙ (x+ − x−) for a
// bag-of-words learner, or the three images' dense global features X, P
// (positive) and N (negative) for a dense one.
type Feature struct {
	Seq     int64
	U       sparse.Vector
	X, P, N []float32
}
