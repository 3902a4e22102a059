package evaluate

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/split"
)

// The query sets of a report row (formats.ReportRow.Split).
const (
	// HeldOut queries are images no learner trained on: the headline.
	HeldOut = "held-out"
	// Training queries are images the learners trained on; with held-out
	// queries they show how much of the training score is memorised, and
	// without (Options.QueryFraction 0) they are every query.
	Training = "training"
)

// Bootstrap settings of the report's intervals and paired comparisons.
const (
	Resamples = 1000
	Level     = 0.95
)

// Classify reports whether the image id of label may be a query — it is
// labelled and its label has another image (relevant counts each label's
// images) — and if so whether it is held out by the split cut.
func Classify(id, label string, relevant map[string]int, cut split.Cut) (query, held bool) {
	if !IsQuery(label, relevant) {
		return false, false
	}
	return true, cut.IsQuery(id, label)
}

// Cap returns the number of queries kept of the held-out or the training
// candidates (0: all): MaxQueries for the held-out ones, and for the
// training ones TrainQueries when there are held-out queries (they are a
// check on over-fitting, not the headline) and MaxQueries when there are
// none.
func (o Options) Cap(held bool) int {
	if held || o.QueryFraction == 0 {
		return o.MaxQueries
	}
	return o.TrainQueries
}

// Rows summarises the per-query scores of one method into its report
// rows, one per query set present (held-out first, then training): the
// means, the rows' query time and 95% bootstrap intervals of mAP and P@10
// over the queries, seeded by opt.Seed. base carries the method's other
// columns. scores is sorted by id in place, so that sums do not depend on
// how the queries were sharded.
func Rows(base formats.ReportRow, scores []QueryScore, opt Options) []formats.ReportRow {
	slices.SortFunc(scores, func(a, b QueryScore) int { return cmp.Compare(a.ID, b.ID) })
	var rows []formats.ReportRow
	for _, set := range []string{HeldOut, Training} {
		var sum Summary
		var ap, p10 []float64
		pr := make([]float64, RecallLevels)
		row := base
		row.Split, row.QuerySeconds, row.PR = set, 0, nil
		byLabel := map[string]*Summary{}
		for _, q := range scores {
			if q.Held != (set == HeldOut) {
				continue
			}
			sum.Add(q.AP, q.P10, q.NDCG10)
			ap, p10 = append(ap, q.AP), append(p10, q.P10)
			row.QuerySeconds += q.Seconds
			for i, p := range q.PR {
				pr[i] += p
			}
			if byLabel[q.Label] == nil {
				byLabel[q.Label] = &Summary{}
			}
			byLabel[q.Label].Add(q.AP, q.P10, q.NDCG10)
		}
		if sum.Queries == 0 {
			continue
		}
		mean := sum.Mean()
		row.Queries = int64(mean.Queries)
		row.MAP, row.PrecisionAt10, row.NDCGAt10 = mean.MAP, mean.PrecisionAt10, mean.NDCGAt10
		iv := Bootstrap(ap, Resamples, opt.Seed, Level)
		row.MAPLow, row.MAPHigh = iv.Lo, iv.Hi
		iv = Bootstrap(p10, Resamples, opt.Seed, Level)
		row.PrecisionAt10Low, row.PrecisionAt10High = iv.Lo, iv.Hi
		for i := range pr {
			pr[i] /= float64(sum.Queries)
		}
		row.PR = pr
		row.Labels, row.LabelMAP = nil, nil
		for _, l := range slices.Sorted(maps.Keys(byLabel)) {
			row.Labels = append(row.Labels, l)
			row.LabelMAP = append(row.LabelMAP, byLabel[l].Mean().MAP)
		}
		rows = append(rows, row)
	}
	return rows
}

// Scores are one method's per-query scores, for comparing methods query
// by query (Compare).
type Scores struct {
	Method, Input string
	Queries       []QueryScore
}

// BaselineOf returns the baseline a method of the given input is compared
// with: TF-IDF for bags of words, Euclidean distance for global features.
// A re-ranked method (Options.Rerank) is compared with its own ranking
// before re-ranking instead (PlainOf): what verification adds to it.
func BaselineOf(input string) string {
	if input == "global" {
		return string(learners.BaselineEuclidean)
	}
	return string(learners.BaselineTFIDF)
}

// PlainOf returns the method a re-ranked method's rows are compared with:
// the same method, not re-ranked; "" for a method not re-ranked.
func PlainOf(method string) string {
	for _, suffix := range []string{ExpandedSuffix, RerankedSuffix} {
		if plain, ok := strings.CutSuffix(method, suffix); ok {
			return plain
		}
	}
	return ""
}

// Compare fills, in each learner's rows, the paired comparison with its
// input's baseline (BaselineOf; a re-ranked method's, PlainOf) over the same query set: the mean
// difference of average precision, its 95% bootstrap interval, p-value
// and significance (PairedBootstrap, seeded by seed). Pairing needs both
// methods scored on the same queries, and Compare returns an error if they
// were not; a learner whose baseline was not evaluated is left alone.
func Compare(rows []formats.ReportRow, scores []Scores, seed uint64) error {
	by := map[[2]string][]QueryScore{}
	for _, s := range scores {
		by[[2]string{s.Method, s.Input}] = s.Queries
	}
	for i := range rows {
		r := &rows[i]
		base := BaselineOf(r.Input)
		if plain := PlainOf(r.Method); plain != "" {
			base = plain
		}
		if r.Method == base {
			continue
		}
		b, ok := by[[2]string{base, r.Input}]
		if !ok {
			continue
		}
		a := by[[2]string{r.Method, r.Input}]
		x, y, err := paired(b, a, r.Split == HeldOut)
		if err != nil {
			return fmt.Errorf("evaluate: comparing %s with %s on %s queries: %w", r.Method, base, r.Split, err)
		}
		p, err := PairedBootstrap(x, y, Resamples, seed, Level)
		if err != nil {
			return fmt.Errorf("evaluate: comparing %s with %s on %s queries: %w", r.Method, base, r.Split, err)
		}
		r.Baseline = base
		r.MAPDiff, r.MAPDiffLow, r.MAPDiffHigh, r.MAPDiffP, r.Significant = p.Diff, p.Lo, p.Hi, p.P, p.Significant
	}
	return nil
}

// paired returns the average precisions of the queries of one set (held
// or not) under methods a and b, in id order, checking that both methods
// were scored on the same queries.
func paired(a, b []QueryScore, held bool) (x, y []float64, err error) {
	pick := func(s []QueryScore) []QueryScore {
		var out []QueryScore
		for _, q := range s {
			if q.Held == held {
				out = append(out, q)
			}
		}
		slices.SortFunc(out, func(p, q QueryScore) int { return cmp.Compare(p.ID, q.ID) })
		return out
	}
	qa, qb := pick(a), pick(b)
	if len(qa) != len(qb) {
		return nil, nil, fmt.Errorf("%d queries against %d", len(qb), len(qa))
	}
	for i := range qa {
		if qa[i].ID != qb[i].ID {
			return nil, nil, fmt.Errorf("query %s against %s", qb[i].ID, qa[i].ID)
		}
		x, y = append(x, qa[i].AP), append(y, qb[i].AP)
	}
	return x, y, nil
}
