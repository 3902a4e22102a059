package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bowline/bowline/cmd/internal/cmdline"
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

// CheckLearning checks the learners of l, with their parameters and the
// sweep, for a vocabulary of vocab words, with the global features or
// not, as bowline.Learning.Validate does, but in the words of the
// command line: its cmdline.UsageError names the flag to change (--learners,
// --learner_params or --sweep). The flags of single numbers are
// CheckFlags'.
func CheckLearning(l bowline.Learning, vocab int, global bool) error {
	fail := func(flagName string, err error) error {
		return cmdline.Usagef("--%s: %v%s", flagName, err, cmdline.HelpHint)
	}
	if len(l.Learners) == 0 {
		return fail("learners", fmt.Errorf("no learner named: name one, or all"))
	}
	for _, name := range l.Learners {
		switch {
		case !learners.IsDense(name) && !slices.Contains(learners.Names(), name):
			return fail("learners", fmt.Errorf("unknown learner %q: the learners of bags of words are %s; of global features (with --global) %s",
				name, strings.Join(learners.Names(), ", "), strings.Join(learners.DenseNames(), ", ")))
		case learners.IsDense(name) && !global:
			return fail("learners", fmt.Errorf("%s learns from global features: add --global", name))
		}
	}
	// One parameter at a time first, so that the error names the one.
	for _, learner := range slices.Sorted(maps.Keys(l.Params)) {
		for _, name := range slices.Sorted(maps.Keys(l.Params[learner])) {
			v := l.Params[learner][name]
			one := l
			one.Learners = []string{learner}
			one.Params = map[string]map[string]float64{learner: {name: v}}
			one.Sweep = bowline.Sweep{}
			if !slices.Contains(l.Learners, learner) || !learners.IsDense(learner) && !slices.Contains(learners.Names(), learner) {
				continue // the whole check below says why
			}
			if err := one.Validate(vocab, global); err != nil {
				return cmdline.Usagef("--learner_params %s.%s=%g: %v%s", learner, name, v, err, cmdline.HelpHint)
			}
		}
	}
	// Without the sweep's values, what is wrong is a learner's parameters;
	// the sweep's learner keeps its name, whose parameters may be given.
	plain := l
	plain.Sweep = bowline.Sweep{Learner: l.Sweep.Learner}
	if err := plain.Validate(vocab, global); err != nil {
		return fail("learner_params", err)
	}
	if err := l.Validate(vocab, global); err != nil {
		return fail("sweep", errors.New(strings.TrimPrefix(err.Error(), "sweep: ")))
	}
	return nil
}
