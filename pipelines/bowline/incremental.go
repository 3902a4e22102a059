package bowline

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/bowline/bowline/formats"
	"github.com/bowline/bowline/formats/fileio"
	rundir "github.com/bowline/bowline/formats/run"
	"github.com/bowline/bowline/transforms/bow/bowbeam"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/describe/describebeam"
	"github.com/bowline/bowline/transforms/ingest/ingestbeam"
	"github.com/bowline/bowline/transforms/kmeans"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/sift"
	"github.com/bowline/bowline/transforms/synthetic"
	"github.com/bowline/bowline/transforms/train/trainbeam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*lineageFn)(nil)).Elem())
}

// vocabKey identifies the vocabulary's settings (kmeansbeam.Options.Settings).
func (c Config) vocabKey() rundir.Key {
	s, err := rundir.KeyValueKey(c.Vocab.Settings())
	if err != nil {
		panic(fmt.Sprintf("bowline: %v", err)) // kmeansbeam writes name=value pairs
	}
	return s
}

// settingsKey is the rundir.Key of v, a plain struct of options.
func settingsKey(v any) rundir.Key {
	js, err := json.Marshal(v)
	if err == nil {
		var s rundir.Key
		if s, err = rundir.CanonicalKey(js); err == nil {
			return s
		}
	}
	panic(fmt.Sprintf("bowline: settings %T: %v", v, err)) // plain structs of numbers and strings
}

// describeKey identifies the settings features depend on besides an
// image's content: not the part size, nor the synthetic corpus, whose
// settings are in each image's content identity (synthetic.Spec.Content).
func (c Config) describeKey() rundir.Key { return describeKeyOf(c.Describe) }

func describeKeyOf(d describe.Options) rundir.Key {
	d.PartImages, d.Synthetic = 0, synthetic.Spec{}
	if !d.DCTScale {
		// The version of transforms it does not use.
		d.DCTVersion = 0
	}
	return settingsKey(d)
}

// resized returns the description options a previous run described its
// images with, from its recorded settings s, when they differ from this
// run's only in how a photo is sized (MaxSide, the doubling, DCTScale and
// its DCTVersion; a run that recorded no dct_scale decoded at full size,
// one that recorded no dct_version through libjpeg's reduced IDCT) and are
// what its lineage's description key says; the images whose features the
// two make alike (describe.Options.SameFeatures) are then carried, the
// others described again.
func (c Config) resized(s *rundir.Settings, key rundir.Key) (describe.Options, bool) {
	if s == nil {
		return describe.Options{}, false
	}
	d := c.Describe
	d.SIFT, d.DCTScale, d.DCTVersion = sift.Options(s.SIFT), s.DCTScale, s.DCTVersion
	if !c.Describe.SIFT.Resized(d.SIFT) || describeKeyOf(d) != key {
		return describe.Options{}, false
	}
	return d, true
}

// resizedWhy says which sizing settings changed from prev to now and what
// a run carries over them.
func resizedWhy(prev, now describe.Options) string {
	var changed []string
	if prev.SIFT.MaxSide != now.SIFT.MaxSide {
		changed = append(changed, fmt.Sprintf("max_side %d, now %d", prev.SIFT.MaxSide, now.SIFT.MaxSide))
	}
	if a, b := prev.SIFT.Doubling(), now.SIFT.Doubling(); a != b {
		changed = append(changed, fmt.Sprintf("sift_double %v, now %v", a, b))
	}
	if prev.DCTScale != now.DCTScale {
		changed = append(changed, fmt.Sprintf("dct_scale %v, now %v", prev.DCTScale, now.DCTScale))
	}
	if prev.DCTVersion != now.DCTVersion && (prev.DCTScale || now.DCTScale) {
		changed = append(changed, fmt.Sprintf("dct_version %d, now %d", prev.DCTVersion, now.DCTVersion))
	}
	return fmt.Sprintf("the description settings changed only in how photos are sized (%s): photos both settings describe alike keep their features, the others are described again", strings.Join(changed, "; "))
}

func (c Config) learningKey() rundir.Key {
	return settingsKey(struct {
		Seed          uint64
		QueryFraction float64
		Triplets      any
	}{c.Learning.Eval.Seed, c.Learning.Eval.QueryFraction, c.Triplets})
}

// bowKey identifies the settings the counts files depend on: not TF,
// which weights the counts of every image afresh in each run.
func (c Config) bowKey() rundir.Key {
	o := c.BoW
	o.TF = ""
	return settingsKey(o)
}

// previous is what Build knows, before the job runs, of the run an
// incremental run starts from.
type previous struct {
	Dir     string
	Lineage rundir.Lineage
	// Parts is its part count; Features, Counts and Geometry the parts of
	// which it has files; States the learners of bags of words with a
	// state file.
	Parts                      int
	Features, Counts, Geometry []int
	States                     map[string]bool
	// CarryFeatures, KeepVocab (a candidate: the drift check decides),
	// CarryCounts and WarmStart say what may be reused; Why says why the
	// rest may not.
	CarryFeatures, KeepVocab, CarryCounts, WarmStart bool
	Why                                              string
	// Describe are the options its features were made with.
	Describe describe.Options
}

// loadPrevious reads the manifest and lineage of c.Previous and decides
// what the run may reuse of it. A previous run that cannot be used at all
// (none given) is nil; one that cannot be read is an error.
func loadPrevious(ctx context.Context, c Config) (*previous, error) {
	if c.Previous == "" {
		return nil, nil
	}
	m, err := fileio.RunDir(c.Previous).Manifest(ctx)
	if err != nil {
		return nil, fmt.Errorf("the previous run: %w", err)
	}
	p := &previous{Dir: c.Previous, States: map[string]bool{}}
	for _, f := range m.Files {
		name, part, parts, ok := rundir.Shard(f.Name)
		if !ok {
			continue
		}
		switch {
		case name == describebeam.Name:
			p.Features, p.Parts = append(p.Features, part), parts
		case name == bowbeam.CountsName:
			p.Counts = append(p.Counts, part)
		case name == bowbeam.GeometryName:
			p.Geometry = append(p.Geometry, part)
		case name == ingestbeam.Name:
			p.Parts = parts
		case len(name) > len("state-") && name[:len("state-")] == "state-":
			p.States[name[len("state-"):]] = true
		}
	}
	sort.Ints(p.Features)
	sort.Ints(p.Counts)
	sort.Ints(p.Geometry)
	l, err := fileio.RunDir(c.Previous).Lineage(ctx)
	switch {
	case err != nil:
		p.Why = fmt.Sprintf("the previous run has no readable %s (%v): it predates incremental runs", rundir.LineageName, err)
	case p.Parts < 1:
		p.Why = "the previous run lists no image parts"
	default:
		next := rundir.Lineage{Describe: c.describeKey(), BoW: c.bowKey(), Learning: c.learningKey(), Vocabulary: rundir.VocabDecision{Settings: c.vocabKey()}}
		p.Describe = c.Describe
		resized := ""
		if prev, ok := c.resized(m.Settings, l.Describe); ok && next.Describe != l.Describe {
			p.Describe, next.Describe = prev, l.Describe
			resized = resizedWhy(prev, c.Describe)
		}
		r := l.ReusedBy(next, c.RebuildVocab)
		p.CarryFeatures, p.KeepVocab, p.CarryCounts, p.WarmStart, p.Why = r.Features, r.Vocabulary, r.Counts, r.WarmStart, r.Why
		if resized != "" {
			p.Why = strings.TrimSuffix(resized+"; "+r.Why, "; ")
		}
		if r.Features {
			p.Lineage = l
		}
		// The learning key predates the label column: a learner trained on
		// one labelling is no warm start for another, and carried images
		// would leave it nothing to learn from.
		if s := m.Settings; p.WarmStart && s != nil && s.LabelColumn != "" && s.LabelColumn != c.Columns.Label {
			p.WarmStart = false
			p.Why = fmt.Sprintf("the label column changed (%s, now %s): the learners train afresh", s.LabelColumn, c.Columns.Label)
		}
	}
	if p.Why != "" {
		log.Infof(ctx, "bowline: starting from %s: %s", c.Previous, p.Why)
	}
	return p, nil
}

// describe returns what describebeam needs of p.
func (p *previous) describe() describebeam.Previous {
	if p == nil || !p.CarryFeatures {
		return describebeam.Previous{}
	}
	return describebeam.Previous{Dir: p.Dir, Parts: p.Parts, Features: p.Features, Describe: p.Describe}
}

// counts returns what bowbeam needs of p.
func (p *previous) counts() bowbeam.Previous {
	if p == nil || !p.CarryCounts {
		return bowbeam.Previous{}
	}
	return bowbeam.Previous{Dir: p.Dir, Parts: p.Parts, Counts: p.Counts, Geometry: p.Geometry}
}

// parts returns the previous part count ImagesFrom needs (0: none).
func (p *previous) parts() int {
	if p == nil || !p.CarryFeatures {
		return 0
	}
	return p.Parts
}

// vocabulary adds the vocabulary stage: Previous's vocabulary when p
// allows keeping it and its drift on this run's descriptor sample (drift,
// from kmeansbeam.DriftSample) passes c.MaxDrift (kmeansbeam.KeepOrBuild),
// a new one otherwise. It returns the codebook used, the codebook built,
// the decision and whether the vocabulary was kept (invalid when it
// cannot be, known before the job runs).
func vocabulary(s beam.Scope, c Config, p *previous, featParts, drift beam.PCollection) (codebook, built, decision, kept beam.PCollection) {
	if p == nil || !p.KeepVocab {
		reason := "a full run: no previous run"
		if p != nil {
			reason = "rebuilt: " + p.Why
		}
		built = kmeansbeam.VocabularyOfParts(s, featParts, c.Vocab)
		return built, built, kmeansbeam.Built(s, c.vocabKey(), reason), beam.PCollection{}
	}
	prev := kmeansbeam.Kept{Pattern: fileio.Join(p.Dir, rundir.TablePattern(kmeansbeam.CodebookName)), Settings: c.vocabKey(), Reference: p.Lineage.Vocabulary.Reference}
	return kmeansbeam.KeepOrBuild(s, featParts, drift, c.Vocab, prev, kmeans.Drift{Max: c.MaxDrift})
}

// warmStarts returns the warm starts of the learners of bags of words
// (PCollection<trainbeam.Warm>) from p's state files, read only if kept
// (the vocabulary is p's): invalid if none can be.
func warmStarts(s beam.Scope, c Config, p *previous, kept beam.PCollection) beam.PCollection {
	if p == nil || !p.WarmStart || !kept.IsValid() {
		return beam.PCollection{}
	}
	var files []trainbeam.WarmFile
	for i, r := range c.Learning.bowRuns(c.Vocab.K) {
		if p.States[r.Name] {
			files = append(files, trainbeam.WarmFile{Index: i, Pattern: fileio.Join(p.Dir, trainbeam.StateName(r.Name)+"-*.parquet"), Opt: r.Opt})
		}
	}
	if len(files) == 0 {
		return beam.PCollection{}
	}
	return trainbeam.ReadWarm(s, files, kept)
}

// writeLineage writes incremental.json once the decision, the reference
// distortion of a vocabulary built (PCollection<float64>, at most one),
// the image and features parts and the warm starts are known; it returns
// the path written (PCollection<string>).
func writeLineage(s beam.Scope, c Config, p *previous, decision, reference, imageParts, featParts, warm beam.PCollection) beam.PCollection {
	s = s.Scope("Lineage")
	l := rundir.Lineage{Describe: c.describeKey(), Learning: c.learningKey(), BoW: c.bowKey()}
	if p != nil {
		l.Previous = p.Dir
		if !p.CarryFeatures {
			l.FullReason = p.Why
		}
	}
	var names []string
	for _, r := range c.Learning.bowRuns(c.Vocab.K) {
		names = append(names, r.Name)
	}
	if !warm.IsValid() {
		warm = beam.CreateList(s, []trainbeam.Warm{})
	}
	return beam.ParDo(s, &lineageFn{Output: c.Output, Lineage: l, Names: names}, beam.Impulse(s),
		beam.SideInput{Input: decision}, beam.SideInput{Input: reference},
		beam.SideInput{Input: imageParts}, beam.SideInput{Input: featParts}, beam.SideInput{Input: warm})
}

type lineageFn struct {
	Output  string
	Lineage rundir.Lineage
	Names   []string
}

func (f *lineageFn) ProcessElement(ctx context.Context, _ []byte, decision rundir.VocabDecision, reference func(*float64) bool,
	imageParts, featParts func(*formats.Part) bool, warm func(*trainbeam.Warm) bool) (string, error) {
	l := f.Lineage
	l.Vocabulary = decision
	var ref float64
	for reference(&ref) {
		l.Vocabulary.Reference = ref
	}
	var p formats.Part
	for imageParts(&p) {
		l.Images.Listed += p.Rows
		l.Parts = p.Parts
	}
	for featParts(&p) {
		l.Images.Carried += int64(len(p.Carried))
		l.Images.Described += p.Rows - int64(len(p.Carried))
	}
	var w trainbeam.Warm
	for warm(&w) {
		if w.Index >= 0 && w.Index < len(f.Names) {
			l.WarmStarted = append(l.WarmStarted, f.Names[w.Index])
		}
	}
	sort.Strings(l.WarmStarted)
	js, err := l.Encode()
	if err != nil {
		return "", err
	}
	path := fileio.Join(f.Output, rundir.LineageName)
	if err := fileio.WriteBytes(ctx, path, js); err != nil {
		return "", err
	}
	log.Infof(ctx, "bowline: %d images, %d described, %d carried over from %q; vocabulary %s; warm-started: %v",
		l.Images.Listed, l.Images.Described, l.Images.Carried, l.Previous, l.Vocabulary.Reason, l.WarmStarted)
	return path, nil
}
