package evaluate

import (
	"hash/fnv"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners/sparse"
)

// The re-ranked groups: the verified first by inliers then score, tied
// when both are equal (c and e), then the unverified as they ranked, tied
// where their scores are; the groups past the candidates keep their place.
func TestRerankedTies(t *testing.T) {
	groups := []TieGroup{{Score: 0.9, N: 2, Rel: 1}, {Score: 0.5, N: 3, Rel: 1}, {Score: 0, N: 5, Rel: 2}}
	cands := []Candidate{
		{ID: "a", Score: 0.9, Rel: true},
		{ID: "b", Score: 0.9, Inliers: 6, Verified: true},
		{ID: "c", Score: 0.5, Rel: true, Inliers: 10, Verified: true},
		{ID: "d", Score: 0.5, Inliers: 3},
		{ID: "e", Score: 0.5, Inliers: 10, Verified: true},
	}
	got, err := rerankedTies(groups, cands)
	if err != nil {
		t.Fatal(err)
	}
	want := []TieGroup{{Score: 0.5, N: 2, Rel: 1}, {Score: 0.9, N: 1}, {Score: 0.9, N: 1, Rel: 1}, {Score: 0.5, N: 1}, {Score: 0, N: 5, Rel: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("re-ranked groups %v, want %v", got, want)
	}
	if !reflect.DeepEqual(cands[0], Candidate{ID: "a", Score: 0.9, Rel: true}) {
		t.Errorf("the candidates were re-ordered in place: %v", cands)
	}
	if _, err := rerankedTies(groups, cands[:4]); err == nil || !strings.Contains(err.Error(), "whole tie groups") {
		t.Errorf("candidates cutting a tie group: error %v", err)
	}
}

// fakeInliers gives a candidate of a query inliers from a hash of both, so
// that every chunking verifies alike.
func fakeInliers(query, cand string) int {
	h := fnv.New32a()
	h.Write([]byte(query + "/" + cand))
	return int(h.Sum32() % 20)
}

// rerankRanking ranks docs for queries in chunks of chunk documents with
// candidates depth deep, verifies them with fakeInliers (verified from 8)
// unless verify is false, and returns the ranking.
func rerankRanking(t *testing.T, docs []formats.BoW, queries []Query, w []float32, depth, rankDepth, chunk int, verify bool) *Ranking {
	t.Helper()
	relevant := map[string]int{}
	for _, d := range docs {
		if d.Label != "" {
			relevant[d.Label]++
		}
	}
	r := NewRanking(queries, rankDepth, int64(len(docs)), relevant)
	if depth > 0 {
		r.Rerank(depth)
	}
	for lo := 0; lo < len(docs); lo += chunk {
		if err := r.Add(slices.Clone(docs[lo:min(lo+chunk, len(docs))]), w, 30); err != nil {
			t.Fatal(err)
		}
	}
	if verify {
		for qi, q := range r.Queries() {
			for ci := range r.Candidates(qi) {
				c := &r.Candidates(qi)[ci]
				c.Inliers = fakeInliers(q.ID, c.ID)
				c.Verified = c.Inliers >= 8
			}
		}
	}
	return r
}

// A ranking re-ranks its best results whatever the chunks the collection
// comes in: the candidates are the same results (whole tie groups), and
// the re-ranked scores the same; keeping them changes none of the plain
// scores; and with none verified the re-ranked scores are the plain ones.
func TestRankingRerank(t *testing.T) {
	docs := randomDocs(120, 30, 7)
	var queries []Query
	for i, d := range docs {
		if d.Label != "" && i%4 == 0 {
			queries = append(queries, Query{ID: d.ImageID, Label: d.Label, Held: i%8 == 0, Vec: sparse.Vector{Idx: d.WordIDs, Val: d.Weights}})
		}
	}
	w := make([]float32, 30)
	for i := range w {
		w[i] = float32(i%4) / 2 // zeros too: fewer results of positive score
	}
	for _, rankDepth := range []int{0, 40} {
		plain, err := rerankRanking(t, docs, queries, w, 0, rankDepth, len(docs), false).Scores()
		if err != nil {
			t.Fatal(err)
		}
		one := rerankRanking(t, docs, queries, w, 25, rankDepth, len(docs), true)
		oneSV, err := one.RerankedScores()
		if err != nil {
			t.Fatal(err)
		}
		moved := 0
		for _, chunk := range []int{len(docs), 17, 50} {
			r := rerankRanking(t, docs, queries, w, 25, rankDepth, chunk, true)
			for qi := range queries {
				got, want := r.Candidates(qi), one.Candidates(qi)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("depth %d, chunks of %d, query %d: candidates %v, in one chunk %v", rankDepth, chunk, qi, got, want)
				}
				if len(got) < 25 {
					t.Fatalf("query %d: %d candidates, want the best 25 and their ties", qi, len(got))
				}
			}
			sc, err := r.Scores()
			if err != nil {
				t.Fatal(err)
			}
			sv, err := r.RerankedScores()
			if err != nil {
				t.Fatal(err)
			}
			for qi := range queries {
				if !sameMetrics(sc[qi], plain[qi]) {
					t.Errorf("depth %d, chunks of %d, query %d: plain scores %+v with candidates kept, %+v without", rankDepth, chunk, qi, sc[qi], plain[qi])
				}
				if !sameMetrics(sv[qi], oneSV[qi]) {
					t.Errorf("depth %d, chunks of %d, query %d: re-ranked %+v, in one chunk %+v", rankDepth, chunk, qi, sv[qi], oneSV[qi])
				}
				if sv[qi].AP != sc[qi].AP {
					moved++
				}
			}
		}
		if moved == 0 {
			t.Errorf("depth %d: no query's AP changed by re-ranking", rankDepth)
		}
		none, err := rerankRanking(t, docs, queries, w, 25, rankDepth, 30, false).RerankedScores()
		if err != nil {
			t.Fatal(err)
		}
		for qi := range queries {
			if !sameMetrics(none[qi], plain[qi]) {
				t.Errorf("depth %d, query %d: nothing verified, re-ranked %+v, plain %+v", rankDepth, qi, none[qi], plain[qi])
			}
		}
	}
}

func sameMetrics(a, b QueryScore) bool {
	const eps = 1e-12
	near := func(x, y float64) bool { return x-y < eps && y-x < eps }
	return a.ID == b.ID && near(a.AP, b.AP) && near(a.P10, b.P10) && near(a.NDCG10, b.NDCG10) && slices.EqualFunc(a.PR, b.PR, near)
}
