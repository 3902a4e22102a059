package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
)

// curvePoint is one setting of a search structure: its recall@1 and its
// throughput in descriptors per CPU-second.
type curvePoint struct {
	name         string
	recall, rate float64
}

// rateAt returns the throughput the curve reaches at recall r, interpolated
// between the two settings whose recalls bracket r, linearly in recall and
// in the logarithm of the throughput (throughput falls about
// geometrically as recall rises). ok is false when r is outside the
// curve's recalls. Points of equal recall keep the fastest.
func rateAt(curve []curvePoint, r float64) (rate float64, ok bool) {
	c := slices.Clone(curve)
	slices.SortFunc(c, func(a, b curvePoint) int {
		return cmp.Or(cmp.Compare(a.recall, b.recall), cmp.Compare(b.rate, a.rate))
	})
	c = slices.CompactFunc(c, func(a, b curvePoint) bool { return a.recall == b.recall })
	for i, p := range c {
		if p.recall == r {
			return p.rate, true
		}
		if p.recall > r {
			if i == 0 {
				return 0, false
			}
			q := c[i-1]
			t := (r - q.recall) / (p.recall - q.recall)
			return math.Exp(math.Log(q.rate) + t*(math.Log(p.rate)-math.Log(q.rate))), true
		}
	}
	return 0, false
}

// equalRecall prints, for every point of either curve whose recall the
// other curve spans, both throughputs at that recall and ours/theirs.
func equalRecall(w io.Writer, ours, theirs []curvePoint) {
	if len(ours) == 0 || len(theirs) == 0 {
		return
	}
	fmt.Fprintln(w, "at equal recall@1 (the other curve interpolated):")
	for _, p := range theirs {
		if r, ok := rateAt(ours, p.recall); ok {
			fmt.Fprintf(w, "  recall %.4f (%s): ours %.0f desc/CPU-s (interpolated), faiss %.0f: ours/faiss %.2f×\n", p.recall, p.name, r, p.rate, r/p.rate)
		} else {
			fmt.Fprintf(w, "  recall %.4f (%s): outside ours' recalls\n", p.recall, p.name)
		}
	}
	for _, p := range ours {
		if r, ok := rateAt(theirs, p.recall); ok {
			fmt.Fprintf(w, "  recall %.4f (%s): ours %.0f desc/CPU-s, faiss %.0f (interpolated): ours/faiss %.2f×\n", p.recall, p.name, p.rate, r, p.rate/r)
		} else {
			fmt.Fprintf(w, "  recall %.4f (%s): outside faiss's recalls\n", p.recall, p.name)
		}
	}
}
