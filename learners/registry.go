package learners

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// A Factory makes a learner of one algorithm over dim coordinates. params
// holds hyper-parameters by the names the learner's Params method uses;
// a missing name takes the algorithm's default and an unknown name is an
// error, so that a misspelt flag does not silently keep a default.
type Factory func(dim int, params map[string]float64) (Stateful, error)

var registry struct {
	sync.RWMutex
	m map[string]Factory
}

// Register makes a learner available to New under name. The packages that
// implement learners call it from their init functions, as image formats
// and database drivers register themselves, because package learners
// cannot import them (they import it). A program therefore links in the
// learners it wants to pick by name, e.g. with
//
//	import _ "github.com/bowline/bowline/learners/oasis"
//
// Register panics, as for a programmer error, if name is empty, f is nil,
// or name is already registered.
func Register(name string, f Factory) {
	if name == "" || f == nil {
		panic("learners: Register with an empty name or a nil Factory")
	}
	denseRegistry.RLock()
	_, dense := denseRegistry.m[name]
	denseRegistry.RUnlock()
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup || dense {
		panic(fmt.Sprintf("learners: Register called twice for %q", name))
	}
	if registry.m == nil {
		registry.m = make(map[string]Factory)
	}
	registry.m[name] = f
}

// New returns a new learner of the algorithm registered under name, over
// dim coordinates, with the hyper-parameters params (see Factory).
// New(l.Name(), l.Dim(), l.Params()) makes a learner like l before its
// first Update.
func New(name string, dim int, params map[string]float64) (Stateful, error) {
	registry.RLock()
	f, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown learner %q; the learners of bags of words are: %s", name, strings.Join(Names(), ", "))
	}
	l, err := f(dim, params)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Names returns the names of the registered learners, sorted.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// AssignParams stores params[name] into *fields[name] for every name in
// params, and returns an error naming every name that fields lacks (sorted,
// so the message does not depend on map order), in which case it stores
// nothing. Factories apply their params over the defaults with it:
//
//	p := DefaultXParams()
//	err := learners.AssignParams(map[string]*float64{"eta": &p.Eta}, params)
//
// It does not validate the values; the learner's constructor does.
func AssignParams(fields map[string]*float64, params map[string]float64) error {
	var unknown []string
	for name := range params {
		if _, ok := fields[name]; !ok {
			unknown = append(unknown, fmt.Sprintf("%q", name))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		known := make([]string, 0, len(fields))
		for name := range fields {
			known = append(known, name)
		}
		slices.Sort(known)
		return fmt.Errorf("unknown parameter %s (want %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	for name, v := range params {
		*fields[name] = v
	}
	return nil
}

// Switch reads the hyper-parameter name of learner, one that turns a
// behaviour on or off (e.g. "nonneg"): params carry every hyper-parameter
// as a number, so that one flag syntax and one state record serve all of
// them, and a switch is 0 (off) or 1 (on). Any other value, NaN included,
// is an error naming learner and name, rather than a guess at what 0.5
// means.
func Switch(learner, name string, v float64) (bool, error) {
	switch v {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, fmt.Errorf("%s: %s must be 0 (off) or 1 (on), got %v", learner, name, v)
}

// AssignSwitched is AssignParams for a learner whose hyper-parameters
// include switches (Switch): the numbers go into fields, the switches,
// recorded as numbers too, into switches, and an error names learner.
func AssignSwitched(learner string, fields map[string]*float64, switches map[string]*bool, params map[string]float64) error {
	all := maps.Clone(fields)
	values := make(map[string]*float64, len(switches))
	for name, on := range switches {
		v := SwitchValue(*on)
		all[name], values[name] = &v, &v
	}
	if err := AssignParams(all, params); err != nil {
		return fmt.Errorf("%s: %w", learner, err)
	}
	for _, name := range slices.Sorted(maps.Keys(switches)) {
		on, err := Switch(learner, name, *values[name])
		if err != nil {
			return err
		}
		*switches[name] = on
	}
	return nil
}

// SwitchValue is the number a switch is recorded as in Params: 1 if on,
// 0 if off (Switch reads it back).
func SwitchValue(on bool) float64 {
	if on {
		return 1
	}
	return 0
}
