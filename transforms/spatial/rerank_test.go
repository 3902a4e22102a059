package spatial

import (
	"slices"
	"testing"
)

// Re-ranking puts the verified first, most inliers first, then the higher
// score, and keeps the learner's order wherever those cannot decide: among
// the unverified, and among verified with equal inliers and score.
func TestRerank(t *testing.T) {
	type hit struct {
		name string
		r    Ranked
	}
	hits := []hit{
		{"u.9", Ranked{Score: 0.9}},
		{"v5.5", Ranked{Score: 0.5, Inliers: 5, Verified: true}},
		{"u.8", Ranked{Score: 0.8, Inliers: 30}}, // inliers below the least: not verified
		{"v8.1", Ranked{Score: 0.1, Inliers: 8, Verified: true}},
		{"v5.7a", Ranked{Score: 0.7, Inliers: 5, Verified: true}},
		{"u.95", Ranked{Score: 0.95}},
		{"v5.7b", Ranked{Score: 0.7, Inliers: 5, Verified: true}},
	}
	Rerank(hits, func(h *hit) Ranked { return h.r })
	var got []string
	for _, h := range hits {
		got = append(got, h.name)
	}
	if want := []string{"v8.1", "v5.7a", "v5.7b", "v5.5", "u.9", "u.8", "u.95"}; !slices.Equal(got, want) {
		t.Errorf("re-ranked %v, want %v", got, want)
	}
	if c := CompareReranked(hits[1].r, hits[2].r); c != 0 {
		t.Errorf("two verified of equal inliers and score compare %d, want 0", c)
	}
	if c := CompareReranked(Ranked{Score: 0.1}, Ranked{Score: 0.9}); c != 0 {
		t.Errorf("two unverified compare %d, want 0 (the learner's order stays)", c)
	}
}
