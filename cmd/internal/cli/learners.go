package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bowline/bowline/learners"
	"github.com/bowline/bowline/pipelines/bowline"
)

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

// NotInAll lists the learners that "all" leaves out, with the reason;
// they run when named.
var NotInAll = map[string]string{
	// BenchmarkOMDMLUpdate: 0.2–0.5 s per step on GIST's 512 dimensions,
	// hours for ETH-80's 65,600 triplets; the OMDML paper drops it on its
	// larger data sets for the same reason and keeps LOMDML.
	"omdml": "its PSD projection costs an O(n³) eigendecomposition per step and modality",
}

// ParseLearners reads a comma-separated list of learner names, where
// "all" stands for every registered learner of bags of words and, when
// global is set, every registered learner of global features, except
// those of NotInAll.
func ParseLearners(s string, global bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range strings.Split(s, ",") {
		switch n = strings.TrimSpace(n); {
		case n == "all":
			for _, m := range learners.Names() {
				add(m)
			}
			if global {
				for _, m := range learners.DenseNames() {
					if _, slow := NotInAll[m]; !slow && m != string(learners.BaselineEuclidean) { // the baseline is always evaluated
						add(m)
					}
				}
			}
		case n != "":
			add(n)
		}
	}
	return out
}

// ParseSweep parses --sweep, learner.name=v1,v2,…: one hyper-parameter of
// one learner and the values to train it with. An empty s is no sweep.
func ParseSweep(s string) (bowline.Sweep, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return bowline.Sweep{}, nil
	}
	key, vals, ok := strings.Cut(s, "=")
	learner, name, ok2 := strings.Cut(strings.TrimSpace(key), ".")
	if !ok || !ok2 || learner == "" || name == "" {
		return bowline.Sweep{}, fmt.Errorf("sweep %q: want learner.name=value,value,…", s)
	}
	w := bowline.Sweep{Learner: learner, Param: name}
	for _, v := range strings.Split(vals, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return bowline.Sweep{}, fmt.Errorf("sweep %q: %w", s, err)
		}
		w.Values = append(w.Values, x)
	}
	return w, nil
}
