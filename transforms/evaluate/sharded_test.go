package evaluate

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/split"
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// randomDocs makes n bags over vocab words with labels from 5, some
// sharing identical bags so that results tie.
func randomDocs(n, vocab int, seed uint64) []formats.BoW {
	r := rand.New(rand.NewPCG(seed, 1))
	docs := make([]formats.BoW, n)
	for i := range docs {
		var idx []uint32
		for w := range vocab {
			if r.IntN(4) == 0 {
				idx = append(idx, uint32(w))
			}
		}
		val := make([]float32, len(idx))
		for k := range val {
			val[k] = float32(r.IntN(3) + 1)
		}
		docs[i] = formats.BoW{ImageID: fmt.Sprintf("img%03d", (i*37)%n), Label: fmt.Sprintf("l%d", r.IntN(5)), WordIDs: idx, Weights: val}
		if i%9 == 0 && i > 0 {
			docs[i].WordIDs, docs[i].Weights = docs[i-1].WordIDs, docs[i-1].Weights
		}
	}
	docs[3].Label = "" // unlabelled: searched for, never a query
	return docs
}

// sharded evaluates docs as the Beam transform does: queries split over
// shards, the collection indexed chunk by chunk (in a shuffled order).
func sharded(t *testing.T, docs []formats.BoW, m learners.Model, cut split.Cut, opt Options, shards, chunk int) []formats.ReportRow {
	t.Helper()
	relevant := map[string]int{}
	var ids, labels []string
	vecs := map[string]sparse.Vector{}
	for _, d := range docs {
		if d.Label != "" {
			relevant[d.Label]++
		}
		ids, labels = append(ids, d.ImageID), append(labels, d.Label)
		vecs[d.ImageID] = sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
	}
	queries := selectQueries(ids, labels, relevant, cut, opt)
	for i := range queries {
		queries[i].Vec = vecs[queries[i].ID]
	}
	w, err := m.Diagonal()
	if err != nil {
		t.Fatal(err)
	}
	order := rand.New(rand.NewPCG(uint64(shards), uint64(chunk))).Perm(len(docs))
	var scores []QueryScore
	for s := range shards {
		var mine []Query
		for i := s; i < len(queries); i += shards {
			mine = append(mine, queries[i])
		}
		r := NewRanking(mine, opt.DepthFor(int64(len(docs))), int64(len(docs)), relevant)
		for lo := 0; lo < len(order); lo += chunk {
			var part []formats.BoW
			for _, i := range order[lo:min(lo+chunk, len(order))] {
				part = append(part, docs[i])
			}
			if err := r.Add(part, w, 12); err != nil {
				t.Fatal(err)
			}
		}
		sc, err := r.Scores()
		if err != nil {
			t.Fatal(err)
		}
		scores = append(scores, sc...)
	}
	return Rows(formats.ReportRow{}, scores, opt)
}

// cutOf holds out fraction of docs' labelled images.
func cutOf(t *testing.T, docs []formats.BoW, seed uint64, fraction float64) split.Cut {
	t.Helper()
	counts := map[string]int{}
	for _, d := range docs {
		counts[d.Label]++
	}
	s, err := split.NewSelector(seed, fraction, counts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := s.Offer(d.ImageID, d.Label); err != nil {
			t.Fatal(err)
		}
	}
	c, err := s.Cut()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestShardedEqualsUnsharded(t *testing.T) {
	docs := randomDocs(120, 12, 7)
	models := []learners.Model{
		learners.BaselineModel(learners.BaselineTFIDF, nil),
		{Learner: "m", Weights: []float32{0, 1, 2, 0, 0.5, 1, 3, 0, 1, 1, 0.25, 2}},
	}
	for _, m := range models {
		for _, opt := range []Options{{}, {MaxQueries: 40, Seed: 3}, {QueryFraction: 0.2, TrainQueries: 30, Seed: 5}} {
			cut := cutOf(t, docs, opt.Seed, opt.QueryFraction)
			want, _, err := BoW(slices.Clone(docs), m, cut, opt)
			if err != nil {
				t.Fatal(err)
			}
			if sets := 1 + btoi(opt.QueryFraction > 0); len(want) != sets {
				t.Fatalf("%s %+v: %d rows, want %d", m.Learner, opt, len(want), sets)
			}
			for _, c := range []struct{ shards, chunk int }{{1, 1000}, {1, 7}, {3, 50}, {7, 13}} {
				got := sharded(t, docs, m, cut, opt, c.shards, c.chunk)
				if len(got) != len(want) {
					t.Fatalf("%d rows sharded, %d unsharded", len(got), len(want))
				}
				for i := range want {
					// Times differ from run to run, and the index's columns
					// are BoW's alone; every metric must agree.
					w := want[i]
					w.QuerySeconds, w.IndexSeconds, w.Vocabulary, w.IndexPostings, w.Sparsity = 0, 0, 0, 0, 0
					w.Method, w.Input, w.Relevance, w.TrainSeconds = "", "", "", 0
					got[i].QuerySeconds = 0
					if !reflect.DeepEqual(got[i], w) {
						t.Errorf("%s %+v, %d shards, chunks of %d:\n%+v\nunsharded\n%+v", m.Learner, opt, c.shards, c.chunk, got[i], w)
					}
				}
			}
		}
	}
}

// The chunks' tie groups are those of index.Searcher's full ranking, scores
// and all; merged from chunks in any order they are the whole collection's,
// and at a rank depth its head, the group at the cut whole. (The collection
// is made one image larger than the chunks bring, so that the rankings stay
// unscored, their groups kept to be read.)
func TestRankingGroupsAreTheSearchers(t *testing.T) {
	docs := randomDocs(90, 12, 9)
	slices.SortFunc(docs, func(a, b formats.BoW) int { return strings.Compare(a.ImageID, b.ImageID) })
	ids := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	for i, d := range docs {
		ids[i], vecs[i] = d.ImageID, sparse.Vector{Idx: d.WordIDs, Val: d.Weights}
	}
	// Zero and negative weights: every kind of score, and ties at 0.
	w := []float32{0, 1, -0.5, 0, 2, 0, 0, 1, 0, 0, -1, 0}
	ix, err := index.Build(ids, vecs, w, len(w))
	if err != nil {
		t.Fatal(err)
	}
	srch := ix.NewSearcher()
	var zeros, neg bool
	for _, qi := range []int{5, 17, 40} {
		q := []Query{{ID: ids[qi], Label: docs[qi].Label, Vec: vecs[qi]}}
		var score []float64
		var rel []bool
		for _, h := range srch.Search(vecs[qi], 0, qi) {
			score, rel = append(score, h.Score), append(rel, docs[h.Doc].Label == docs[qi].Label)
		}
		for _, depth := range []int{0, 10, 60} {
			want := groupsOf(score, rel, depth)
			for _, chunk := range []int{len(docs), 11} {
				r := NewRanking(q, depth, int64(len(docs)+1), nil)
				order := rand.New(rand.NewPCG(uint64(qi), uint64(chunk))).Perm(len(docs))
				for lo := 0; lo < len(order); lo += chunk {
					var part []formats.BoW
					for _, i := range order[lo:min(lo+chunk, len(order))] {
						part = append(part, docs[i])
					}
					if err := r.Add(part, w, len(w)); err != nil {
						t.Fatal(err)
					}
				}
				if got := r.tops[0]; !reflect.DeepEqual(got, want) {
					t.Errorf("query %d, depth %d, chunks of %d: groups\n%v\nthe Searcher's\n%v", qi, depth, chunk, got, want)
				}
			}
			for _, g := range want {
				zeros, neg = zeros || (g.Score == 0 && g.N > 1), neg || g.Score < 0
			}
		}
	}
	if !zeros || !neg {
		t.Errorf("zero-score ties %v, negative scores %v: want both", zeros, neg)
	}
}

// held counts the tie groups r keeps, what its memory grows with.
func (r *Ranking) held() int {
	n := 0
	for _, g := range r.tops {
		n += len(g)
	}
	return n
}

// The chunk that completes the collection scores every query and drops its
// hits: a worker is left holding no ranking, where it held every query's
// whole ranking (queries × images hits at full depth) until Scores. The
// scores are the unsharded evaluation's, exactly, in one chunk or several.
func TestRankingDropsScoredRankings(t *testing.T) {
	docs := randomDocs(120, 12, 7)
	relevant := map[string]int{}
	for _, d := range docs {
		if d.Label != "" {
			relevant[d.Label]++
		}
	}
	m := learners.BaselineModel(learners.BaselineTFIDF, nil)
	_, want, err := BoW(slices.Clone(docs), m, split.Cut{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, want = untimed(nil, want)
	queries := make([]Query, len(want))
	for i, q := range want {
		d := docs[slices.IndexFunc(docs, func(d formats.BoW) bool { return d.ImageID == q.ID })]
		queries[i] = Query{ID: q.ID, Label: q.Label, Vec: sparse.Vector{Idx: d.WordIDs, Val: d.Weights}}
	}
	for _, c := range []struct{ chunk, depth int }{{len(docs), 0}, {50, 0}, {50, 7}} {
		r := NewRanking(queries, c.depth, int64(len(docs)), relevant)
		bound := len(queries) * (len(docs) - 1)
		if c.depth > 0 {
			bound = len(queries) * c.depth
		}
		for lo := 0; lo < len(docs); lo += c.chunk {
			if err := r.Add(slices.Clone(docs[lo:min(lo+c.chunk, len(docs))]), nil, 12); err != nil {
				t.Fatal(err)
			}
			if lo+c.chunk < len(docs) && (r.held() == 0 || r.held() > bound) {
				t.Fatalf("chunks of %d, depth %d: %d tie groups held before the last chunk, want some, at most %d", c.chunk, c.depth, r.held(), bound)
			}
		}
		if n := r.held(); n != 0 {
			t.Errorf("chunks of %d, depth %d: %d tie groups held once every image is ranked, want 0", c.chunk, c.depth, n)
		}
		got, err := r.Scores()
		if err != nil {
			t.Fatal(err)
		}
		if _, got = untimed(nil, got); c.depth == 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("chunks of %d: scores differ from BoW's\n%+v\n%+v", c.chunk, got[:2], want[:2])
		}
	}
}

func TestRankingCountsTheCollection(t *testing.T) {
	docs := randomDocs(20, 12, 3)
	q := []Query{{ID: docs[0].ImageID, Label: docs[0].Label, Vec: sparse.Vector{Idx: docs[0].WordIDs, Val: docs[0].Weights}}}
	r := NewRanking(q, 0, int64(len(docs)), map[string]int{docs[0].Label: 3})
	if err := r.Add(slices.Clone(docs[:10]), nil, 12); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Scores(); err == nil {
		t.Error("Scores with half the collection ranked: no error")
	}
	if err := r.Add(slices.Clone(docs), nil, 12); err == nil {
		t.Error("Add of more images than the collection holds: no error")
	}
}

// Over one chunk a shard keeps nothing between chunks and takes
// ShardQueries queries; over several — of images, or of postings — it
// keeps each query's best depth hits, and takes no more queries than
// ShardHits allows.
func TestShardQueriesFor(t *testing.T) {
	for _, c := range []struct {
		opt              Options
		images, postings int64
		want             int
	}{
		{Options{}, 20_000, 2_000_000, DefaultShardQueries},                          // one chunk, full depth
		{Options{}, 1_000_000, 100_000_000, DefaultShardQueries},                     // depth 1,000: the default bound
		{Options{ChunkImages: 5000}, 20_000, 0, DefaultShardHits / 20_000},           // several chunks, full depth
		{Options{ChunkImages: 5000, ShardHits: 30_000}, 20_000, 0, 1},                // at least one
		{Options{ShardQueries: 10, ChunkImages: 100}, 1000, 0, 10},                   // within the bound
		{Options{ChunkImages: 100, Depth: 5000, ShardHits: 9000}, 1000, 0, 9},        // depth beyond the collection
		{Options{ChunkImages: 5000}, 5000, 0, DefaultShardQueries},                   // a collection that just fills its chunk
		{Options{}, 20_000, DefaultChunkPostings, DefaultShardHits / 20_000},         // photos of 1,700 words: two chunks of postings
		{Options{ChunkPostings: 1000}, 1000, 999, DefaultShardQueries},               // one chunk of postings
		{Options{ChunkPostings: 1000, ShardHits: 50_000}, 1000, 1000, 50_000 / 1000}, // several
	} {
		got := c.opt.ShardQueriesFor(c.images, c.postings)
		if got != c.want {
			t.Errorf("%+v over %d images, %d postings: %d queries a shard, want %d", c.opt, c.images, c.postings, got, c.want)
		}
	}
}

// A chunk ends at the image that reaches either bound.
func TestChunkFull(t *testing.T) {
	opt := Options{ChunkImages: 10, ChunkPostings: 100}
	for _, c := range []struct {
		images   int
		postings int64
		want     bool
	}{
		{1, 0, false}, {9, 99, false}, {10, 0, true}, {1, 100, true}, {3, 250, true},
	} {
		if got := opt.ChunkFull(c.images, c.postings); got != c.want {
			t.Errorf("ChunkFull(%d images, %d postings) = %v, want %v", c.images, c.postings, got, c.want)
		}
	}
	if (Options{}).ChunkFull(DefaultChunkImages-1, DefaultChunkPostings-1) || !(Options{}).ChunkFull(1, DefaultChunkPostings) {
		t.Error("the defaults do not bound a chunk at DefaultChunkImages and DefaultChunkPostings")
	}
}

// BenchmarkRanking ranks 4,000 bags of words over 1,000 words for 200
// queries in one chunk, every result deep, under TF-IDF (most scores
// positive) and under a sparse weighting (most scores 0: one large tie).
func BenchmarkRanking(b *testing.B) {
	const n, vocab, queries = 4000, 1000, 200
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]formats.BoW, n)
	relevant := map[string]int{}
	for i := range docs {
		words := map[uint32]bool{}
		for range 60 {
			words[uint32(r.IntN(vocab))] = true
		}
		idx := slices.Sorted(maps.Keys(words))
		val := make([]float32, len(idx))
		for k := range val {
			val[k] = r.Float32()
		}
		docs[i] = formats.BoW{ImageID: fmt.Sprintf("img%05d", i), Label: fmt.Sprintf("l%d", i%10), WordIDs: idx, Weights: val}
		relevant[docs[i].Label]++
	}
	var q []Query
	for _, d := range docs[:queries] {
		q = append(q, Query{ID: d.ImageID, Label: d.Label, Vec: sparse.Vector{Idx: d.WordIDs, Val: d.Weights}})
	}
	sparseW := make([]float32, vocab)
	for i := range 20 {
		sparseW[i*50] = 1
	}
	for _, c := range []struct {
		name string
		w    []float32
	}{{"tfidf", nil}, {"sparse", sparseW}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				rk := NewRanking(q, 0, n, relevant)
				if err := rk.Add(slices.Clone(docs), c.w, vocab); err != nil {
					b.Fatal(err)
				}
				if _, err := rk.Scores(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
