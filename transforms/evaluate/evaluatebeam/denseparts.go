package evaluatebeam

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/split"
	"github.com/bowline/bowline/transforms/train"
	"github.com/bowline/bowline/transforms/train/trainbeam"
)

func init() {
	for _, t := range []any{(*denseQueries)(nil), (*denseLabelsFn)(nil), (*denseCandidatesFn)(nil), (*denseQueriesMergeFn)(nil),
		(*denseShardsFn)(nil), (*denseShardFn)(nil), (*denseShardInput)(nil), (*denseSummaryFn)(nil), (*global.Moments)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// EvaluateDenseParts evaluates the dense model (single-element
// PCollection<learners.Model> with Dims set: learned, or the Euclidean
// baseline) by brute-force retrieval over the global features of the
// features parts (featParts, PCollection<formats.Part> of the
// features-p-of-P files), scaled by the scaler of moments (the
// single-element PCollection<global.Moments> of
// trainbeam.DenseMoments), with the held-out queries of cut (the
// single-element PCollection<split.Cut>). It returns the model's report
// rows (PCollection<formats.ReportRow>, evaluate.Rows), its per-query
// scores (single-element PCollection<evaluate.Scores>, for Compare),
// the time of each query shard (PCollection<report.Stage>, stage
// "evaluate") and the rows of its queries' scores
// (PCollection<formats.QueryScore>, input "global"), as EvaluateParts.
//
// It is EvaluateParts for global features: the queries are the images
// with global features whose label has another such image, at most
// opt.Cap of the held-out and of the training ones, sampled by label as
// QuerySet's — the queries evaluate.Dense selects — split into
// shards of at most opt.ShardQueries queries (evaluate.ShardQueriesFor);
// each shard's DoFn reads the features parts in turn, makes the scaled
// dense rows opt.ChunkImages at a time and ranks each chunk for its
// queries (evaluate.DenseRanking), so a worker holds one chunk, its
// queries and their best results, never the collection.
// The rows and scores equal those of evaluate.Dense over every scaled
// dense row at once, up to their times and the rank depth (opt.DepthFor
// the number of images with global features; evaluate.Dense always ranks
// the whole collection). Each call selects its queries anew,
// two passes over the features parts before the shards' passes. A worker
// process evaluates at most loads shards at once (0: no limit), as in
// EvaluateParts.
func EvaluateDenseParts(s beam.Scope, featParts, moments, cut, model beam.PCollection, opt evaluate.Options, loads int) (rows, scores, stages, perQuery beam.PCollection) {
	s = s.Scope("evaluate.EvaluateDenseParts")
	// Global features have no keypoints to verify: their shards are sized
	// as if no method were re-ranked.
	opt.Rerank = 0
	labels := beam.Combine(s, &labelsMergeFn{}, beam.ParDo(s, &denseLabelsFn{}, featParts, beam.SideInput{Input: cut}))
	cands := beam.ParDo(s, &denseCandidatesFn{Opt: opt}, featParts,
		beam.SideInput{Input: labels}, beam.SideInput{Input: cut}, beam.SideInput{Input: moments})
	queries := beam.Combine(s, &denseQueriesMergeFn{Opt: opt}, cands)
	// A shard ranks for seconds: it takes what it reads paired with it
	// (denseShardInput), not as side inputs (onekeybeam).
	shards := beam.ParDo(s, &denseShardsFn{Opt: opt}, onekeybeam.Group(s, queries, labels, model, featParts, moments))
	results := beam.ParDo(s, &denseShardFn{Opt: opt, Loads: loads}, beam.Reshuffle(s, shards))
	rows, scores = beam.ParDo2(s, &denseSummaryFn{Opt: opt}, beam.Impulse(s),
		beam.SideInput{Input: model}, beam.SideInput{Input: labels}, beam.SideInput{Input: results})
	return rows, scores, beam.ParDo(s, shardStageFn, results), queryRows(s, "global", results)
}

// denseLabelsFn counts the images of one features part that have global
// features, by label, and those of them cut holds out: the relevance
// totals of the dense evaluation, whose collection is those images only,
// and the sizes of its query sets (Labels.Held). The collection need not
// be the one cut was made from, so the held-out images are counted.
type denseLabelsFn struct{}

func (f *denseLabelsFn) ProcessElement(ctx context.Context, p formats.Part, cut split.Cut) (Labels, error) {
	m, held := map[string]int64{}, map[string]int64{}
	var l Labels
	_, err := trainbeam.ReadDense(ctx, p.Path, nil, func(r train.DenseRow) error {
		l.Images++
		if r.Label != "" {
			m[r.Label]++
			if cut.IsQuery(r.ImageID, r.Label) {
				held[r.Label]++
			}
		}
		return nil
	})
	if err != nil {
		return Labels{}, fmt.Errorf("evaluate: features part %d: %w", p.Part, err)
	}
	l.Held = []int64{}
	for n, c := range m {
		l.Names, l.Counts, l.Held = append(l.Names, n), append(l.Counts, c), append(l.Held, held[n])
	}
	return l, nil
}

// denseQueries is the dense evaluation's query set, sorted by image id,
// with its quotas (as Queries').
type denseQueries struct {
	Keys           []uint64
	Queries        []evaluate.DenseQuery
	Held, Training evaluate.Quotas
}

// trim is Queries.trim, the queries' rows carried along.
func (q denseQueries) trim() denseQueries {
	heads := Queries{Keys: q.Keys, Queries: make([]evaluate.Query, len(q.Queries)), Parts: make([]int, len(q.Queries)), Held: q.Held, Training: q.Training}
	rows := make(map[string][]float32, len(q.Queries))
	for i, d := range q.Queries {
		heads.Queries[i] = evaluate.Query{ID: d.ID, Label: d.Label, Held: d.Held}
		rows[d.ID] = d.X
	}
	kept := heads.trim()
	out := denseQueries{Keys: kept.Keys, Queries: make([]evaluate.DenseQuery, len(kept.Queries)), Held: q.Held, Training: q.Training}
	for i, h := range kept.Queries {
		out.Queries[i] = evaluate.DenseQuery{ID: h.ID, Label: h.Label, Held: h.Held, X: rows[h.ID]}
	}
	return out
}

// denseCandidatesFn selects the queries of one features part, trimmed to
// the caps as it goes, so that it holds at most twice the caps' rows (or
// the part's candidates when a cap is 0: every query kept).
type denseCandidatesFn struct {
	Opt evaluate.Options

	// scaler is derived from the moments side input on the first element;
	// the side input is the one global-window value of this stage, so an
	// instance reused across bundles may keep it.
	scaler *global.Scaler
}

func (f *denseCandidatesFn) ProcessElement(ctx context.Context, p formats.Part, labels Labels, cut split.Cut,
	moments func(*global.Moments) bool) (denseQueries, error) {
	if f.scaler == nil {
		sc, err := trainbeam.ScalerOf(moments)
		if err != nil {
			return denseQueries{}, fmt.Errorf("evaluate: features part %d: %w", p.Part, err)
		}
		f.scaler = sc
	}
	rel := labels.Relevant()
	bound := trimBound(f.Opt)
	var q denseQueries
	var err error
	if q.Held, q.Training, err = labels.quotas(f.Opt, cut); err != nil {
		return denseQueries{}, err
	}
	_, err = trainbeam.ReadDense(ctx, p.Path, f.scaler, func(r train.DenseRow) error {
		if ok, held := evaluate.Classify(r.ImageID, r.Label, rel, cut); ok {
			q.Keys = append(q.Keys, evaluate.QueryKey(f.Opt.Seed, r.ImageID))
			q.Queries = append(q.Queries, evaluate.DenseQuery{ID: r.ImageID, Label: r.Label, Held: held, X: r.X})
			if bound > 0 && len(q.Queries) >= bound {
				q = q.trim()
			}
		}
		return nil
	})
	if err != nil {
		return denseQueries{}, fmt.Errorf("evaluate: features part %d: %w", p.Part, err)
	}
	return q.trim(), nil
}

type denseQueriesMergeFn struct{ Opt evaluate.Options }

func (f *denseQueriesMergeFn) CreateAccumulator() denseQueries { return denseQueries{} }
func (f *denseQueriesMergeFn) AddInput(a, b denseQueries) denseQueries {
	return f.MergeAccumulators(a, b)
}
func (f *denseQueriesMergeFn) MergeAccumulators(a, b denseQueries) denseQueries {
	return denseQueries{Keys: append(a.Keys, b.Keys...), Queries: append(a.Queries, b.Queries...),
		Held: a.Held.Or(b.Held), Training: a.Training.Or(b.Training)}.trim()
}
func (f *denseQueriesMergeFn) ExtractOutput(a denseQueries) denseQueries { return a.trim() }

// denseShardInput is a query shard of EvaluateDenseParts, its queries
// (ShardOf), and what its DoFn reads besides the parts' files: the label
// counts, the model, the parts in part order (SortedParts) and the
// moments of the global features.
type denseShardInput struct {
	Shard   int
	Queries []evaluate.DenseQuery
	Labels  Labels
	Model   learners.Model
	Parts   []formats.Part
	Moments global.Moments
}

// denseShardsFn emits the query shards of the query set, the label
// counts, the model, the parts and the moments grouped under one key
// (onekeybeam.Group).
type denseShardsFn struct{ Opt evaluate.Options }

func (f *denseShardsFn) ProcessElement(_ int, queries func(*denseQueries) bool, labels func(*Labels) bool, model func(*learners.Model) bool,
	parts func(*formats.Part) bool, moments func(*global.Moments) bool, emit func(denseShardInput)) error {
	q, l, m, err := shardValues(queries, labels, model)
	if err != nil {
		return err
	}
	mo, err := onekeybeam.One(moments, "the moments of the global features")
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	all := SortedParts(parts)
	n := shardCount(f.Opt, len(q.Queries), l)
	for i := range n {
		emit(denseShardInput{Shard: i, Queries: ShardOf(q.Queries, i, n), Labels: l, Model: m, Parts: all, Moments: mo})
	}
	return nil
}

// denseShardFn ranks the collection for one shard of the queries, the
// queries i ≡ shard mod shards of the sorted set, as shardFn does. Its
// result's Postings is 0: a brute-force ranking has no index.
type denseShardFn struct {
	Opt evaluate.Options
	// Loads is shardFn's.
	Loads int

	// scaler is derived from the moments on the first element, as
	// denseCandidatesFn's.
	scaler *global.Scaler
}

func (f *denseShardFn) ProcessElement(ctx context.Context, in denseShardInput) (shardResult, error) {
	release, err := AcquireShard(ctx, f.Loads)
	if err != nil {
		return shardResult{}, err
	}
	defer release()
	start := time.Now()
	shard, labels, m, mine := in.Shard, in.Labels, in.Model, in.Queries
	if len(mine) == 0 {
		// No query at all (a shard is made even then): nothing to rank.
		return shardResult{StartMillis: start.UnixMilli(), EndMillis: time.Now().UnixMilli()}, nil
	}
	if f.scaler == nil {
		sc, err := global.NewScaler(in.Moments, global.Dims)
		if err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
		}
		f.scaler = &sc
	}
	all := in.Parts
	chunk := f.Opt.Chunk()
	r, err := evaluate.NewDenseRanking(m, mine, f.Opt.DepthFor(labels.Images), labels.Images, labels.Relevant())
	if err != nil {
		return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
	}
	rows := make([]train.DenseRow, 0, chunk)
	for _, p := range all {
		_, err := trainbeam.ReadDense(ctx, p.Path, f.scaler, func(row train.DenseRow) error {
			rows = append(rows, row)
			if len(rows) < chunk {
				return nil
			}
			err := r.Add(rows)
			rows = rows[:0]
			return err
		})
		if err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: shard %d, features part %d: %w", m.Learner, shard, p.Part, err)
		}
	}
	if len(rows) > 0 {
		if err := r.Add(rows); err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
		}
	}
	scores, err := r.Scores()
	if err != nil {
		return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
	}
	return shardResult{Scores: scores, IndexSeconds: r.IndexSeconds, Model: m.Learner,
		StartMillis: start.UnixMilli(), EndMillis: time.Now().UnixMilli()}, nil
}

type denseSummaryFn struct{ Opt evaluate.Options }

func (f *denseSummaryFn) ProcessElement(ctx context.Context, _ []byte, model func(*learners.Model) bool, labels Labels, results func(*shardResult) bool,
	emitRow func(formats.ReportRow), emitScores func(evaluate.Scores)) error {
	var m learners.Model
	if !model(&m) {
		return fmt.Errorf("evaluate: no model")
	}
	// Every image's row has the model's width (DenseRanking checks it):
	// evaluate.Dense's vocabulary, the length of the first row.
	width := 0
	for _, d := range m.Dims {
		width += d
	}
	row := formats.ReportRow{Method: m.Learner, Input: "global", Relevance: "label", Vocabulary: int64(width), TrainSeconds: m.Seconds}
	scores, _, _, _, _ := collectShards(&row, results)
	for _, r := range evaluate.Rows(row, scores, f.Opt) {
		log.Infof(ctx, "evaluate: %s (global features): %s queries: mAP %.4f [%.4f, %.4f], P@10 %.4f, NDCG@10 %.4f over %d queries (depth %d)",
			r.Method, r.Split, r.MAP, r.MAPLow, r.MAPHigh, r.PrecisionAt10, r.NDCGAt10, r.Queries, f.Opt.DepthFor(labels.Images))
		emitRow(r)
	}
	emitScores(lightScores(row.Method, row.Input, scores))
	return nil
}
