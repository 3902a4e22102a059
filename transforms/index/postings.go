package index

import (
	"sort"

	"github.com/bowline/bowline/formats"
)

// Entry is one image's coordinate x_i on a word i: one posting.
type Entry struct {
	ImageID string
	Value   float32
}

// Posts reports whether a coordinate x on word becomes a posting under the
// weights w (nil: every weight one), the rule Build applies: a word of
// weight zero, or a zero coordinate, adds nothing to any score. A word
// outside w has weight zero.
func Posts(w []float32, word uint32, x float32) bool {
	if x == 0 {
		return false
	}
	return w == nil || (int64(word) < int64(len(w)) && w[word] != 0)
}

// PostingList returns the inverted list of word under the weights w of
// learner (nil: every weight one): its entries sorted by image id, the
// order Build keeps postings in, with the word's weight. entries is sorted
// in place; its entries should all satisfy Posts.
func PostingList(learner string, w []float32, word uint32, entries []Entry) formats.Posting {
	sort.Slice(entries, func(i, j int) bool { return entries[i].ImageID < entries[j].ImageID })
	p := formats.Posting{Learner: learner, WordID: word, Weight: 1, Images: make([]string, len(entries)), Values: make([]float32, len(entries))}
	if w != nil {
		p.Weight = w[word]
	}
	for i, e := range entries {
		p.Images[i], p.Values[i] = e.ImageID, e.Value
	}
	return p
}
