package main

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/cmd/internal/cli"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/search"
	"github.com/bowline/bowline/transforms/split"
)

var rerankJob struct {
	once sync.Once
	dir  string
	err  error
}

// The evaluation's re-ranked rows (--rerank) measure what a query
// re-ranked by search.Refine{Rerank} returns: for every method of bags of
// words, the held-out queries' re-ranked rankings (each query's matches,
// verified ones first by inliers then score, tied where both are equal,
// the others tied where their scores are, then the rest of the collection
// as the learner ranks it) give the mAP and P@10 of the report's +sv row,
// tie-aware as the evaluation is, and each +sv row is compared with its
// method as it ranks before re-ranking. So with the expanded rows
// (--expand) and search.Refine{Rerank, Expand}. The plain rows are checked the
// same way (the refinement asking for nothing), so that a mismatch of the
// +sv rows is the re-ranking's.
func TestRerankedRowsAreRefinedQueries(t *testing.T) {
	const rerank = 100 // more than the shapes' other 95 images: every match verified, by both
	const expand = 5
	rerankJob.once.Do(func() {
		if rerankJob.dir, rerankJob.err = os.MkdirTemp("", "query-rerank-test-"); rerankJob.err != nil {
			return
		}
		c := bowline.DefaultConfig()
		fs := flag.NewFlagSet("bowline", flag.ContinueOnError)
		j := cli.AddJobFlags(fs, &c)
		if rerankJob.err = fs.Parse([]string{"--input", shapes, "--vocab", "200", "--learners", "solis-ada", "--max_side", "128",
			"--seed", "3", "--rerank", "100", "--expand", "5"}); rerankJob.err != nil {
			return
		}
		if rerankJob.err = j.Apply(); rerankJob.err != nil {
			return
		}
		c.Output = rerankJob.dir
		c.Flags = cli.Settings(fs, cli.JobGroups())
		p, s := beam.NewPipelineWithRoot()
		if rerankJob.err = bowline.Build(s, c); rerankJob.err != nil {
			return
		}
		rerankJob.err = ptest.Run(p)
	})
	if rerankJob.dir != "" {
		t.Cleanup(func() { os.RemoveAll(rerankJob.dir) })
	}
	if rerankJob.err != nil {
		t.Fatalf("the job: %v", rerankJob.err)
	}
	dir := rerankJob.dir
	ix, err := search.Open(context.Background(), dir, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	docs := bows(t, dir)
	count := map[string]int{}
	label := map[string]string{}
	for _, d := range docs {
		count[d.Label]++
		label[d.ImageID] = d.Label
	}
	sel, err := split.NewSelector(3, 0.2, count)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if err := sel.Offer(d.ImageID, d.Label); err != nil {
			t.Fatal(err)
		}
	}
	cut, err := sel.Cut()
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(docs))
	vecs := make([]sparse.Vector, len(docs))
	at := map[string]int{}
	for i, d := range docs {
		ids[i], vecs[i], at[d.ImageID] = d.ImageID, sparse.Vector{Idx: d.WordIDs, Val: d.Weights}, i
	}
	rows, verified, expanded := 0, 0, 0
	for _, row := range rep.Methods {
		if row.Split != evaluate.HeldOut {
			continue
		}
		plain, refine := evaluate.PlainOf(row.Method), search.Refine{}
		switch {
		case plain == "":
			plain = row.Method
		case strings.HasSuffix(row.Method, evaluate.ExpandedSuffix):
			refine = search.Refine{Rerank: rerank, Expand: expand}
		default:
			refine = search.Refine{Rerank: rerank}
		}
		rows++
		// The learner's full ranking, for the results past the matches.
		var w []float32
		if plain != search.TFIDF {
			w = weightsOf(t, dir, plain, 200)
		}
		ref, err := index.Build(ids, indexed(vecs, w), w, 200)
		if err != nil {
			t.Fatal(err)
		}
		srch := ref.NewSearcher()
		if row.Baseline != plain && refine.Rerank > 0 {
			t.Errorf("%s is compared with %q, want %s", row.Method, row.Baseline, plain)
		}
		var ap, p10 float64
		queries := 0
		for _, d := range docs {
			if ok, held := evaluate.Classify(d.ImageID, d.Label, count, cut); !ok || !held {
				continue
			}
			res, err := ix.SearchIDRefined(plain, d.ImageID, 0, refine)
			if err != nil {
				t.Fatal(err)
			}
			if refine.Rerank > 0 && len(res.Hits) >= rerank {
				t.Fatalf("%s: %d hits: not all verified at --rerank %d", d.ImageID, len(res.Hits), rerank)
			}
			var r evaluate.TiedRanking
			for i, h := range res.Hits {
				if h.Verified {
					verified++
				}
				if p := res.Hits[max(i-1, 0)]; i == 0 || h.Score != p.Score || h.Verified != p.Verified || h.Verified && h.Inliers != p.Inliers {
					r.Groups = append(r.Groups, evaluate.TieGroup{Score: h.Score})
				}
				g := &r.Groups[len(r.Groups)-1]
				g.N++
				if label[h.ImageID] == d.Label {
					g.Rel++
				}
			}
			// The rest of the collection, unverified, as the learner ranks
			// it for the query searched (expanded, if it was): a score of
			// 0, then the negative scores some learners' weights give.
			q := vecs[at[d.ImageID]]
			if refine.Expand > 0 {
				first, err := ix.SearchIDRefined(plain, d.ImageID, 0, search.Refine{Rerank: rerank})
				if err != nil {
					t.Fatal(err)
				}
				var bags []sparse.Vector
				for _, h := range first.Hits {
					if !h.Verified || len(bags) == expand {
						break
					}
					bags = append(bags, vecs[at[h.ImageID]])
				}
				if len(bags) > 0 {
					expanded++
				}
				q = index.ExpandQuery(q, bags)
			}
			full := srch.Search(q, 0, at[d.ImageID])
			for i, h := range full[len(res.Hits):] {
				if i == 0 || h.Score != full[len(res.Hits)+i-1].Score {
					r.Groups = append(r.Groups, evaluate.TieGroup{Score: h.Score})
				}
				g := &r.Groups[len(r.Groups)-1]
				g.N++
				if label[h.ID] == d.Label {
					g.Rel++
				}
			}
			ap += r.AveragePrecision(count[d.Label] - 1)
			p10 += r.PrecisionAt(10)
			queries++
		}
		if int64(queries) != row.Queries {
			t.Fatalf("%s: %d held-out queries, the report has %d", row.Method, queries, row.Queries)
		}
		if got := ap / float64(queries); math.Abs(got-row.MAP) > 1e-12 {
			t.Errorf("%s: held-out mAP %.15f over the re-ranked queries, the report says %.15f", row.Method, got, row.MAP)
		}
		if got := p10 / float64(queries); math.Abs(got-row.PrecisionAt10) > 1e-12 {
			t.Errorf("%s: held-out P@10 %.15f over the re-ranked queries, the report says %.15f", row.Method, got, row.PrecisionAt10)
		}
	}
	if rows != 6 {
		t.Errorf("%d held-out rows, want tfidf and solis-ada, each plain, +sv and +sv+qe", rows)
	}
	if expanded == 0 {
		t.Error("no query expanded: the expansion changed nothing to compare")
	}
	if verified == 0 {
		t.Error("no hit verified: the re-ranking changed nothing to compare")
	}
	t.Logf("%d verified hits over the held-out queries; %d queries expanded", verified, expanded)
}

// indexed returns the bags vecs as the job indexes them under the weights
// w at its default --cosine: each scaled to unit length in w's metric.
func indexed(vecs []sparse.Vector, w []float32) []sparse.Vector {
	if !bowline.DefaultLearning().Eval.Cosine {
		return vecs
	}
	out := make([]sparse.Vector, len(vecs))
	for i, v := range vecs {
		out[i] = sparse.Vector{Idx: v.Idx, Val: slices.Clone(v.Val)}
		index.Normalize(w, out[i])
	}
	return out
}
