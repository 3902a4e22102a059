package report

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/bowline/bowline/formats"
)

// DeadLetters summarises a run's dead letters (dead-letters-*.parquet):
// how many, of which kinds, and the first few, so a reader of the report
// sees what was lost without opening the file.
type DeadLetters struct {
	Total int64 `json:"total"`
	// Kinds count the dead letters by stage and kind of reason, most
	// frequent first.
	Kinds []DeadKind `json:"kinds,omitempty"`
	// First are the first FirstDeadLetters dead letters by image id, then
	// URI.
	First []formats.DeadLetter `json:"first,omitempty"`
}

// DeadKind counts the dead letters of one stage and kind of reason.
type DeadKind struct {
	Stage  string `json:"stage"`
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// FirstDeadLetters is the number of dead letters the report shows in full.
const FirstDeadLetters = 10

// numbers matches the runs of digits a reason's kind leaves out.
var numbers = regexp.MustCompile(`[0-9]+`)

// reasonKind is a dead letter's reason with what is particular to the image
// taken out — its id, its URI, numbers (line numbers, sizes, offsets) — so
// that the same failure of many images counts as one kind.
func reasonKind(d formats.DeadLetter) string {
	r := d.Reason
	for _, s := range []string{d.URI, d.ImageID} {
		if s != "" {
			r = strings.ReplaceAll(r, s, "…")
		}
	}
	return numbers.ReplaceAllString(r, "N")
}

// SummariseDead summarises the dead letters next yields, in any order, in
// memory bounded by the number of kinds and FirstDeadLetters, not by the
// number of dead letters.
func SummariseDead(next func(*formats.DeadLetter) bool) DeadLetters {
	var out DeadLetters
	counts := map[[2]string]int64{}
	var d formats.DeadLetter
	before := func(a, b formats.DeadLetter) int {
		return cmp.Or(cmp.Compare(a.ImageID, b.ImageID), cmp.Compare(a.URI, b.URI), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Reason, b.Reason))
	}
	for next(&d) {
		out.Total++
		counts[[2]string{d.Stage, reasonKind(d)}]++
		// Keep the smallest FirstDeadLetters: a short sorted list.
		i, _ := slices.BinarySearchFunc(out.First, d, before)
		if i < FirstDeadLetters {
			out.First = slices.Insert(out.First, i, d)
			if len(out.First) > FirstDeadLetters {
				out.First = out.First[:FirstDeadLetters]
			}
		}
		d = formats.DeadLetter{}
	}
	for k, n := range counts {
		out.Kinds = append(out.Kinds, DeadKind{Stage: k[0], Reason: k[1], Count: n})
	}
	slices.SortFunc(out.Kinds, func(a, b DeadKind) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}
