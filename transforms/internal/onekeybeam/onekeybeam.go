// Package onekeybeam hands a long step the values it needs besides its main
// input without side inputs: while a bundle of a stage with side inputs
// runs, Prism (Beam Go SDK v2.77) finds the stage ready again at every
// turn of its scheduling loop — its input watermark, held by the bundle,
// stays behind its upstream one — and plans an empty bundle, at about a
// core for as long as the bundle runs (measured: 10.7 CPU s over a
// 10-second bundle with two side inputs, 0.5 s with the same data grouped
// as its main input). A step whose bundles take seconds therefore takes
// its values paired with its main input (Pair) or grouped with it under
// one key (Group). A ParDo whose main input is another stage's output is
// fused into that stage, side inputs and all, so a long step's output
// leaves through a Reshuffle where a consumer has side inputs.
package onekeybeam

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func init() {
	beam.RegisterDoFn(&pairFn{})
}

// Group groups the elements of cols under one key: a PCollection of one
// CoGroupByKey element (int, func(*A) bool, func(*B) bool, ...) whose
// iterators run over cols in their order. The DoFn that takes it sees
// every element of every collection, in one bundle.
func Group(s beam.Scope, cols ...beam.PCollection) beam.PCollection {
	keyed := make([]beam.PCollection, len(cols))
	for i, c := range cols {
		keyed[i] = beam.AddFixedKey(s, c)
	}
	return beam.CoGroupByKey(s, keyed...)
}

// Pair pairs every element of main (PCollection<T>) with the one element
// of one (PCollection<U>): PCollection<KV<T, U>>, spread again over the
// workers by a Reshuffle. What names one's value for the error of a job
// where one has no element or several.
func Pair(s beam.Scope, main, one beam.PCollection, what string) beam.PCollection {
	s = s.Scope("onekeybeam.Pair")
	return beam.Reshuffle(s, beam.ParDo(s, &pairFn{What: what}, Group(s, main, one)))
}

type pairFn struct{ What string }

func (f *pairFn) ProcessElement(_ int, mains func(*beam.T) bool, ones func(*beam.U) bool, emit func(beam.T, beam.U)) error {
	v, err := One(ones, f.What)
	if err != nil {
		return err
	}
	var m beam.T
	for mains(&m) {
		emit(m, v)
	}
	return nil
}

// One returns the one value iter yields, or an error naming what if it
// yields none or several.
func One[T any](iter func(*T) bool, what string) (T, error) {
	var v, w T
	n := 0
	for iter(&w) {
		v = w
		n++
	}
	if n != 1 {
		var zero T
		return zero, fmt.Errorf("%d values of %s, want 1", n, what)
	}
	return v, nil
}
