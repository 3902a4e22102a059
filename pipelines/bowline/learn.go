package bowline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats/parquetio"
	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/transforms/evaluate/evaluatebeam"
	"github.com/bowline/bowline/transforms/index/indexbeam"
	"github.com/bowline/bowline/transforms/report"
	"github.com/bowline/bowline/transforms/train"
)

// Learning configures the similarity learners trained on the bags of words
// and how they are evaluated.
type Learning struct {
	// Learners names the learners to train, each compared with the
	// TF-IDF baseline in the report (see learners.Names).
	Learners []string
	// Params overrides hyper-parameters by learner and name, e.g.
	// Params["solis-ada"]["lambda"]; the rest keep DefaultParams.
	Params map[string]map[string]float64
	// Shards and Rounds configure sharded training with parameter
	// averaging; 1 and 1 is the sequential learner.
	Shards, Rounds int
	Eval           evaluatebeam.Options
}

// DefaultParams are the hyper-parameters the pipeline uses where the
// command line sets none. They come from a sweep over the rates
// {0.1, 1, 10} (DA's γ over {0.01, 0.1, 1}, OASIS's C over {0.01 … 10}) and
// λ ∈ {0, 1e-5, 1e-4} on the shapes test set (200 words) and ETH-80 with
// category labels (1,000 words), keeping what did best on both. The L1
// strengths act on the average gradient, whose scale shrinks as the
// vocabulary grows: larger vocabularies want smaller λ.
var DefaultParams = map[string]map[string]float64{
	"solis-ada":  {"eta": 10, "lambda": 1e-5, "delta": 1e-8},
	"solis-afb":  {"eta": 10, "lambda": 1e-5, "delta": 1e-8},
	"solis-tg":   {"eta": 10, "lambda": 1e-5},
	"solis-da":   {"gamma": 0.01, "lambda": 1e-5},
	"oasis-diag": {"c": 10},
}

// DefaultLearning trains the four SOLIS learners and diagonal OASIS, the
// SOLIS paper's comparison, sequentially.
func DefaultLearning() Learning {
	return Learning{
		Learners: []string{"solis-ada", "solis-afb", "solis-da", "solis-tg", "oasis-diag"},
		Shards:   1, Rounds: 1,
		Eval: evaluatebeam.Options{MaxQueries: 10_000, Seed: 1},
	}
}

// params returns the hyper-parameters of learner: DefaultParams overridden
// by l.Params.
func (l Learning) params(learner string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range DefaultParams[learner] {
		out[k] = v
	}
	for k, v := range l.Params[learner] {
		out[k] = v
	}
	return out
}

// Validate reports a learner that does not exist or rejects its
// parameters, and parameters given for a learner not trained.
func (l Learning) Validate(dim int) error {
	if len(l.Learners) == 0 {
		return fmt.Errorf("no learners")
	}
	seen := map[string]bool{}
	for _, name := range l.Learners {
		if seen[name] {
			return fmt.Errorf("learner %s named twice", name)
		}
		seen[name] = true
		if err := l.options(name, dim).Validate(); err != nil {
			return err
		}
	}
	for name := range l.Params {
		if !seen[name] {
			return fmt.Errorf("parameters given for %s, which is not among the learners (%s)", name, strings.Join(l.Learners, ","))
		}
	}
	return nil
}

func (l Learning) options(name string, dim int) train.ShardOptions {
	return train.ShardOptions{Learner: name, Params: l.params(name), Dim: dim, Shards: l.Shards, Rounds: l.Rounds}
}

// Learn trains every learner of l on the triplets, writes each model and
// its inverted index under out, and evaluates each, and the TF-IDF
// baseline, by retrieval over bows. It returns the report rows and the
// collections of written paths (to wait on).
func Learn(s beam.Scope, bows, trips beam.PCollection, dim int, l Learning, out string, shards int) (rows beam.PCollection, written []beam.PCollection) {
	s = s.Scope("Learn")
	feats := train.Features(s, trips, bows)
	// Each model is evaluated in its own ParDo: Prism (v2.77.0) ran a ParDo
	// whose main input was a Flatten of a Create and a computed collection
	// before its side input was complete, and evaluated the baseline over
	// no images at all.
	baseline := beam.Create(s, train.Model{Learner: report.Baseline})
	evals := []beam.PCollection{evaluatebeam.Evaluate(s, bows, baseline, l.Eval)}
	for _, name := range l.Learners {
		model := train.Sharded(s, feats, l.options(name, dim))
		written = append(written,
			parquetio.Write(s, out, "model-"+name, 1, train.ModelRows(s, model)),
			parquetio.Write(s, out, "index-"+name, shards, indexbeam.Postings(s, bows, model)))
		evals = append(evals, evaluatebeam.Evaluate(s, bows, model, l.Eval))
	}
	return beam.Flatten(s, evals...), written
}

// ParseParams reads hyper-parameters written as
// "learner.name=value,learner.name=value", e.g.
// "solis-ada.lambda=1e-5,oasis-diag.c=0.1".
func ParseParams(s string) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		learner, name, ok2 := strings.Cut(key, ".")
		if !ok || !ok2 || learner == "" || name == "" {
			return nil, fmt.Errorf("parameter %q: want learner.name=value", item)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", item, err)
		}
		if out[learner] == nil {
			out[learner] = map[string]float64{}
		}
		out[learner][strings.TrimSpace(name)] = v
	}
	return out, nil
}

// ParseLearners reads a comma-separated list of learner names; "all" names
// every registered learner that learns from bags of words.
func ParseLearners(s string) []string {
	if strings.TrimSpace(s) == "all" {
		names := learners.Names()
		sort.Strings(names)
		return names
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}
