package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/bowline/bowline/formats"
)

// Settings are a run's job flags by flag name, each kept as the JSON of
// its typed value (a bool, a number or a string), so that a reader of
// report.json gets numbers as numbers. Raw JSON rather than any keeps a
// 64-bit seed exact through a JSON round trip.
type Settings map[string]json.RawMessage

// Text returns the named setting as the command line spelled it ("1000",
// "true", "a.csv"), and whether the run recorded it. It reads the
// settings of reports written before values were typed, when every value
// was a JSON string, alike.
func (s Settings) Text(name string) (string, bool) {
	raw, ok := s[name]
	if !ok {
		return "", false
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str, true
	}
	return string(raw), true
}

// Setting returns the JSON of v, a flag's value, for Settings: a
// fmt.Stringer that is not a plain bool, number or string is recorded as
// its text.
func Setting(v any) json.RawMessage {
	switch x := v.(type) {
	case bool, string, int, int64, uint, uint64, float64:
		js, err := json.Marshal(x)
		if err == nil {
			return js
		}
	case fmt.Stringer:
		v = x.String()
	}
	js, err := json.Marshal(fmt.Sprint(v))
	if err != nil {
		panic(fmt.Sprintf("report: setting %v: %v", v, err)) // a string always marshals
	}
	return js
}

// Rows are a report's methods. In JSON a baseline's row has no
// comparison fields (baseline, map_diff…, significant) rather than a
// difference of 0 from "", which would read as a measured tie; and rows
// of a report.json written before its keys were snake_case (Go field
// names: "MAP", "PrecisionAt10") read as well as current ones.
type Rows []formats.ReportRow

// row is formats.ReportRow with its JSON tags and without Rows' methods.
type row formats.ReportRow

// baselineRow hides the comparison fields of row: the shallower fields of
// the same JSON names win, and omitempty drops them.
type baselineRow struct {
	row
	Baseline    *struct{} `json:"baseline,omitempty"`
	MAPDiff     *struct{} `json:"map_diff,omitempty"`
	MAPDiffLow  *struct{} `json:"map_diff_low,omitempty"`
	MAPDiffHigh *struct{} `json:"map_diff_high,omitempty"`
	MAPDiffP    *struct{} `json:"map_diff_p,omitempty"`
	Significant *struct{} `json:"significant,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (rs Rows) MarshalJSON() ([]byte, error) {
	out := make([]any, len(rs))
	for i, m := range rs {
		if m.Baseline == "" {
			out[i] = baselineRow{row: row(m)}
		} else {
			out[i] = row(m)
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON implements json.Unmarshaler.
func (rs *Rows) UnmarshalJSON(js []byte) error {
	var rows []row
	if err := unmarshalRenamed(js, reflect.TypeFor[formats.ReportRow](), &rows); err != nil {
		return fmt.Errorf("methods: %w", err)
	}
	*rs = make(Rows, len(rows))
	for i, r := range rows {
		(*rs)[i] = formats.ReportRow(r)
	}
	return nil
}

// deadRows are DeadLetters.First, read from either naming as Rows are.
type deadRows []formats.DeadLetter

// UnmarshalJSON implements json.Unmarshaler.
func (ds *deadRows) UnmarshalJSON(js []byte) error {
	var d []formats.DeadLetter
	if err := unmarshalRenamed(js, reflect.TypeFor[formats.DeadLetter](), &d); err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	*ds = d
	return nil
}

// unmarshalRenamed decodes js, an array of objects of struct type t, into
// out, first renaming every key that is one of t's Go field names to the
// field's JSON name: report.json wrote those names before its fields had
// JSON tags, and encoding/json matches a key to a name only up to case
// ("MAP" is "map", but "PrecisionAt10" is not "precision_at_10").
func unmarshalRenamed(js []byte, t reflect.Type, out any) error {
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(js, &objs); err != nil {
		return err
	}
	names := map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, ok := f.Tag.Lookup("json"); ok {
			names[f.Name] = tagName(tag)
		}
	}
	for _, o := range objs {
		for k, v := range o {
			if n, ok := names[k]; ok && n != k {
				if _, dup := o[n]; !dup {
					o[n] = v
				}
				delete(o, k)
			}
		}
	}
	renamed, err := json.Marshal(objs)
	if err != nil {
		return err
	}
	return json.Unmarshal(renamed, out)
}

func tagName(tag string) string {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i]
		}
	}
	return tag
}

// signed formats x with a sign and 4 decimals, or as many more as it takes
// for a nonzero x not to print as a signed zero ("−0.0000" on a bound
// that excludes 0 contradicts the star beside it). Below roundoff, 1e-9,
// x is 0: two equal means summed in another order differ by ~1e-16, and
// "−4.4e-16" would report a difference where there is none.
func signed(x float64) string {
	if math.Abs(x) < roundoff {
		x = 0
	}
	for d := 4; d <= 8; d++ {
		s := strconv.FormatFloat(x, 'f', d, 64)
		if x == 0 || !allZero(s) {
			if x >= 0 {
				s = "+" + s
			}
			return s
		}
	}
	return fmt.Sprintf("%+.1e", x)
}

// roundoff is the smallest difference of metrics signed reports: metrics
// are means of at most millions of values in [0, 1], whose sums in
// different orders agree to far better than this.
const roundoff = 1e-9

// allZero reports whether the number s has no nonzero digit.
func allZero(s string) bool {
	for _, c := range s {
		if c >= '1' && c <= '9' {
			return false
		}
	}
	return true
}

// sparsity formats a share of zero weights as a percentage with one
// decimal, or as many more as it takes for a model with a nonzero
// weight not to print as 100.0% (38 postings left of a million words is
// 99.9962%, not all of them gone) and one with a zero weight not as
// 0.0%.
func sparsity(x float64) string {
	if x <= 0 || x >= 1 {
		return strconv.FormatFloat(100*x, 'f', 1, 64) + "%"
	}
	for d := 1; d < 12; d++ {
		s := strconv.FormatFloat(100*x, 'f', d, 64)
		if v, _ := strconv.ParseFloat(s, 64); v > 0 && v < 100 {
			return s + "%"
		}
	}
	return strconv.FormatFloat(100*x, 'g', -1, 64) + "%"
}

// pValue formats a bootstrap p-value given the smallest p the bootstrap
// can tell from 0 (Report.PResolution): below it, "< 0.002", since no
// resample on the other side of 0 bounds p, it does not make it 0.
func pValue(p, resolution float64) string {
	if p < resolution {
		return "< " + strconv.FormatFloat(resolution, 'g', -1, 64)
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}
