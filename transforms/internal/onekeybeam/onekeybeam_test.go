package onekeybeam

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/bowline/bowline/infra/prismretry"
)

func TestMain(m *testing.M) { ptest.MainWithDefault(m, prismretry.Runner) }

func init() { beam.RegisterFunction(formatFn) }

func formatFn(k int, v string) string { return fmt.Sprintf("%d:%s", k, v) }

// Every main element comes out once, paired with the one value.
func TestPairPairsEveryElementWithTheValue(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	pairs := Pair(s, beam.Create(s, 1, 2, 3), beam.Create(s, "x"), "the value")
	passert.Equals(s, beam.ParDo(s, formatFn, pairs), "1:x", "2:x", "3:x")
	ptest.RunAndValidate(t, p)
}

// A pair with no value or several fails the job, naming the value.
func TestPairFailsWithoutExactlyOneValue(t *testing.T) {
	for _, ones := range [][]string{{}, {"x", "y"}} {
		p, s := beam.NewPipelineWithRoot()
		pairs := Pair(s, beam.Create(s, 1, 2), beam.CreateList(s, ones), "the value")
		beam.ParDo(s, formatFn, pairs)
		err := ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), "values of the value, want 1") {
			t.Errorf("%d values: err %v, want one naming the value", len(ones), err)
		}
	}
}

func TestOne(t *testing.T) {
	iter := func(xs ...int) func(*int) bool {
		return func(p *int) bool {
			if len(xs) == 0 {
				return false
			}
			*p, xs = xs[0], xs[1:]
			return true
		}
	}
	if v, err := One(iter(7), "seven"); v != 7 || err != nil {
		t.Errorf("One(7) = %d, %v; want 7, nil", v, err)
	}
	for _, xs := range [][]int{nil, {1, 2}} {
		if _, err := One(iter(xs...), "n"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d values of n", len(xs))) {
			t.Errorf("One(%v): err %v, want the count", xs, err)
		}
	}
}
