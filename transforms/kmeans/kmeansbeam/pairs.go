package kmeansbeam

import (
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/bowline/bowline/formats"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*partTotal)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*partThreshold)(nil)).Elem())
	beam.RegisterFunction(pairTotalFn)
	beam.RegisterFunction(pairThresholdFn)
}

// The steps that read the features parts, and the seeding, take the one
// value they need besides their input (the descriptors' total, the
// sample's threshold) paired with each input element rather than as a
// side input: while a bundle of a stage with side inputs runs, Prism
// (v2.77) finds the stage ready again at every turn of its scheduling
// loop and plans an empty bundle, at about a core (see loopFn), and
// reading a part or seeding takes seconds. The pairs go through a
// CoGroupByKey under one key, and a Reshuffle spreads them again.

// partTotal is a features part and the descriptors of all parts.
type partTotal struct {
	Part  formats.Part
	Total int64
}

// partThreshold is a features part and the threshold of the sample drawn
// from all parts.
type partThreshold struct {
	Part formats.Part
	Thr  threshold
}

// withTotal pairs every part (PCollection<formats.Part>) with total, a
// single-element PCollection<int64>: PCollection<partTotal>.
func withTotal(s beam.Scope, parts, total beam.PCollection) beam.PCollection {
	g := beam.CoGroupByKey(s, beam.AddFixedKey(s, parts), beam.AddFixedKey(s, total))
	return beam.Reshuffle(s, beam.ParDo(s, pairTotalFn, g))
}

func pairTotalFn(_ int, parts func(*formats.Part) bool, totals func(*int64) bool, emit func(partTotal)) error {
	total, err := readOne(totals, "the descriptors' total")
	if err != nil {
		return err
	}
	var p formats.Part
	for parts(&p) {
		emit(partTotal{Part: p, Total: total})
	}
	return nil
}

// withThreshold pairs every part (PCollection<formats.Part>) with thr, a
// single-element PCollection<threshold>: PCollection<partThreshold>.
func withThreshold(s beam.Scope, parts, thr beam.PCollection) beam.PCollection {
	g := beam.CoGroupByKey(s, beam.AddFixedKey(s, parts), beam.AddFixedKey(s, thr))
	return beam.Reshuffle(s, beam.ParDo(s, pairThresholdFn, g))
}

func pairThresholdFn(_ int, parts func(*formats.Part) bool, thrs func(*threshold) bool, emit func(partThreshold)) error {
	thr, err := readOne(thrs, "the threshold of the sample")
	if err != nil {
		return err
	}
	var p formats.Part
	for parts(&p) {
		emit(partThreshold{Part: p, Thr: thr})
	}
	return nil
}
