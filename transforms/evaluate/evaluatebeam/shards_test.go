package evaluatebeam

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/global"
	"github.com/bowline/bowline/transforms/internal/testkitbeam"
	"github.com/bowline/bowline/transforms/split"
)

// A query shard ranks for seconds: its step takes what it reads paired
// with it, and no side input (testkitbeam.SideInputs).
func TestShardsTakeNoSideInputs(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	parts, model := beam.Create(s, formats.Part{}), beam.Create(s, learners.Model{})
	EvaluateParts(s, parts, beam.Create(s, Queries{}), beam.Create(s, Labels{}), model, 8, evaluate.Options{}, 1)
	EvaluateDenseParts(s, parts, beam.Create(s, global.Moments{}), beam.Create(s, split.Cut{}), model, evaluate.Options{}, 1)
	for _, fn := range []any{(*shardFn)(nil), (*denseShardFn)(nil)} {
		for _, n := range testkitbeam.SideInputs(t, p, fn) {
			if n != 0 {
				t.Errorf("%T takes %d side inputs, want none", fn, n)
			}
		}
	}
}

// A shard carries its own queries and the parts that hold them, the ones
// ReadShard would pick for it from the whole set, so that a shard waiting
// for its slot holds only those.
func TestShardCarriesOnlyItsQueries(t *testing.T) {
	var q Queries
	for i := range 10 {
		q.Queries = append(q.Queries, evaluate.Query{ID: string(rune('a' + i)), Label: "l"})
		q.Parts = append(q.Parts, (7*i)%3)
	}
	labels := Labels{Images: 100, Postings: 1000}
	model := learners.Model{Learner: "tfidf"}
	one := func(v any) func(any) bool {
		done := false
		return func(dst any) bool {
			if done {
				return false
			}
			done = true
			switch d := dst.(type) {
			case *Queries:
				*d = v.(Queries)
			case *Labels:
				*d = v.(Labels)
			case *learners.Model:
				*d = v.(learners.Model)
			}
			return true
		}
	}
	opt := evaluate.Options{ShardQueries: 3}
	var got []shardInput
	qs, ls, ms := one(q), one(labels), one(model)
	err := (&shardsFn{Opt: opt}).ProcessElement(0,
		func(d *Queries) bool { return qs(d) }, func(d *Labels) bool { return ls(d) }, func(d *learners.Model) bool { return ms(d) },
		func(*formats.Part) bool { return false }, func(in shardInput) { got = append(got, in) })
	if err != nil {
		t.Fatal(err)
	}
	n := shardCount(opt, len(q.Queries), labels)
	if n < 2 || len(got) != n {
		t.Fatalf("%d shards emitted, shardCount %d: want the same, at least 2", len(got), n)
	}
	total := 0
	for i, in := range got {
		if in.Shard != i || in.Shards != n {
			t.Errorf("shard %d: Shard %d of %d, want %d of %d", i, in.Shard, in.Shards, i, n)
		}
		idx := shardByPart(q.Parts, i, n)
		if len(in.Queries) != len(idx) || len(in.Where) != len(idx) {
			t.Fatalf("shard %d: %d queries (%d parts), want %d", i, len(in.Queries), len(in.Where), len(idx))
		}
		for k, j := range idx {
			if in.Queries[k].ID != q.Queries[j].ID || in.Where[k] != q.Parts[j] {
				t.Errorf("shard %d, query %d: %s in part %d, want %s in part %d", i, k, in.Queries[k].ID, in.Where[k], q.Queries[j].ID, q.Parts[j])
			}
		}
		total += len(in.Queries)
	}
	if total != len(q.Queries) {
		t.Errorf("the shards carry %d queries, want %d", total, len(q.Queries))
	}
}
