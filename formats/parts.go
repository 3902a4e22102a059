package formats

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Part is one file of a partitioned output, named by the DoFn that wrote
// its rows: the corpus-sized outputs (features, word counts, bags of words,
// per-part indexes) are written from inside the stage that makes them,
// part by part, so that only these small records travel between stages and
// a worker's memory is bounded by the size of a part, not of the corpus.
//
// Images are assigned to parts by ShardOf(ImageID, Parts), so part p of
// every partitioned output holds the same images and a stage can read
// part p of one output and write part p of the next.
type Part struct {
	// Name is the output's name: "features", "counts", "bow", …
	Name string
	// Part and Parts place the file: it is ShardName(Name, Part, Parts).
	Part, Parts int
	// Path is the file's full path, local or gs://.
	Path string
	// Rows is the number of rows in the file.
	Rows int64
	// Keypoints is the number of local descriptors in the file (features
	// parts only).
	Keypoints int64
	// Postings is the number of (word, weight) entries of the file's bags
	// of words (bag-of-words parts only; 0 where unknown): a real photo
	// holds about 1,700 of them and a synthetic image 100, so memory that
	// holds bags is bounded by postings, not by images.
	Postings int64
	// Inputs is the number of rows the DoFn read to make the part (images
	// described, descriptors quantised, bags of words weighted or indexed,
	// images sampled from): with Rows, what went into and came out of the
	// stage.
	Inputs int64
	// StartMillis and EndMillis are when the DoFn started and finished the
	// part, in Unix milliseconds: the stage's time in the report.
	StartMillis, EndMillis int64
	// Carried are the ids, sorted, of the part's images whose features an
	// incremental run carried over unchanged from the previous run (empty
	// in a full run): the later stages carry their word counts over too,
	// and warm-started learners train on the triplets of the other images.
	// Features parts set it; word-count and bag-of-words parts pass it on.
	Carried []string
}

// Timed returns p made from start until now.
func (p Part) Timed(start time.Time) Part {
	p.StartMillis, p.EndMillis = start.UnixMilli(), time.Now().UnixMilli()
	return p
}

// Parts returns the number of parts n items make at perPart items a part:
// ⌈n/perPart⌉, and at least 1.
func Parts(n int64, perPart int) int {
	if perPart < 1 {
		panic("formats: Parts with perPart < 1")
	}
	p := (n + int64(perPart) - 1) / int64(perPart)
	return int(max(p, 1))
}

// PartsFrom returns the number of parts of an incremental run whose
// previous run had prev parts: prev·2^j for the smallest j ≥ 0 that gives
// at least Parts(n, perPart). Since ShardOf is a hash modulo the part
// count, an image of part q of the new run was in part q mod prev of the
// previous run, so a worker making part q reads a single previous part and
// memory stays bounded by a part as the corpus grows.
func PartsFrom(prev int, n int64, perPart int) int {
	if prev < 1 {
		panic("formats: PartsFrom with prev < 1")
	}
	want, p := Parts(n, perPart), prev
	for p < want {
		p *= 2
	}
	return p
}

// ContentOf returns the content identity of an image file's bytes
// (Features.Content): "sha256:" and the SHA-256 of data in hex. A hash of
// the bytes rather than a size and modification time: it is the same
// wherever the file is copied, local or gs://, so a run's features depend
// on the images' bytes alone, and hashing costs a fraction of a
// millisecond an image against tens for decoding and SIFT, which read the
// bytes anyway.
func ContentOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
