package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Lineage is the content of incremental.json, written by every run.
type Lineage struct {
	// Previous is the run this one started from ("" for a full run), and
	// FullReason why it did not start from the one it was given, if so.
	Previous   string `json:"previous,omitempty"`
	FullReason string `json:"full_reason,omitempty"`
	// Describe, Learning and BoW identify the settings of description,
	// of the split and triplets, and of quantisation: an incremental run
	// carries features only across equal Describe, word counts across
	// equal BoW (with the vocabulary kept), and warm-starts learners
	// across equal Learning.
	Describe Key `json:"describe"`
	Learning Key `json:"learning"`
	BoW      Key `json:"bow"`
	// Parts is the run's part count: the next run's is a multiple of it.
	Parts int `json:"parts"`
	// Images counts the images listed, described (decoded and described
	// in this run) and carried over from Previous.
	Images     LineageImages `json:"images"`
	Vocabulary VocabDecision `json:"vocabulary"`
	// WarmStarted names the learners that continued from Previous's
	// state; the others trained from scratch.
	WarmStarted []string `json:"warm_started"`
}

// LineageImages are the image counts of Lineage.
type LineageImages struct {
	Listed    int64 `json:"listed"`
	Described int64 `json:"described"`
	Carried   int64 `json:"carried"`
}

// VocabDecision says which vocabulary a run used, and why.
type VocabDecision struct {
	// Settings are kmeansbeam.Options.Settings of the vocabulary, as an
	// object (KeyValueKey).
	Settings Key `json:"settings"`
	// Kept reports that the run used Previous's vocabulary; Reason says
	// why it kept it or built a new one.
	Kept   bool   `json:"kept"`
	Reason string `json:"reason"`
	// Reference is the distortion — the mean squared distance of a
	// sample of descriptors (kmeans.DriftDescriptors) to their
	// nearest word — of the run that built the vocabulary in use, on its
	// own sample: measured when it is built, carried over while it is
	// kept, so that drift accumulated over many nights is seen.
	Reference float64 `json:"reference"`
	// Measured is the distortion of this run's sample against Previous's
	// vocabulary, and Drift its relative rise over Previous's Reference
	// (both zero when there was no vocabulary to keep).
	Measured float64 `json:"measured,omitempty"`
	Drift    float64 `json:"drift,omitempty"`
}

// Reuse is what a run may reuse of the run it starts from.
type Reuse struct {
	// Features: the features of unchanged images are carried over.
	// Vocabulary: the vocabulary may be kept (a candidate: the drift
	// check decides). Counts: the word counts of unchanged images are
	// carried over (with the vocabulary kept). WarmStart: the learners
	// continue from the states of the run.
	Features, Vocabulary, Counts, WarmStart bool
	// Why says why the rest may not be reused ("" if all may).
	Why string
}

// ReusedBy returns what a run whose settings are those of next (its
// Describe, Vocabulary.Settings, BoW and Learning keys) may reuse of the
// run of lineage l: features across equal Describe; then, unless
// rebuild, the vocabulary across equal vocabulary settings if l recorded
// its distortion, word counts across equal BoW and warm starts across
// equal Learning. Why names the vocabulary settings that changed. A
// setting l lacks is one its run predates and did not record: it does not
// count as a change, so that the first night after an upgrade keeps a
// vocabulary its drift check still accepts rather than rebuilding every
// run once.
func (l Lineage) ReusedBy(next Lineage, rebuild bool) Reuse {
	var r Reuse
	changed, added := l.Vocabulary.Settings.changes(next.Vocabulary.Settings)
	unrecorded := len(changed) > 0 && len(added) == len(changed)
	switch {
	case l.Describe != next.Describe:
		r.Why = fmt.Sprintf("the description settings changed (%s, now %s): every image is described again", l.Describe, next.Describe)
		return r
	case rebuild:
		r.Why = "--rebuild_vocab"
	case l.Vocabulary.Settings != next.Vocabulary.Settings && !unrecorded:
		if len(changed) == 0 {
			r.Why = fmt.Sprintf("the vocabulary settings changed (%s, now %s)", l.Vocabulary.Settings, next.Vocabulary.Settings)
		} else {
			r.Why = "the vocabulary settings changed: " + strings.Join(changed, "; ")
		}
	case l.Vocabulary.Reference <= 0:
		r.Why = "the previous run recorded no distortion of its vocabulary"
	default:
		r.Vocabulary = true
		r.Counts = l.BoW == next.BoW
		r.WarmStart = l.Learning == next.Learning
	}
	r.Features = true
	return r
}

// DecodeLineage reads incremental.json's content.
func DecodeLineage(js []byte) (Lineage, error) {
	var l Lineage
	if err := json.Unmarshal(js, &l); err != nil {
		return Lineage{}, err
	}
	return l, nil
}

// Encode returns the lineage as incremental.json holds it.
func (l Lineage) Encode() ([]byte, error) {
	js, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(js, '\n'), nil
}

// Key is a group of settings compared across runs, as it appears in
// incremental.json: a JSON object with snake_case keys (the Go field
// names of the options, "MaxSide" as "max_side"), held in a canonical
// form (keys sorted, no spaces), so that equal settings are equal strings.
// An incremental.json written before they were objects held each as a
// JSON string of the object with Go field names; it reads as the same
// Key, so that a run can still start from such a run.
type Key string

// MarshalJSON implements json.Marshaler.
func (s Key) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return []byte(s), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *Key) UnmarshalJSON(js []byte) error {
	var old string
	if json.Unmarshal(js, &old) == nil {
		if !json.Valid([]byte(old)) {
			// The vocabulary's settings as kmeansbeam spells them.
			c, err := KeyValueKey(old)
			*s = c
			return err
		}
		js = []byte(old)
	}
	c, err := CanonicalKey(js)
	if err != nil {
		return fmt.Errorf("settings %s: %w", js, err)
	}
	*s = c
	return nil
}

// changes compares k, the settings of an earlier run, with next's, both
// objects: changed describes each setting that differs, as "name old, now
// new" ("none" for a side that lacks it), sorted; added names next's
// settings that k lacks, sorted. A k whose every difference is an added
// setting was written before those settings were recorded: their values
// in its run are unknown.
func (k Key) changes(next Key) (changed, added []string) {
	var old, now map[string]json.RawMessage
	if json.Unmarshal([]byte(k), &old) != nil || json.Unmarshal([]byte(next), &now) != nil {
		return nil, nil
	}
	value := func(m map[string]json.RawMessage, name string) string {
		if v, ok := m[name]; ok {
			return string(v)
		}
		return "none"
	}
	names := slices.Collect(maps.Keys(old))
	for name := range now {
		if _, ok := old[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if o, n := value(old, name), value(now, name); o != n {
			changed = append(changed, fmt.Sprintf("%s %s, now %s", name, o, n))
			if _, ok := old[name]; !ok {
				added = append(added, name)
			}
		}
	}
	return changed, added
}

// CanonicalKey returns the Key of js, a JSON object: snake_case keys in
// canonical form.
func CanonicalKey(js []byte) (Key, error) {
	if len(js) == 0 || string(js) == "null" {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber() // a seed keeps its 64 bits
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	out, err := json.Marshal(snakeKeys(v))
	if err != nil {
		return "", err
	}
	return Key(out), nil
}

// snakeKeys renames the keys of every object in v to snake_case.
func snakeKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[snakeCase(k)] = snakeKeys(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = snakeKeys(x[i])
		}
	}
	return v
}

// snakeCase spells a Go field name in snake_case: "MaxSide" is
// "max_side", "RootSIFT" "root_sift", "SIFTOptions" "sift_options".
func snakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, c := range rs {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// KeyValueKey returns the Key of settings spelled "k=1000 approx=false …"
// (kmeansbeam.Options.Settings): each value a JSON number or boolean, or
// else a string.
func KeyValueKey(kv string) (Key, error) {
	obj := map[string]json.RawMessage{}
	for _, f := range strings.Fields(kv) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return "", fmt.Errorf("settings %q: %q is not name=value", kv, f)
		}
		if !json.Valid([]byte(v)) || strings.HasPrefix(v, "\"") {
			v = strconv.Quote(v)
		}
		obj[k] = json.RawMessage(v)
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return "", err
	}
	return CanonicalKey(js)
}
