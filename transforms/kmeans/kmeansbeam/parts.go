package kmeansbeam

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	"github.com/bowline/bowline/transforms/internal/onekeybeam"
	"github.com/bowline/bowline/transforms/internal/slots"
)

// A sample of more than Options.WholeSample descriptors is never held whole
// by one worker: it is the same bottom-n sample (see VocabularyOfParts),
// drawn part by part.
//
//	per part:  its priorities under the cut-off, from its rows' heads (images and keypoint counts)
//	threshold: the n-th and m-th smallest priorities of all parts, on one worker (8 bytes a descriptor)
//	chunks:    each part read again, its descriptors of priority ≤ the n-th written in chunks of maxChunk,
//	           and those of priority ≤ the m-th emitted for the seeding
//	seeding:   kmeans.Initialize on the bottom m of the sample, on one worker
//
// and the chunks train as in distributed training. The seeding sees the
// m = max(K, WholeSample) descriptors of smallest priority, a prefix
// of the sample; Lloyd's iterations see all of it. A tie of two 64-bit
// priorities at the threshold, which the whole sample breaks by the
// descriptors' bytes, keeps both here: Sampled counts them.

// inParts reports whether o's sample is drawn part by part.
func (o Options) inParts() bool { return o.sample() > o.wholeSample() }

// seedSample returns the descriptors the seeding of a sample drawn in
// parts sees.
func (o Options) seedSample() int { return min(o.sample(), max(o.K, o.wholeSample())) }

// prios is a part's, or a merge of parts', smallest sampling priorities,
// ascending.
type prios struct{ P []uint64 }

// threshold is the largest priority of a sample and the number of
// descriptors at or under it, and the largest priority of its seeding
// sample.
type threshold struct {
	Prio     uint64
	Count    int
	SeedPrio uint64
}

// bottom returns the n smallest of the ascending p, and any equal to the
// n-th.
func bottom(p []uint64, n int) []uint64 {
	if len(p) <= n {
		return p
	}
	end := n
	for n > 0 && end < len(p) && p[end] == p[n-1] {
		end++
	}
	return p[:end]
}

// partPriosFn reads a features part once for the
// priorities under the cut-off of a sample of Max (sampleOfParts). The
// priorities need only the images and their numbers of keypoints, so it
// reads the rows' heads (formats.FeaturesHead), not their descriptors;
// partChunksFn checks that every descriptor it meets is one of
// DescriptorSize bytes, so that both passes see the same descriptors.
type partPriosFn struct {
	Max   int
	Hash  uint64
	Loads int
}

func (f *partPriosFn) ProcessElement(ctx context.Context, p formats.Part, total int64) (prios, error) {
	release, err := slots.Acquire(ctx, "vocabulary.part", f.Loads)
	defer release()
	if err != nil {
		return prios{}, fmt.Errorf("vocabulary: part %d: %w", p.Part, err)
	}
	cut := cutOff(f.Max, total)
	var out prios
	err = fileio.ReadEach(ctx, p.Path, func(head *formats.FeaturesHead) error {
		base := priorityBase(f.Hash, head.ImageID)
		for i := range head.X {
			if prio := priority(base, i); prio < cut || cut == math.MaxUint64 {
				out.P = append(out.P, prio)
			}
		}
		if len(out.P) > 2*f.Max {
			slices.Sort(out.P)
			out.P = slices.Clip(bottom(out.P, f.Max))
		}
		return nil
	})
	if err != nil {
		return prios{}, fmt.Errorf("vocabulary: %w", err)
	}
	slices.Sort(out.P)
	out.P = bottom(out.P, f.Max)
	return out, nil
}

// cutOff is the priority under which a part keeps its candidates for a
// sample of n of total descriptors: 4n/total of the range (see
// VocabularyOfParts), all of it if that is 1 or more.
func cutOff(n int, total int64) uint64 {
	if frac := 4 * float64(n) / float64(max(total, 1)); frac < 1 {
		return uint64(frac * math.MaxUint64)
	}
	return math.MaxUint64
}

// mergePriosFn finds the threshold of the bottom-Max sample, and of its
// bottom-Seed seeding sample, from the parts' priorities: the accumulator
// holds at most 2·Max of them.
type mergePriosFn struct{ Max, Seed int }

func (f *mergePriosFn) CreateAccumulator() prios { return prios{} }
func (f *mergePriosFn) AddInput(a, b prios) prios {
	return f.MergeAccumulators(a, b)
}

func (f *mergePriosFn) MergeAccumulators(a, b prios) prios {
	out := make([]uint64, 0, min(len(a.P)+len(b.P), 2*f.Max+1))
	i, j := 0, 0
	for (i < len(a.P) || j < len(b.P)) && len(out) < cap(out) {
		if j == len(b.P) || (i < len(a.P) && a.P[i] <= b.P[j]) {
			out = append(out, a.P[i])
			i++
		} else {
			out = append(out, b.P[j])
			j++
		}
	}
	return prios{P: bottom(out, f.Max)}
}

func (f *mergePriosFn) ExtractOutput(a prios) threshold {
	p := bottom(a.P, f.Max)
	if len(p) == 0 {
		return threshold{}
	}
	return threshold{Prio: p[min(f.Max, len(p))-1], Count: len(p), SeedPrio: p[min(f.Seed, len(p))-1]}
}

// initPartsFn is initFn on the seeding sample of a sample drawn in parts,
// given with the sample's threshold under one key (onekeybeam.Group), if
// there is one; Words is initialWords, as initFn's.
type initPartsFn struct {
	Opt   Options
	Dir   string
	Words int
}

func (f *initPartsFn) ProcessElement(ctx context.Context, _ int, seeds func(*sample) bool, thrs func(*threshold) bool, emit func(state)) error {
	var smp sample
	if !seeds(&smp) {
		return nil // no vocabulary to train
	}
	thr, err := readOne(thrs, "the threshold of the sample")
	if err != nil {
		return err
	}
	if len(smp.Prio) > thr.Count {
		return fmt.Errorf("vocabulary: a seeding sample of %d descriptors from a sample of %d", len(smp.Prio), thr.Count)
	}
	return initState(ctx, f.Opt, f.Dir, f.Words, smp, thr.Count, emit)
}

// partChunksFn reads a features part again and
// writes its descriptors of the sample, those of priority at most the
// threshold, to Dir in chunks of at most maxChunk, and emits their names;
// chunk j of part p has index p·2²⁰ + j. It emits the part's descriptors of
// the seeding sample, of priority at most the threshold's SeedPrio, as
// one sample.
type partChunksFn struct {
	Hash  uint64
	Loads int
	Dir   string
}

func (f *partChunksFn) ProcessElement(ctx context.Context, p formats.Part, thr threshold, emit func(chunk), emitSeed func(sample)) error {
	if thr.Count == 0 {
		return nil
	}
	release, err := slots.Acquire(ctx, "vocabulary.part", f.Loads)
	defer release()
	if err != nil {
		return fmt.Errorf("vocabulary: part %d: %w", p.Part, err)
	}
	const d = formats.DescriptorSize
	index := p.Part << 20
	buf := make([]byte, 0, maxChunk*d)
	var seed sample
	flush := func() error {
		c := chunk{Index: index, N: len(buf) / d}
		if err := writeDesc(ctx, f.Dir, c.Index, buf); err != nil {
			return err
		}
		emit(c)
		index++
		buf = buf[:0]
		return nil
	}
	err = fileio.ReadEach(ctx, p.Path, func(feat *formats.Features) error {
		if err := wholeKeypoints(feat); err != nil {
			return err
		}
		var err error
		priorities(f.Hash, *feat, func(prio uint64, desc []byte) {
			if prio > thr.Prio || err != nil {
				return
			}
			if prio <= thr.SeedPrio {
				seed.Prio = append(seed.Prio, prio)
				seed.Desc = append(seed.Desc, desc...)
			}
			buf = append(buf, desc...)
			if len(buf) == maxChunk*d {
				err = flush()
			}
		})
		return err
	})
	if err == nil && len(buf) > 0 {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("vocabulary: part %d: %w", p.Part, err)
	}
	if len(seed.Prio) > 0 {
		emitSeed(seed)
	}
	return nil
}

// wholeKeypoints reports an error unless every keypoint of feat has a
// descriptor of DescriptorSize bytes, as a features file holds them: the
// priorities of a sample drawn in parts are drawn for the keypoints of
// the rows' heads (partPriosFn), and the descriptors must be those.
func wholeKeypoints(feat *formats.Features) error {
	if len(feat.X) != len(feat.Descriptors) {
		return fmt.Errorf("image %s: %d keypoints and %d descriptors", feat.ImageID, len(feat.X), len(feat.Descriptors))
	}
	for i, d := range feat.Descriptors {
		if len(d) != formats.DescriptorSize {
			return fmt.Errorf("image %s: descriptor %d has %d bytes, want %d", feat.ImageID, i, len(d), formats.DescriptorSize)
		}
	}
	return nil
}

// ofParts trains the vocabulary of a sample drawn in parts (see above),
// when build (a single-element PCollection<bool>) is true, in which case
// the caller passes the parts, else none; start is as for fromSample.
func ofParts(s beam.Scope, parts beam.PCollection, opt Options, build, start beam.PCollection) beam.PCollection {
	if err := opt.Validate(); err != nil {
		return failing(s, err, build)
	}
	total := stats.Sum(s, beam.ParDo(s, keypointsFn, parts))
	n, m := opt.sample(), opt.seedSample()
	prioParts := beam.ParDo(s, &partPriosFn{Max: n, Hash: opt.Seed, Loads: opt.PartLoads}, onekeybeam.Pair(s, parts, total, "the descriptors' total"))
	thr := beam.Combine(s, &mergePriosFn{Max: n, Seed: m}, prioParts)
	dir := opt.scratchDir()
	chunks, seedParts := beam.ParDo2(s, &partChunksFn{Hash: opt.Seed, Loads: opt.PartLoads, Dir: dir}, onekeybeam.Pair(s, parts, thr, "the threshold of the sample"))
	seed := beam.ParDo(s, sampleIfFn, beam.Combine(s, &mergeSampleFn{Max: m}, seedParts), beam.SideInput{Input: build})
	st := beam.ParDo(s, &initPartsFn{Opt: opt, Dir: dir, Words: opt.initialWords()}, onekeybeam.Group(s, seed, thr))
	return train(s, st, beam.Reshuffle(s, chunks), opt, dir, start)
}
