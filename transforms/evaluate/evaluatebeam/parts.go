package evaluatebeam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/learners/sparse"
	"github.com/bowline/bowline/transforms/bow/bowbeam"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/index"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/internal/slots"
	"github.com/bowline/bowline/transforms/progress/progressbeam"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/split"
)

func init() {
	for _, t := range []any{(*Labels)(nil), (*Queries)(nil), (*shardResult)(nil), (*labelsFn)(nil), (*labelsMergeFn)(nil),
		(*candidatesFn)(nil), (*queriesMergeFn)(nil), (*shardsFn)(nil), (*shardFn)(nil), (*shardInput)(nil), (*summaryFn)(nil), (*formats.Part)(nil), (*report.Stage)(nil),
		(*selectorFn)(nil), (*cutFn)(nil), (*split.Cut)(nil), (*evaluate.Scores)(nil), (*compareFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
	beam.RegisterFunction(shardStageFn)
}

// Labels counts the images of each label of the collection, and the
// postings (words) of their bags, which size the evaluation's chunks.
// Held[i], where counted (nil otherwise), is the number of the Counts[i]
// images of label Names[i] that the evaluation's split holds out: needed
// where the collection is not the one the split was made from, whose
// held-out counts the split derives (split.Cut.Held).
type Labels struct {
	Images   int64
	Postings int64
	Names    []string
	Counts   []int64
	Held     []int64
}

// Relevant returns the images of each label: the relevant images of its
// queries, less the query itself.
func (l Labels) Relevant() map[string]int {
	m := make(map[string]int, len(l.Names))
	for i, n := range l.Names {
		m[n] = int(l.Counts[i])
	}
	return m
}

// held returns the images of each label held out by cut: counted (Held),
// or derived from the counts when the collection is cut's (split.Cut.Held).
func (l Labels) held(cut split.Cut) (map[string]int, error) {
	if l.Held == nil {
		return cut.Held(l.Relevant())
	}
	m := make(map[string]int, len(l.Names))
	for i, n := range l.Names {
		m[n] = int(l.Held[i])
	}
	return m, nil
}

// quotas returns the apportionments of the capped held-out and training
// query sets (evaluate.Options.Quotas) of the images labels counts, split
// by cut.
func (l Labels) quotas(opt evaluate.Options, cut split.Cut) (held, training evaluate.Quotas, err error) {
	h, err := l.held(cut)
	if err != nil {
		return evaluate.Quotas{}, evaluate.Quotas{}, fmt.Errorf("evaluate: %w", err)
	}
	hc, tc := evaluate.SetCounts(l.Relevant(), h)
	return opt.Quotas(true, hc), opt.Quotas(false, tc), nil
}

// Queries is the evaluation's query set, sorted by image id: each
// query's id, label and split (Queries, whose Vec is empty), its
// evaluate.QueryKey (Keys) and the bag-of-words part that holds it
// (Parts, formats.Part.Part).
//
// Every shard reads the set as a side input, and the runner holds a copy
// of it for each reader, in transit and decoded, so it carries no bags of
// words: on real photos (~1,700 words each) the default 11,000 queries'
// bags are ~150 MB, their ids under 1 MB. A shard reads the bags of its
// own queries from the few parts that hold them (ReadShard).
//
// Held and Training are the apportionments of the capped held-out and
// training sets (Labels.quotas): every partial set carries them, so that
// merging two trims their union to the sample of all the candidates
// (evaluate.Quotas.Pick), in memory bounded by the caps.
type Queries struct {
	Keys           []uint64
	Queries        []evaluate.Query
	Parts          []int
	Held, Training evaluate.Quotas
}

// QuerySet splits the images of bags of words written part by part
// (PCollection<formats.Part>) into training and held-out images (Split)
// and selects the queries of the evaluation — the labelled images whose
// label has another image, at most opt.Cap of the held-out and of the
// training ones, a sample stratified by label (evaluate.Apportion, then
// each label's of smallest evaluate.QueryKey): the queries evaluate.BoW
// selects. It returns the single-element PCollection<Queries>,
// the label counts, PCollection<Labels>, and the split,
// PCollection<split.Cut>. The set holds no bags of words (Queries): a
// few bytes a query, whatever the photos.
func QuerySet(s beam.Scope, bowParts beam.PCollection, opt evaluate.Options) (queries, labels, cut beam.PCollection) {
	s = s.Scope("evaluate.Queries")
	labels = beam.Combine(s, &labelsMergeFn{}, beam.ParDo(s, &labelsFn{}, bowParts))
	cut = Split(s, bowParts, labels, opt)
	cands := beam.ParDo(s, &candidatesFn{Opt: opt}, bowParts, beam.SideInput{Input: labels}, beam.SideInput{Input: cut})
	return beam.Combine(s, &queriesMergeFn{Opt: opt}, cands), labels, cut
}

// Split holds out opt.QueryFraction of each label's images of the bags of
// words written part by part (package split, seeded by opt.Seed), given
// their label counts (PCollection<Labels>), and returns the split as the
// single-element PCollection<split.Cut>. Each part is selected from on its
// own and the selections merged in one step, which holds each label's
// quota of candidates: a fifth of the labelled images' ids at the default
// fraction.
func Split(s beam.Scope, bowParts, labels beam.PCollection, opt evaluate.Options) beam.PCollection {
	s = s.Scope("split")
	sels := beam.ParDo(s, &selectorFn{Seed: opt.Seed, Fraction: opt.QueryFraction}, bowParts, beam.SideInput{Input: labels})
	return beam.ParDo(s, &cutFn{}, beam.Impulse(s), beam.SideInput{Input: sels})
}

// selectorFn selects the queries of one part, as an encoded split.Selector:
// the selector's state is unexported, and a part's is small.
type selectorFn struct {
	Seed     uint64
	Fraction float64
}

func (f *selectorFn) ProcessElement(ctx context.Context, p formats.Part, labels Labels) ([]byte, error) {
	sel, err := split.NewSelector(f.Seed, f.Fraction, labels.Relevant())
	if err != nil {
		return nil, err
	}
	err = fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		return sel.Offer(b.ImageID, b.Label)
	})
	if err != nil {
		return nil, fmt.Errorf("split: %w", err)
	}
	return sel.MarshalBinary()
}

type cutFn struct{}

func (cutFn) ProcessElement(ctx context.Context, _ []byte, sels func(*[]byte) bool) (split.Cut, error) {
	var all *split.Selector
	var b []byte
	for sels(&b) {
		var s split.Selector
		if err := s.UnmarshalBinary(b); err != nil {
			return split.Cut{}, err
		}
		if all == nil {
			all = &s
		} else if err := all.Merge(&s); err != nil {
			return split.Cut{}, err
		}
	}
	if all == nil {
		return split.Cut{}, nil
	}
	c, err := all.Cut()
	if err != nil {
		return split.Cut{}, err
	}
	log.Infof(ctx, "split: %d of %d labelled images held out as queries", c.Queries, c.Images)
	return c, nil
}

type labelsFn struct{}

func (labelsFn) ProcessElement(ctx context.Context, p formats.Part) (Labels, error) {
	m := map[string]int64{}
	var l Labels
	err := fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		l.Images++
		l.Postings += int64(len(b.WordIDs))
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
	m, held := map[string]int64{}, map[string]int64{}
	for _, l := range []Labels{a, b} {
		for i, n := range l.Names {
			m[n] += l.Counts[i]
			if l.Held != nil {
				held[n] += l.Held[i]
			}
		}
	}
	out := Labels{Images: a.Images + b.Images, Postings: a.Postings + b.Postings}
	for n := range m {
		out.Names = append(out.Names, n)
	}
	sort.Strings(out.Names)
	counted := a.Held != nil || b.Held != nil
	if counted {
		out.Held = []int64{}
	}
	for _, n := range out.Names {
		out.Counts = append(out.Counts, m[n])
		if counted {
			out.Held = append(out.Held, held[n])
		}
	}
	return out
}
func (labelsMergeFn) ExtractOutput(a Labels) Labels { return a }

type candidatesFn struct{ Opt evaluate.Options }

// candidatesFn selects the queries of one part, trimmed to the sample as
// it goes, so that it holds at most twice the caps' queries (or the
// part's candidates when a cap is 0: every query kept).
func (f *candidatesFn) ProcessElement(ctx context.Context, p formats.Part, labels Labels, cut split.Cut) (Queries, error) {
	rel := labels.Relevant()
	var q Queries
	var err error
	if q.Held, q.Training, err = labels.quotas(f.Opt, cut); err != nil {
		return Queries{}, err
	}
	bound := trimBound(f.Opt)
	err = fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
		if ok, held := evaluate.Classify(b.ImageID, b.Label, rel, cut); ok {
			q.Keys = append(q.Keys, evaluate.QueryKey(f.Opt.Seed, b.ImageID))
			q.Queries = append(q.Queries, evaluate.Query{ID: b.ImageID, Label: b.Label, Held: held})
			q.Parts = append(q.Parts, p.Part)
			if bound > 0 && len(q.Queries) >= bound {
				q = q.trim()
			}
		}
		return nil
	})
	return q.trim(), err
}

// trimBound returns the candidates a part's selection holds before it
// trims them to the sample: twice the caps, or 0 (never) when a cap is 0
// and every query of its set is kept.
func trimBound(opt evaluate.Options) int {
	if h, t := opt.Cap(true), opt.Cap(false); h > 0 && t > 0 {
		return 2 * (h + t)
	}
	return 0
}

// trim keeps, of the held-out and of the training queries, the sample
// their quotas (Held, Training) pick, sorted by image id.
func (q Queries) trim() Queries {
	var idx []int
	for _, held := range []bool{true, false} {
		var set []int
		for i, x := range q.Queries {
			if x.Held == held {
				set = append(set, i)
			}
		}
		quotas := q.Training
		if held {
			quotas = q.Held
		}
		for _, k := range quotas.Pick(len(set), func(k int) (uint64, string, string) {
			i := set[k]
			return q.Keys[i], q.Queries[i].ID, q.Queries[i].Label
		}) {
			idx = append(idx, set[k])
		}
	}
	sort.Slice(idx, func(a, b int) bool { return q.Queries[idx[a]].ID < q.Queries[idx[b]].ID })
	out := Queries{Keys: make([]uint64, len(idx)), Queries: make([]evaluate.Query, len(idx)), Parts: make([]int, len(idx)),
		Held: q.Held, Training: q.Training}
	for k, i := range idx {
		out.Keys[k], out.Queries[k], out.Parts[k] = q.Keys[i], q.Queries[i], q.Parts[i]
	}
	return out
}

// merge returns the sample of a's and b's candidates together. Every
// partial set but the empty accumulator carries the same quotas.
func (a Queries) merge(b Queries) Queries {
	out := Queries{Keys: append(a.Keys, b.Keys...), Queries: append(a.Queries, b.Queries...), Parts: append(a.Parts, b.Parts...),
		Held: a.Held.Or(b.Held), Training: a.Training.Or(b.Training)}
	return out.trim()
}

type queriesMergeFn struct{ Opt evaluate.Options }

func (f *queriesMergeFn) CreateAccumulator() Queries { return Queries{} }
func (f *queriesMergeFn) AddInput(a, b Queries) Queries {
	return f.MergeAccumulators(a, b)
}
func (f *queriesMergeFn) MergeAccumulators(a, b Queries) Queries { return a.merge(b) }
func (f *queriesMergeFn) ExtractOutput(a Queries) Queries        { return a.trim() }

// EvaluateParts evaluates the bag-of-words model (single-element
// PCollection<learners.Model>) by retrieval over the bags of words written
// part by part, with the queries and label counts of QuerySet, and returns
// its report rows (PCollection<formats.ReportRow>, evaluate.Rows), its
// per-query scores (single-element PCollection<evaluate.Scores>, for
// Compare), the time of each query shard (PCollection<report.Stage>,
// stage "evaluate") and each query's scores as rows of the run's
// per-query table (PCollection<formats.QueryScore>, made shard by
// shard). The queries are split into shards of at most
// opt.ShardQueries queries; each shard's DoFn reads its queries' bags
// from the few parts that hold them (ReadShard), then
// reads the parts in turn, indexes a chunk of them at a time (RankParts:
// opt.ChunkImages images or opt.ChunkPostings postings, whichever comes
// first) under the model's weights and merges each query's ranking chunk by chunk (evaluate.Ranking), so it
// holds one chunk and its queries' best results, never the collection,
// and scores each query, dropping its ranking, once it has seen the whole
// collection. Over several chunks the shards are made smaller so that
// their best results stay within opt.ShardHits (evaluate.ShardQueriesFor).
// The metrics equal evaluate.BoW's whatever the number of shards and
// chunks, up to the rank depth (opt.DepthFor).
//
// With opt.Rerank, each shard also keeps its queries' best opt.Rerank
// results (and their ties) and their rankings, verifies those results
// against the query by the keypoints of the geometry files beside the
// bags of words (evaluate.Verifier: the queries' keypoints and one image's
// at a time), and adds the model's re-ranked rows, named
// model+evaluate.RerankedSuffix, with their scores: what search's
// re-ranking of the same queries returns, tie-aware. Its shards are then
// sized so that the rankings they keep stay within opt.ShardHits
// (evaluate.Options.ShardQueriesReranked). A run without geometry files
// gets no such rows, and the log says why.
//
// A worker process evaluates at most loads shards at once (0: no limit),
// so it holds at most loads chunks (evaluate.Options.ChunkFull) and their
// queries, whatever the runner runs side by side.
func EvaluateParts(s beam.Scope, bowParts, queries, labels, model beam.PCollection, vocab int, opt evaluate.Options, loads int) (rows, scores, stages, perQuery beam.PCollection) {
	s = s.Scope("evaluate.EvaluateParts")
	// A shard ranks for seconds: it takes what it reads paired with it
	// (shardInput), not as side inputs (onekeybeam).
	shards := beam.ParDo(s, &shardsFn{Opt: opt}, onekeybeam.Group(s, queries, labels, model, bowParts))
	results := beam.ParDo(s, &shardFn{Opt: opt, Vocab: vocab, Loads: loads}, beam.Reshuffle(s, shards))
	rows, scores = beam.ParDo2(s, &summaryFn{Opt: opt, Vocab: vocab}, beam.Impulse(s),
		beam.SideInput{Input: model}, beam.SideInput{Input: labels}, beam.SideInput{Input: results})
	return rows, scores, beam.ParDo(s, shardStageFn, results), queryRows(s, "bow", results)
}

// shardStageFn records a query shard as a unit of the evaluate stage and
// logs the stage's progress: the shard is one of r.Shards of r.Model's
// evaluation (0 and "" if unknown), itself one of an unknown number.
func shardStageFn(ctx context.Context, r shardResult) report.Stage {
	u := report.Unit("evaluate", int64(len(r.Scores)), int64(len(r.Scores)), r.StartMillis, r.EndMillis)
	progressbeam.Log(ctx, u.Progress("query shards", r.Model, int64(r.Shards), 0))
	return u
}

// shardCount returns the number of shards of queries queries over a
// collection of labels.Images images.
func shardCount(opt evaluate.Options, queries int, labels Labels) int {
	return formats.Parts(int64(queries), opt.ShardQueriesReranked(labels.Images, labels.Postings))
}

// shardInput is a query shard of EvaluateParts and what its DoFn reads
// besides the parts' files: its own queries (shardByPart's, in query-set
// order) with the parts that hold their bags, the label counts, the model
// and the parts in part order (SortedParts). A shard waiting for its slot
// holds only its own queries, never the whole set.
type shardInput struct {
	Shard, Shards int
	Queries       []evaluate.Query
	Where         []int
	Labels        Labels
	Model         learners.Model
	Parts         []formats.Part
}

// shardsFn emits the query shards of the query set, the label counts, the
// model and the parts grouped under one key (onekeybeam.Group).
type shardsFn struct{ Opt evaluate.Options }

func (f *shardsFn) ProcessElement(_ int, queries func(*Queries) bool, labels func(*Labels) bool, model func(*learners.Model) bool,
	parts func(*formats.Part) bool, emit func(shardInput)) error {
	q, l, m, err := shardValues(queries, labels, model)
	if err != nil {
		return err
	}
	all := SortedParts(parts)
	n := shardCount(f.Opt, len(q.Queries), l)
	for i := range n {
		idx := shardByPart(q.Parts, i, n)
		in := shardInput{Shard: i, Shards: n, Queries: make([]evaluate.Query, len(idx)), Where: make([]int, len(idx)), Labels: l, Model: m, Parts: all}
		for k, j := range idx {
			in.Queries[k], in.Where[k] = q.Queries[j], q.Parts[j]
		}
		emit(in)
	}
	return nil
}

type shardResult struct {
	Scores       []evaluate.QueryScore
	IndexSeconds float64
	Postings     int64
	// StartMillis and EndMillis time the shard (Unix ms).
	StartMillis, EndMillis int64
	// Model names the learner evaluated and Shards the number of shards
	// of its queries, for the progress lines.
	Model  string
	Shards int
	// Reranked are the scores of the queries' rankings re-ranked by
	// spatial verification (evaluate.Options.Rerank), NoGeometry the
	// reason there are none where re-ranking was asked for.
	Reranked   []evaluate.QueryScore
	NoGeometry string
	// Expanded are the scores of the queries expanded and re-ranked again
	// (evaluate.Options.Expand).
	Expanded []evaluate.QueryScore
	// VerifySeconds is the time the shard's verification (and expansion)
	// took.
	VerifySeconds float64
}

// shardValues reads the one query set, label counts and model of the
// group a shards DoFn takes (onekeybeam.Group).
func shardValues[Q any](queries func(*Q) bool, labels func(*Labels) bool, model func(*learners.Model) bool) (Q, Labels, learners.Model, error) {
	q, err := onekeybeam.One(queries, "the query set")
	if err != nil {
		return q, Labels{}, learners.Model{}, fmt.Errorf("evaluate: %w", err)
	}
	l, err := onekeybeam.One(labels, "the label counts")
	if err != nil {
		return q, Labels{}, learners.Model{}, fmt.Errorf("evaluate: %w", err)
	}
	m, err := onekeybeam.One(model, "the model")
	if err != nil {
		return q, Labels{}, learners.Model{}, fmt.Errorf("evaluate: %w", err)
	}
	return q, l, m, nil
}

type shardFn struct {
	Opt   evaluate.Options
	Vocab int
	// Loads is the most shards a worker process evaluates at once
	// (slots; 0: no limit).
	Loads int
}

func (f *shardFn) ProcessElement(ctx context.Context, in shardInput) (shardResult, error) {
	release, err := AcquireShard(ctx, f.Loads)
	if err != nil {
		return shardResult{}, err
	}
	defer release()
	start := time.Now()
	shard, labels, m, all := in.Shard, in.Labels, in.Model, in.Parts
	w, err := m.Diagonal()
	if err != nil {
		return shardResult{}, fmt.Errorf("evaluate: %w", err)
	}
	n := in.Shards
	mine, err := ReadShard(ctx, in.Queries, in.Where, 0, 1, all)
	if err != nil {
		return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
	}
	r := evaluate.NewRanking(mine, f.Opt.DepthFor(labels.Images), labels.Images, labels.Relevant())
	var geometry []string
	var noGeometry string
	if f.Opt.Rerank > 0 {
		geometry, noGeometry, err = geometryPaths(ctx, all)
		if err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: %w", m.Learner, err)
		}
		if noGeometry == "" {
			r.Rerank(f.Opt.Rerank)
		}
	}
	if err := RankParts(ctx, r, all, f.Opt, w, f.Vocab, nil); err != nil {
		return shardResult{}, fmt.Errorf("evaluate %s: %w", m.Learner, err)
	}
	scores, err := r.Scores()
	if err != nil {
		return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
	}
	res := shardResult{Scores: scores, IndexSeconds: r.IndexSeconds, Postings: r.Postings, Model: m.Learner, Shards: n, NoGeometry: noGeometry}
	if geometry != nil {
		vstart := time.Now()
		v, err := evaluate.NewVerifier(r)
		if err != nil {
			return shardResult{}, err
		}
		if err := verify(ctx, v, geometry, true); err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
		}
		if res.Reranked, err = r.RerankedScores(); err != nil {
			return shardResult{}, fmt.Errorf("evaluate %s: shard %d: %w", m.Learner, shard, err)
		}
		if f.Opt.Expand > 0 {
			if res.Expanded, err = expand(ctx, r, v, res.Reranked, all, geometry, f.Opt, w, f.Vocab, labels); err != nil {
				return shardResult{}, fmt.Errorf("evaluate %s: shard %d: expansion: %w", m.Learner, shard, err)
			}
		}
		res.VerifySeconds = time.Since(vstart).Seconds()
	}
	res.StartMillis, res.EndMillis = start.UnixMilli(), time.Now().UnixMilli()
	return res, nil
}

// geometryPaths returns the geometry file beside each bag-of-words part
// (every run since geometry files writes them there, part for part,
// carried images' too), or why there are none: a run from before them (an
// old run's retrain) has no geometry to re-rank with, and its re-ranked
// rows are left out, not failed.
func geometryPaths(ctx context.Context, bows []formats.Part) (paths []string, missing string, err error) {
	for _, p := range bows {
		i := strings.LastIndex(p.Path, "/")
		if i < 0 {
			return nil, "", fmt.Errorf("bag-of-words part %s: no directory", p.Path)
		}
		path := fileio.Join(p.Path[:i], formats.ShardName(bowbeam.GeometryName, p.Part, p.Parts))
		if _, err := fileio.Size(ctx, path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Sprintf("no geometry file %s beside the bags of words (a run made before geometry files): no re-ranked rows", path), nil
			}
			return nil, "", fmt.Errorf("geometry: %w", err)
		}
		paths = append(paths, path)
	}
	return paths, "", nil
}

// AcquireShard waits until the worker process evaluates fewer than loads
// shards (0: no limit) — of the evaluation, or of tuning's validation,
// which share the limit — or for ctx, and returns the release of the
// shard's slot (package slots).
func AcquireShard(ctx context.Context, loads int) (release func(), err error) {
	return slots.Acquire(ctx, "evaluate.shard", loads)
}

// ShardOf returns shard's queries of shards: every shards-th query from
// the shard-th, so that each shard has the same mix of the sorted set.
func ShardOf[Q any](queries []Q, shard, shards int) []Q {
	var mine []Q
	for i := shard; i < len(queries); i += shards {
		mine = append(mine, queries[i])
	}
	return mine
}

// SortedParts returns the parts of an iterated side input in part order,
// the order every shard ranks them in.
func SortedParts(parts func(*formats.Part) bool) []formats.Part {
	var all []formats.Part
	var p formats.Part
	for parts(&p) {
		all = append(all, p)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Part < all[j].Part })
	return all
}

// RankParts ranks the bags of words of parts (those keep accepts; nil:
// all) for r's queries under the weights w, a chunk at a time: a chunk
// ends at the bag that fills it (opt.ChunkFull), in images or in
// postings, so a worker holds one chunk's bags and index whatever the
// collection and however many words its photos have.
func RankParts(ctx context.Context, r *evaluate.Ranking, parts []formats.Part, opt evaluate.Options, w []float32, vocab int, keep func(*formats.BoW) bool) error {
	var docs []formats.BoW
	var postings int64
	flush := func() error {
		if len(docs) == 0 {
			return nil
		}
		opt.Documents(docs, w)
		err := r.Add(docs, w, vocab)
		// The chunk's bags go now, not when the next chunk's overwrite
		// them.
		clear(docs)
		docs, postings = docs[:0], 0
		return err
	}
	for _, p := range parts {
		err := fileio.ReadEach(ctx, p.Path, func(b *formats.BoW) error {
			if keep != nil && !keep(b) {
				return nil
			}
			docs = append(docs, *b)
			postings += int64(len(b.WordIDs))
			if opt.ChunkFull(len(docs), postings) {
				return flush()
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return flush()
}

// expand returns the scores of r's queries expanded (evaluate.Options.Expand)
// and re-ranked again, from r's verified candidates (v verified them) and
// its queries' re-ranked scores, which a query with no verified candidate
// keeps: the bags of the candidates each query averages with are read
// from the parts (at most the shard's queries × opt.Expand of them), the
// expanded queries rank the parts again, and their candidates are
// verified against the keypoints v holds of the queries.
func expand(ctx context.Context, r *evaluate.Ranking, v *evaluate.Verifier, reranked []evaluate.QueryScore, parts []formats.Part, geometry []string,
	opt evaluate.Options, w []float32, vocab int, labels Labels) ([]evaluate.QueryScore, error) {
	queries := r.Queries()
	with := make([][]string, len(queries))
	bags := map[string]sparse.Vector{}
	for qi := range queries {
		with[qi] = r.Expansion(qi, opt.Expand)
		for _, id := range with[qi] {
			bags[id] = sparse.Vector{}
		}
	}
	if _, err := readBags(ctx, parts, bags); err != nil {
		return nil, err
	}
	var expanded []evaluate.Query
	var at []int
	for qi, q := range queries {
		if len(with[qi]) == 0 {
			continue
		}
		vecs := make([]sparse.Vector, len(with[qi]))
		for k, id := range with[qi] {
			vecs[k] = bags[id]
		}
		q.Vec = index.ExpandQuery(q.Vec, vecs)
		expanded, at = append(expanded, q), append(at, qi)
	}
	out := slices.Clone(reranked)
	if len(expanded) == 0 {
		return out, nil
	}
	clear(bags)
	r2 := evaluate.NewRanking(expanded, opt.DepthFor(labels.Images), labels.Images, labels.Relevant())
	r2.Rerank(opt.Rerank)
	if err := RankParts(ctx, r2, parts, opt, w, vocab, nil); err != nil {
		return nil, err
	}
	if err := verify(ctx, v.For(r2), geometry, false); err != nil {
		return nil, err
	}
	sc, err := r2.RerankedScores()
	if err != nil {
		return nil, err
	}
	for k, qi := range at {
		out[qi] = sc[k]
	}
	return out, nil
}

// verify verifies v's candidates against its queries (evaluate.Verifier)
// from the geometry files: the queries' rows in a first pass (if queries:
// not if v holds them), the candidates' in a second, a file at a time,
// only the rows asked for.
func verify(ctx context.Context, v *evaluate.Verifier, paths []string, queries bool) error {
	type pass struct {
		ids []string
		fn  func(*formats.Geometry) error
	}
	passes := []pass{{v.CandidateIDs(), v.Verify}}
	if queries {
		passes = append([]pass{{v.QueryIDs(), v.AddQuery}}, passes...)
	}
	for _, pass := range passes {
		for _, path := range paths {
			data, err := fileio.ReadBytes(ctx, path)
			if err != nil {
				return fmt.Errorf("geometry: %w", err)
			}
			if err := formats.ReadGeometry(ctx, bytes.NewReader(data), int64(len(data)), pass.ids, pass.fn); err != nil {
				return fmt.Errorf("geometry %s: %w", path, err)
			}
		}
	}
	return nil
}

type summaryFn struct {
	Opt   evaluate.Options
	Vocab int
}

func (f *summaryFn) ProcessElement(ctx context.Context, _ []byte, model func(*learners.Model) bool, labels Labels, results func(*shardResult) bool,
	emitRow func(formats.ReportRow), emitScores func(evaluate.Scores)) error {
	var m learners.Model
	if !model(&m) {
		return fmt.Errorf("evaluate: no model")
	}
	w, err := m.Diagonal()
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	row := formats.ReportRow{Method: m.Learner, Input: "bow", Relevance: "label", Vocabulary: int64(f.Vocab), TrainSeconds: m.Seconds}
	if w != nil {
		row.Sparsity = learners.Sparsity(w)
	}
	scores, reranked, expanded, noGeometry, verifySeconds := collectShards(&row, results)
	emit := func(row formats.ReportRow, scores []evaluate.QueryScore) {
		for _, r := range evaluate.Rows(row, scores, f.Opt) {
			log.Infof(ctx, "evaluate: %s: %s queries: mAP %.4f [%.4f, %.4f], P@10 %.4f, NDCG@10 %.4f over %d queries (depth %d); sparsity %.3f; %d postings",
				r.Method, r.Split, r.MAP, r.MAPLow, r.MAPHigh, r.PrecisionAt10, r.NDCGAt10, r.Queries, f.Opt.DepthFor(labels.Images), r.Sparsity, r.IndexPostings)
			emitRow(r)
		}
		emitScores(lightScores(row.Method, row.Input, scores))
	}
	emit(row, scores)
	switch {
	case f.Opt.Rerank <= 0:
	case noGeometry != "":
		log.Infof(ctx, "evaluate: %s: %s", row.Method, noGeometry)
	default:
		log.Infof(ctx, "evaluate: %s: the best %d results of %d queries verified, and expanded with %d (0: none), in %.1f s summed over the shards",
			row.Method, f.Opt.Rerank, len(reranked), f.Opt.Expand, verifySeconds)
		plain := row.Method
		row.Method = plain + evaluate.RerankedSuffix
		emit(row, reranked)
		if f.Opt.Expand > 0 {
			row.Method = plain + evaluate.ExpandedSuffix
			emit(row, expanded)
		}
	}
	return nil
}

// lightScores keeps of each query's scores what Compare needs.
func lightScores(method, input string, scores []evaluate.QueryScore) evaluate.Scores {
	out := evaluate.Scores{Method: method, Input: input, Queries: make([]evaluate.QueryScore, len(scores))}
	for i, q := range scores {
		out.Queries[i] = evaluate.QueryScore{ID: q.ID, Held: q.Held, AP: q.AP}
	}
	return out
}

// Compare fills each learner's rows (PCollection<formats.ReportRow>) with
// its paired comparison with its baseline (evaluate.Compare) from every
// method's scores (PCollection<evaluate.Scores>), and returns the rows.
func Compare(s beam.Scope, rows, scores beam.PCollection, seed uint64) beam.PCollection {
	s = s.Scope("evaluate.Compare")
	return beam.ParDo(s, &compareFn{Seed: seed}, beam.Impulse(s), beam.SideInput{Input: rows}, beam.SideInput{Input: scores})
}

type compareFn struct{ Seed uint64 }

func (f *compareFn) ProcessElement(_ []byte, rows func(*formats.ReportRow) bool, scores func(*evaluate.Scores) bool, emit func(formats.ReportRow)) error {
	var all []formats.ReportRow
	var r formats.ReportRow
	for rows(&r) {
		all = append(all, r)
		r = formats.ReportRow{}
	}
	var ss []evaluate.Scores
	var sc evaluate.Scores
	for scores(&sc) {
		ss = append(ss, sc)
		sc = evaluate.Scores{}
	}
	if err := evaluate.Compare(all, ss, f.Seed); err != nil {
		return err
	}
	for _, r := range all {
		emit(r)
	}
	return nil
}

// collectShards gathers the shards' query scores (and re-ranked scores,
// or why there are none, and the time their verification took) and takes
// the index time and postings from the first shard: every shard indexes
// (or embeds) the whole collection, so they are counted once.
func collectShards(row *formats.ReportRow, results func(*shardResult) bool) (scores, reranked, expanded []evaluate.QueryScore, noGeometry string, verifySeconds float64) {
	var res shardResult
	first := true
	for results(&res) {
		scores = append(scores, res.Scores...)
		reranked = append(reranked, res.Reranked...)
		expanded = append(expanded, res.Expanded...)
		verifySeconds += res.VerifySeconds
		if res.NoGeometry != "" {
			noGeometry = res.NoGeometry
		}
		if first {
			row.IndexSeconds, row.IndexPostings, first = res.IndexSeconds, res.Postings, false
		}
		res = shardResult{}
	}
	return scores, reranked, expanded, noGeometry, verifySeconds
}
