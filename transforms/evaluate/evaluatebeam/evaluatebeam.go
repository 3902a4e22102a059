// Package evaluatebeam is the Beam wrapper of package evaluate: it splits
// the images into training and held-out ones (Split), selects the queries
// (QuerySet), evaluates each model of bags of words shard by shard of
// queries over the bag-of-words files (EvaluateParts) and each model of
// global features over the features files (EvaluateDenseParts), and
// compares every
// learner with its baseline query by query (Compare).
package evaluatebeam

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*formats.ReportRow)(nil)).Elem())
}
