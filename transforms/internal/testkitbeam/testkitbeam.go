// Package testkitbeam holds what the Beam wrappers' tests share about a
// built pipeline. It is imported only by tests.
package testkitbeam

import (
	"reflect"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph"
)

// SideInputs returns the number of side inputs of each ParDo of p whose
// DoFn is a struct of fn's type (fn a pointer to one, e.g. (*someFn)(nil)),
// in graph order; it fails the test if p does not build or has no such
// ParDo. A step whose bundles take seconds should have none: Prism spins
// about a core while such a bundle runs (package onekeybeam).
func SideInputs(t testing.TB, p *beam.Pipeline, fn any) []int {
	t.Helper()
	edges, _, err := p.Build()
	if err != nil {
		t.Fatalf("building the pipeline: %v", err)
	}
	want := reflect.TypeOf(fn)
	var out []int
	for _, e := range edges {
		if e.Op == graph.ParDo && e.DoFn != nil && reflect.TypeOf(e.DoFn.Recv) == want {
			out = append(out, len(e.Input)-1)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no ParDo of %v in the pipeline", want)
	}
	return out
}
