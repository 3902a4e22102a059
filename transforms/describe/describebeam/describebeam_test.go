package describebeam

import (
	"encoding/json"
	"testing"

	"github.com/bowline/bowline/transforms/describe"
)

// TestPartLoadsReachTheWorker checks that the limit of parts described at
// once survives the JSON a runner ships the DoFn to its workers in: the
// options leave it out of their JSON, and without a field of its own every
// part of the stage was described side by side.
func TestPartLoadsReachTheWorker(t *testing.T) {
	opt := describe.DefaultOptions()
	opt.PartLoads = 3
	fn := &describeFn{Opt: opt, Dir: "/tmp/x", Loads: opt.PartLoads}
	js, err := json.Marshal(fn)
	if err != nil {
		t.Fatal(err)
	}
	var got describeFn
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if got.Loads != 3 {
		t.Errorf("a worker's DoFn takes %d parts at once, want 3 (JSON %s)", got.Loads, js)
	}
}
