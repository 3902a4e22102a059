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
	First deadRows `json:"first,omitempty"`
}

// DeadKind counts the dead letters of one stage and kind of reason: those
// whose reasons differ only in the image's own id and URI and in numbers
// (line numbers, sizes, offsets). Example is the first of their reasons,
// whole: a pattern with the numbers taken out would also mangle the ids
// and paths in the reason that are not the image's own.
type DeadKind struct {
	Stage   string `json:"stage"`
	Example string `json:"example"`
	Count   int64  `json:"count"`
}

// FirstDeadLetters is the number of dead letters the report shows in full.
const FirstDeadLetters = 10

// numbers matches the runs of digits a reason's kind leaves out.
var numbers = regexp.MustCompile(`[0-9]+`)

// reasonKind is what groups a dead letter's reason with others of its
// kind: the reason with what is particular to the image taken out — its
// id, its URI, numbers — so that the same failure of many images counts
// as one kind. It is a key, never shown.
func reasonKind(d formats.DeadLetter) string {
	r := d.Reason
	for _, s := range []string{d.URI, d.ImageID} {
		if s != "" {
			r = strings.ReplaceAll(r, s, "\x00")
		}
	}
	return numbers.ReplaceAllString(r, "0")
}

// SummariseDead summarises the dead letters next yields, in any order, in
// memory bounded by the number of kinds and FirstDeadLetters, not by the
// number of dead letters.
func SummariseDead(next func(*formats.DeadLetter) bool) DeadLetters {
	var out DeadLetters
	type kind struct{ stage, key string }
	counts := map[kind]int64{}
	examples := map[kind]string{}
	var d formats.DeadLetter
	before := func(a, b formats.DeadLetter) int {
		return cmp.Or(cmp.Compare(a.ImageID, b.ImageID), cmp.Compare(a.URI, b.URI), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Reason, b.Reason))
	}
	for next(&d) {
		out.Total++
		k := kind{d.Stage, reasonKind(d)}
		counts[k]++
		if e, ok := examples[k]; !ok || d.Reason < e {
			examples[k] = d.Reason
		}
		// Keep the smallest FirstDeadLetters: a short sorted list.
		i, _ := slices.BinarySearchFunc([]formats.DeadLetter(out.First), d, before)
		if i < FirstDeadLetters {
			out.First = slices.Insert(out.First, i, d)
			if len(out.First) > FirstDeadLetters {
				out.First = out.First[:FirstDeadLetters]
			}
		}
		d = formats.DeadLetter{}
	}
	for k, n := range counts {
		out.Kinds = append(out.Kinds, DeadKind{Stage: k.stage, Example: examples[k], Count: n})
	}
	slices.SortFunc(out.Kinds, func(a, b DeadKind) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Example, b.Example))
	})
	return out
}
