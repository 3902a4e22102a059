package formats

import (
	"fmt"
	"hash/fnv"
	"reflect"
)

// Keyed is implemented by every row type. Key identifies a row for sharding
// (see ShardOf) and orders rows inside a file, so that a re-run with the same
// input writes byte-identical files. Keys of different rows should differ;
// ties are allowed but then the writer has to break them some other way.
type Keyed interface {
	Key() string
}

// ShardName returns the file name of one shard of a sharded output:
// ShardName("bow", 1, 4) is "bow-00001-of-00004.parquet".
func ShardName(prefix string, shard, shards int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.parquet", prefix, shard, shards)
}

// ShardOf returns the shard in [0, shards) that a row with the given key
// belongs to: FNV-1a (32 bit) of the key modulo shards.
func ShardOf(key string, shards int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(shards))
}

// wordKey zero-pads a word id to the ten digits of the largest uint32, so
// that lexical order is numeric order.
func wordKey(id uint32) string { return fmt.Sprintf("%010d", id) }

// Key returns ImageID.
func (r Image) Key() string { return r.ImageID }

// Key returns ImageID. One image may have several dead letters (one per
// stage); they share the key.
func (r DeadLetter) Key() string { return r.ImageID }

// Key returns ImageID.
func (r Features) Key() string { return r.ImageID }

// Key returns WordID zero-padded to 10 digits.
func (r Word) Key() string { return wordKey(r.WordID) }

// Key returns WordID zero-padded to 10 digits.
func (r WordStat) Key() string { return wordKey(r.WordID) }

// Key returns ImageID.
func (r BoW) Key() string { return r.ImageID }

// Key returns Seq as 20 zero-padded digits, offset by 2^63 so that lexical
// order is numeric order for negative values too.
func (r Triplet) Key() string { return fmt.Sprintf("%020d", uint64(r.Seq)^(1<<63)) }

// Key returns Learner + "/" + WordID zero-padded to 10 digits.
func (r ModelWeight) Key() string { return r.Learner + "/" + wordKey(r.WordID) }

// Key returns Learner + "/" + Index zero-padded to 10 digits.
func (r ModelTensor) Key() string { return r.Learner + "/" + wordKey(uint32(r.Index)) }

// Key returns Learner + "/" + WordID zero-padded to 10 digits.
func (r Posting) Key() string { return r.Learner + "/" + wordKey(r.WordID) }

// Key returns Method + "/" + Relevance.
func (r ReportRow) Key() string { return r.Method + "/" + r.Relevance }

// RowTypes lists the reflect.Type of every row type in this package.
var RowTypes = []reflect.Type{
	reflect.TypeFor[Image](),
	reflect.TypeFor[DeadLetter](),
	reflect.TypeFor[Features](),
	reflect.TypeFor[Word](),
	reflect.TypeFor[WordStat](),
	reflect.TypeFor[BoW](),
	reflect.TypeFor[Triplet](),
	reflect.TypeFor[ModelWeight](),
	reflect.TypeFor[ModelTensor](),
	reflect.TypeFor[Posting](),
	reflect.TypeFor[ReportRow](),
	reflect.TypeFor[QueryScore](),
}

// Compile-time checks.
var (
	_ Keyed = Image{}
	_ Keyed = DeadLetter{}
	_ Keyed = Features{}
	_ Keyed = Word{}
	_ Keyed = WordStat{}
	_ Keyed = BoW{}
	_ Keyed = Triplet{}
	_ Keyed = ModelWeight{}
	_ Keyed = ModelTensor{}
	_ Keyed = Posting{}
	_ Keyed = ReportRow{}
)
