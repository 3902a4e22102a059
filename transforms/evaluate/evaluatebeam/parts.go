package evaluatebeam

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/report"
)

func init() {
	for _, t := range []any{(*Labels)(nil), (*Queries)(nil), (*shardResult)(nil), (*labelsFn)(nil), (*labelsMergeFn)(nil),
		(*candidatesFn)(nil), (*queriesMergeFn)(nil), (*shardsFn)(nil), (*shardFn)(nil), (*summaryFn)(nil), (*formats.Part)(nil), (*report.Stage)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(shardStageFn)
}

// Labels counts the images of each label of the collection.
type Labels struct {
	Images int64
	Names  []string
	Counts []int64
}

func (l Labels) relevant() map[string]int {
	m := make(map[string]int, len(l.Names))
	for i, n := range l.Names {
		m[n] = int(l.Counts[i])
	}
	return m
}

// Queries is the evaluation's query set, sorted by image id.
type Queries struct {
	Keys    []uint64
	Queries []evaluate.Query
}

// QuerySet selects the queries of an evaluation over bags of words written
// part by part (PCollection<formats.Part>): the labelled images whose label
// has another image, at most opt.MaxQueries of them, those of smallest
// evaluate.QueryKey — the queries evaluate.BoW selects. It returns the
// single-element PCollection<Queries> and the label counts,
// PCollection<Labels>. No worker holds more than opt.MaxQueries bags.
func QuerySet(s beam.Scope, bowParts beam.PCollection, opt evaluate.Options) (queries, labels beam.PCollection) {
	s = s.Scope("evaluate.Queries")
	labels = beam.Combine(s, &labelsMergeFn{}, beam.ParDo(s, &labelsFn{}, bowParts))
	cands := beam.ParDo(s, &candidatesFn{Opt: opt}, bowParts, beam.SideInput{Input: labels})
	return beam.Combine(s, &queriesMergeFn{Max: opt.MaxQueries}, cands), labels
}

type labelsFn struct{}

func (labelsFn) ProcessElement(ctx context.Context, p formats.Part) (Labels, error) {
	m := map[string]int64{}
	var l Labels
	err := fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		l.Images++
		if b.Label != "" {
			m[b.Label]++
		}
		return nil
	})
	for n, c := range m {
		l.Names, l.Counts = append(l.Names, n), append(l.Counts, c)
	}
	return l, err
}

type labelsMergeFn struct{}

func (labelsMergeFn) CreateAccumulator() Labels { return Labels{} }
func (f labelsMergeFn) AddInput(a, b Labels) Labels {
	return f.MergeAccumulators(a, b)
}
func (labelsMergeFn) MergeAccumulators(a, b Labels) Labels {
	m := a.relevant()
	for i, n := range b.Names {
		m[n] += int(b.Counts[i])
	}
	out := Labels{Images: a.Images + b.Images}
	for n := range m {
		out.Names = append(out.Names, n)
	}
	sort.Strings(out.Names)
	for _, n := range out.Names {
		out.Counts = append(out.Counts, int64(m[n]))
	}
	return out
}
func (labelsMergeFn) ExtractOutput(a Labels) Labels { return a }

type candidatesFn struct{ Opt evaluate.Options }

func (f *candidatesFn) ProcessElement(ctx context.Context, p formats.Part, labels Labels) (Queries, error) {
	rel := labels.relevant()
	var q Queries
	err := fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		if evaluate.IsQuery(b.Label, rel) {
			q.Keys = append(q.Keys, evaluate.QueryKey(f.Opt.Seed, b.ImageID))
			q.Queries = append(q.Queries, evaluate.Query{ID: b.ImageID, Label: b.Label, Vec: sparse.Vector{Idx: b.WordIDs, Val: b.Weights}})
		}
		return nil
	})
	return q.trim(f.Opt.MaxQueries), err
}

// trim keeps the max queries of smallest key (every query if max ≤ 0),
// sorted by image id.
func (q Queries) trim(max int) Queries {
	idx := make([]int, len(q.Keys))
	for i := range idx {
		idx[i] = i
	}
	if max > 0 && len(idx) > max {
		sort.Slice(idx, func(a, b int) bool {
			i, j := idx[a], idx[b]
			if q.Keys[i] != q.Keys[j] {
				return q.Keys[i] < q.Keys[j]
			}
			return q.Queries[i].ID < q.Queries[j].ID
		})
		idx = idx[:max]
	}
	sort.Slice(idx, func(a, b int) bool { return q.Queries[idx[a]].ID < q.Queries[idx[b]].ID })
	out := Queries{Keys: make([]uint64, len(idx)), Queries: make([]evaluate.Query, len(idx))}
	for k, i := range idx {
		out.Keys[k], out.Queries[k] = q.Keys[i], q.Queries[i]
	}
	return out
}

type queriesMergeFn struct{ Max int }

func (f *queriesMergeFn) CreateAccumulator() Queries { return Queries{} }
func (f *queriesMergeFn) AddInput(a, b Queries) Queries {
	return f.MergeAccumulators(a, b)
}
func (f *queriesMergeFn) MergeAccumulators(a, b Queries) Queries {
	return Queries{Keys: append(a.Keys, b.Keys...), Queries: append(a.Queries, b.Queries...)}.trim(f.Max)
}
func (f *queriesMergeFn) ExtractOutput(a Queries) Queries { return a.trim(f.Max) }

// EvaluateParts evaluates the bag-of-words model (single-element
// PCollection<learners.Model>) by retrieval over the bags of words written
// part by part, with the queries and label counts of QuerySet, and returns
// its report row (PCollection<formats.ReportRow>) and the time of each
// query shard (PCollection<report.Stage>, stage "evaluate"). The queries are split
// into ⌈queries/opt.ShardQueries⌉ shards; each shard's DoFn reads the
// parts in turn, indexes opt.ChunkImages images at a time under the
// model's weights and merges each query's ranking chunk by chunk
// (evaluate.Ranking), so it holds one chunk and its queries' best hits,
// never the collection. The metrics equal evaluate.BoW's whatever the
// number of shards and chunks, up to the rank depth (opt.DepthFor).
func EvaluateParts(s beam.Scope, bowParts, queries, labels, model beam.PCollection, vocab int, opt evaluate.Options) (row, stages beam.PCollection) {
	s = s.Scope("evaluate.EvaluateParts")
	shards := beam.ParDo(s, &shardsFn{Opt: opt}, beam.Impulse(s), beam.SideInput{Input: queries})
	results := beam.ParDo(s, &shardFn{Opt: opt, Vocab: vocab}, beam.Reshuffle(s, shards),
		beam.SideInput{Input: queries}, beam.SideInput{Input: labels}, beam.SideInput{Input: model}, beam.SideInput{Input: bowParts})
	row = beam.ParDo(s, &summaryFn{Opt: opt, Vocab: vocab}, beam.Impulse(s),
		beam.SideInput{Input: model}, beam.SideInput{Input: labels}, beam.SideInput{Input: results})
	return row, beam.ParDo(s, shardStageFn, results)
}

func shardStageFn(r shardResult) report.Stage {
	return report.Unit("evaluate", int64(len(r.Scores)), int64(len(r.Scores)), r.StartMillis, r.EndMillis)
}

func (o shardsFn) shardQueries() int {
	if o.Opt.ShardQueries > 0 {
		return o.Opt.ShardQueries
	}
	return evaluate.DefaultShardQueries
}

type shardsFn struct{ Opt evaluate.Options }

func (f *shardsFn) ProcessElement(_ []byte, q Queries, emit func(int)) {
	for i := range formats.Parts(int64(len(q.Queries)), f.shardQueries()) {
		emit(i)
	}
}

type shardResult struct {
	Scores       []evaluate.QueryScore
	IndexSeconds float64
	Postings     int64
	// StartMillis and EndMillis time the shard (Unix ms).
	StartMillis, EndMillis int64
}

type shardFn struct {
	Opt   evaluate.Options
	Vocab int
}

func (f *shardFn) ProcessElement(ctx context.Context, shard int, q Queries, labels Labels, model func(*learners.Model) bool, parts func(*formats.Part) bool) (shardResult, error) {
	start := time.Now()
	var m learners.Model
	if !model(&m) {
		return shardResult{}, fmt.Errorf("evaluate: no model")
	}
	w, err := m.Diagonal()
	if err != nil {
		return shardResult{}, fmt.Errorf("evaluate: %w", err)
	}
	n := formats.Parts(int64(len(q.Queries)), shardsFn{Opt: f.Opt}.shardQueries())
	var mine []evaluate.Query
	for i := shard; i < len(q.Queries); i += n {
		mine = append(mine, q.Queries[i])
	}
	var all []formats.Part
	var p formats.Part
	for parts(&p) {
		all = append(all, p)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Part < all[j].Part })
	chunk := f.Opt.ChunkImages
	if chunk <= 0 {
		chunk = evaluate.DefaultChunkImages
	}
	r := evaluate.NewRanking(mine, f.Opt.DepthFor(labels.Images))
	var docs []formats.BoW
	for i, p := range all {
		err := fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
			docs = append(docs, *b)
			return nil
		})
		if err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: %w", m.Learner, err)
		}
		if len(docs) >= chunk || i == len(all)-1 {
			if err := r.Add(docs, w, f.Vocab); err != nil {
				return shardResult{}, fmt.Errorf("evaluate %s: %w", m.Learner, err)
			}
			docs = docs[:0]
		}
	}
	return shardResult{Scores: r.Scores(labels.relevant()), IndexSeconds: r.IndexSeconds, Postings: r.Postings,
		StartMillis: start.UnixMilli(), EndMillis: time.Now().UnixMilli()}, nil
}

type summaryFn struct {
	Opt   evaluate.Options
	Vocab int
}

func (f *summaryFn) ProcessElement(ctx context.Context, _ []byte, model func(*learners.Model) bool, labels Labels, results func(*shardResult) bool) (formats.ReportRow, error) {
	var m learners.Model
	if !model(&m) {
		return formats.ReportRow{}, fmt.Errorf("evaluate: no model")
	}
	w, err := m.Diagonal()
	if err != nil {
		return formats.ReportRow{}, fmt.Errorf("evaluate: %w", err)
	}
	row := formats.ReportRow{Method: m.Learner, Input: "bow", Relevance: "label", Vocabulary: int64(f.Vocab), TrainSeconds: m.Seconds}
	if w != nil {
		row.Sparsity = learners.Sparsity(w)
	}
	var scores []evaluate.QueryScore
	var res shardResult
	first := true
	for results(&res) {
		scores = append(scores, res.Scores...)
		if first {
			// Every shard indexes the whole collection: count it once.
			row.IndexSeconds, row.IndexPostings, first = res.IndexSeconds, res.Postings, false
		}
		res = shardResult{}
	}
	evaluate.Summarise(&row, scores)
	log.Infof(ctx, "evaluate: %s: mAP %.4f, P@10 %.4f, NDCG@10 %.4f over %d queries (depth %d); sparsity %.3f; %d postings",
		row.Method, row.MAP, row.PrecisionAt10, row.NDCGAt10, row.Queries, f.Opt.DepthFor(labels.Images), row.Sparsity, row.IndexPostings)
	return row, nil
}
