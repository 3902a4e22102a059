package evaluatebeam

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/transforms/evaluate"
)

func init() {
	beam.RegisterType(reflect.TypeFor[queryRowsFn]())
}

// queryRows returns the per-query rows (PCollection<formats.QueryScore>)
// of the shards' results (PCollection<shardResult>) of a model ranking
// input ("bow" or "global"): a shard's rows are made from that shard
// alone, so no worker holds more than one shard's scores for them.
func queryRows(s beam.Scope, input string, results beam.PCollection) beam.PCollection {
	return beam.ParDo(s, &queryRowsFn{Input: input}, results)
}

// queryRowsFn emits a row for each query of a shard under each method the
// shard scored: the model, and its re-ranked and expanded rankings, named
// as their report rows are.
type queryRowsFn struct{ Input string }

func (f *queryRowsFn) ProcessElement(r shardResult, emit func(formats.QueryScore)) {
	for _, m := range []struct {
		suffix string
		scores []evaluate.QueryScore
	}{{"", r.Scores}, {evaluate.RerankedSuffix, r.Reranked}, {evaluate.ExpandedSuffix, r.Expanded}} {
		for _, q := range m.scores {
			emit(q.Row(r.Model+m.suffix, f.Input))
		}
	}
}
