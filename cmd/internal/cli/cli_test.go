package cli

import (
	"errors"
	"flag"
	"reflect"
	"slices"
	"testing"

	// The learners register themselves by name.
	_ "github.com/bowline/bowline/transforms/train"

	"github.com/bowline/bowline/cmd/internal/cmdline"
)

// runnerError is what beamx.Run returned on Prism (Beam Go v2.77.0) when
// the listing DoFn failed, cut to its structure.
const runnerError = "job job-001 failed:\nbundle inst010 stage-051 failed:process bundle failed for instruction inst010 using plan stage-051 : while executing Process for Plan[stage-051]:\n" +
	"1: DataSource[S[stage-051_source@localhost:41231], i0] Out:8 Coder:W;cwv_n1<bytes;c2>!GWC \n" +
	"8: ParDo[ingestbeam.listFn] Out:[2 4 6] Sig: func(context.Context, []uint8, func(formats.Image), func(formats.DeadLetter), func(int)) error, SideInputs: []\n" +
	"2: DataSink[S[e2_i0@localhost:41231]] Coder:W;cwv_n2<LP;c7_lp<R[formats.Image]>>!GWC\n" +
	"\tcaused by:\nsource failed processing data\n\tcaused by:\n" +
	"DoFn[UID:8, PID:e2, Name: github.com/bowline/bowline/transforms/ingest/ingestbeam.listFn] failed:\n" +
	"ingest: fileio: read /nonexistent.csv: open /nonexistent.csv: no such file or directory"

func TestCause(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errors.New(runnerError), "ingest: fileio: read /nonexistent.csv: open /nonexistent.csv: no such file or directory"},
		{errors.New("plain: failure\n"), "plain: failure"},
		{errors.New("a\n\tcaused by:\nDoFn[UID:3] failed:\npanic: boom\ngoroutine 7 [running]:\nmain.f()"), "panic: boom"},
		{nil, ""},
	} {
		if got := Cause(c.err); got != c.want {
			t.Errorf("Cause(%.40q…) = %q, want %q", c.err, got, c.want)
		}
	}
}

func TestParseParams(t *testing.T) {
	got, err := ParseParams("solis-ada.lambda=1e-5, solis-ada.eta=10,oasis-diag.c=0.1,")
	want := map[string]map[string]float64{"solis-ada": {"lambda": 1e-5, "eta": 10}, "oasis-diag": {"c": 0.1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseParams = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"lambda=1", "solis-ada.lambda", "solis-ada.lambda=x", ".x=1"} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("ParseParams(%q) succeeded", bad)
		}
	}
}

func TestParseLearners(t *testing.T) {
	if got := ParseLearners(" solis-ada, oasis-diag,solis-ada,", false); !reflect.DeepEqual(got, []string{"solis-ada", "oasis-diag"}) {
		t.Errorf("ParseLearners = %v", got)
	}
	all := ParseLearners("all", true)
	for _, n := range all {
		if n == "omdml" || n == "euclidean" {
			t.Errorf("\"all\" includes %s", n)
		}
	}
	if len(all) <= len(ParseLearners("all", false)) {
		t.Error("\"all\" with global features adds no learner of global features")
	}
}

// Settings keeps the command's own flags and the runner, not Beam's others.
func TestSettings(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("input", "", "the input")
	fs.Int("vocab", 1000, "words")
	fs.String("runner", "", "Beam's")
	fs.String("project", "", "Beam's")
	groups := []cmdline.Group{{Title: "Input", Flags: []string{"input", "vocab"}}}
	if err := fs.Parse([]string{"--input", "a.csv", "--project", "p"}); err != nil {
		t.Fatal(err)
	}
	// Typed: the int flag is a JSON number, the string flag a JSON string.
	got := Settings(fs, groups)
	if len(got) != 2 || string(got["input"]) != `"a.csv"` || string(got["vocab"]) != `1000` {
		t.Errorf("Settings = %s", got)
	}
	_ = fs.Set("runner", "flink")
	if got := Settings(fs, groups); string(got["runner"]) != `"flink"` || len(got) != 3 {
		t.Errorf("Settings with a runner = %v", got)
	}
}

func TestParseSweep(t *testing.T) {
	w, err := ParseSweep(" solis-ada.lambda=1e-7, 1e-6,1e-5 ")
	if err != nil || w.Learner != "solis-ada" || w.Param != "lambda" || !slices.Equal(w.Values, []float64{1e-7, 1e-6, 1e-5}) {
		t.Errorf("ParseSweep = %+v, %v", w, err)
	}
	if w, err := ParseSweep(""); err != nil || len(w.Values) != 0 {
		t.Errorf("ParseSweep(\"\") = %+v, %v; want no sweep", w, err)
	}
	for _, bad := range []string{"solis-ada=1", "lambda=1", "solis-ada.lambda=", "solis-ada.lambda=1,x"} {
		if _, err := ParseSweep(bad); err == nil {
			t.Errorf("ParseSweep(%q): no error", bad)
		}
	}
}
