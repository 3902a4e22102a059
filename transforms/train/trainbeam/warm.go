package trainbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/train"
)

func init() {
	for _, t := range []any{(*Warm)(nil), (*stateRowsFn)(nil), (*readWarmFn)(nil)} {
		beam.RegisterType(reflect.TypeOf(t).Elem())
	}
}

// StateName is the name of the table of a learner of bags of words' final
// state: state-<name>-*.parquet beside model-<name>-*.parquet. The model
// file holds the weights, which is what an index needs; the state holds
// what the weights are derived from (SOLIS-ADA's subgradient sums and
// squared sums, for one), which is what training needs to continue where
// it stopped: a learner restored from its weights alone would not.
func StateName(name string) string { return "state-" + name }

// Warm is the state one learner of TrainGroupsFrom starts from: Index is
// its position in the options.
type Warm struct {
	Index int
	State learners.State
}

// ParamsJSON is the hyper-parameters as the state file records them: the
// JSON of the learner's Params (sorted keys). A warm start needs the same.
func ParamsJSON(o train.ShardOptions) string {
	js, err := json.Marshal(o.Params)
	if err != nil {
		panic(fmt.Sprintf("trainbeam: params of %s: %v", o.Learner, err)) // a map of floats always marshals
	}
	return string(js)
}

// StateRows turns a learner's final state (single-element
// PCollection<train.RoundState>, from TrainGroupsFrom) into the rows of
// its state file (PCollection<formats.ModelTensor>): one row per vector of
// the learners.State, Learner the name the learner is reported under,
// Params ParamsJSON(o), Dims {o.Dim}, Steps the state's.
func StateRows(s beam.Scope, state beam.PCollection, name string, o train.ShardOptions) beam.PCollection {
	return beam.ParDo(s.Scope("train.StateRows"), &stateRowsFn{Name: name, Params: ParamsJSON(o), Dim: o.Dim}, state)
}

type stateRowsFn struct {
	Name, Params string
	Dim          int
}

func (f *stateRowsFn) ProcessElement(st train.RoundState, emit func(formats.ModelTensor)) {
	for i, v := range st.State.Vectors {
		emit(formats.ModelTensor{Learner: f.Name, Params: f.Params, Dims: []int64{int64(f.Dim)}, Steps: st.State.Steps, Index: int32(i), Values: v})
	}
}

// WarmFile is a state file of an earlier run for learner Index of
// TrainGroupsFrom's options.
type WarmFile struct {
	Index int
	// Pattern matches the state file's shards.
	Pattern string
	// Opt is the learner's options in this run: the state must have been
	// saved with the same hyper-parameters and vocabulary size, or the
	// learner starts fresh.
	Opt train.ShardOptions
}

// ReadWarm reads the state files, when gate (a single-element
// PCollection<bool>) is true, into PCollection<Warm>: a state saved with
// other hyper-parameters or another vocabulary size is logged and left
// out, so that its learner starts fresh. With gate false it reads nothing
// and is empty.
func ReadWarm(s beam.Scope, files []WarmFile, gate beam.PCollection) beam.PCollection {
	s = s.Scope("train.ReadWarm")
	return beam.ParDo(s, &readWarmFn{Files: files}, beam.Impulse(s), beam.SideInput{Input: gate})
}

type readWarmFn struct{ Files []WarmFile }

func (f *readWarmFn) ProcessElement(ctx context.Context, _ []byte, gate bool, emit func(Warm)) error {
	if !gate {
		return nil
	}
	for _, w := range f.Files {
		rows, err := fileio.ReadAll[formats.ModelTensor](ctx, w.Pattern)
		if err != nil {
			return fmt.Errorf("train: the warm start of %s: %w", w.Opt.Learner, err)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].Index < rows[j].Index })
		want := ParamsJSON(w.Opt)
		st := learners.State{Learner: w.Opt.Learner}
		var why string
		for i, r := range rows {
			switch {
			case r.Params != want:
				why = fmt.Sprintf("it was trained with %s, this run with %s", r.Params, want)
			case len(r.Dims) != 1 || r.Dims[0] != int64(w.Opt.Dim):
				why = fmt.Sprintf("its vocabulary has %v words, this run's %d", r.Dims, w.Opt.Dim)
			case int(r.Index) != i || r.Steps != rows[0].Steps:
				return fmt.Errorf("train: %s: malformed state rows", w.Pattern)
			}
			st.Steps = r.Steps
			st.Vectors = append(st.Vectors, r.Values)
		}
		if len(rows) == 0 {
			why = "the previous run saved no state"
		}
		if why != "" {
			log.Infof(ctx, "train: %s starts fresh, not from the previous run's state: %s", w.Opt.Learner, why)
			continue
		}
		emit(Warm{Index: w.Index, State: st})
	}
	return nil
}
