package euclidean

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bowline/bowline/learners"
)

// The baseline registers with learners.NewDense as "euclidean", a
// DenseBatch model (Model) that takes no parameters: any is an error, as an
// unknown parameter is for every learner.
func init() {
	learners.RegisterDense("euclidean", func(dims []int, params map[string]float64) (learners.DenseModel, error) {
		if len(params) > 0 {
			names := make([]string, 0, len(params))
			for name := range params {
				names = append(names, fmt.Sprintf("%q", name))
			}
			slices.Sort(names)
			return nil, fmt.Errorf("euclidean: unknown parameter %s (it takes none)", strings.Join(names, ", "))
		}
		m, err := New(dims)
		if err != nil {
			return nil, err
		}
		return m, nil
	})
}
