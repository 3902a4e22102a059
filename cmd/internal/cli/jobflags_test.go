package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"runtime/debug"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/util/hooks"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/cmd/internal/memlimit"
	"github.com/bowline/bowline/pipelines/bowline"
	"github.com/bowline/bowline/transforms/kmeans/kmeansbeam"
	"github.com/bowline/bowline/transforms/report"
)

func TestJobFlags(t *testing.T) {
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	c := bowline.DefaultConfig()
	j := AddJobFlags(fs, &c)
	err := fs.Parse([]string{"--input", "x.csv", "--vocab", "200", "--learners", "solis-ada,oasis-diag", "--seed", "7",
		"--learner_params", "solis-ada.lambda=1e-5", "--sweep", "solis-ada.lambda=1e-6,1e-5", "--query_fraction", "0.3", "--part_loads", "3"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Apply(); err != nil {
		t.Fatal(err)
	}
	if c.Input != "x.csv" || c.Vocab.K != 200 || c.Learning.Eval.QueryFraction != 0.3 {
		t.Errorf("config %+v", c)
	}
	if !slices.Equal(c.Learning.Learners, []string{"solis-ada", "oasis-diag"}) {
		t.Errorf("learners %v", c.Learning.Learners)
	}
	if c.Vocab.Seed != 7 || c.Triplets.Seed != 7 || c.Learning.Eval.Seed != 7 {
		t.Errorf("seeds %d %d %d, want 7", c.Vocab.Seed, c.Triplets.Seed, c.Learning.Eval.Seed)
	}
	// --part_loads bounds every stage that holds a part or a chunk.
	if c.Describe.PartLoads != 3 || c.Vocab.PartLoads != 3 || c.BoW.PartLoads != 3 || c.Learning.PartLoads != 3 {
		t.Errorf("part loads: describe %d, vocabulary %d, quantise %d, index and evaluate %d, want 3", c.Describe.PartLoads, c.Vocab.PartLoads, c.BoW.PartLoads, c.Learning.PartLoads)
	}
	if c.Learning.Params["solis-ada"]["lambda"] != 1e-5 || len(c.Learning.Sweep.Values) != 2 {
		t.Errorf("params %v, sweep %+v", c.Learning.Params, c.Learning.Sweep)
	}

	// Without flags, the configuration keeps its defaults.
	fs = flag.NewFlagSet("job", flag.ContinueOnError)
	d := bowline.DefaultConfig()
	j = AddJobFlags(fs, &d)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := j.Apply(); err != nil {
		t.Fatal(err)
	}
	def := bowline.DefaultConfig()
	def.Vocab.Sample = kmeansbeam.DefaultSample(def.Vocab.K) // made explicit, see TestJobFlagsSample
	if d.Vocab != def.Vocab || !slices.Equal(d.Learning.Learners, def.Learning.Learners) || d.Triplets != def.Triplets {
		t.Errorf("defaults changed: %+v, want %+v", d, def)
	}

	fs = flag.NewFlagSet("job", flag.ContinueOnError)
	j = AddJobFlags(fs, &d)
	if err := fs.Parse([]string{"--learner_params", "lambda"}); err != nil {
		t.Fatal(err)
	}
	if err := j.Apply(); !errors.As(err, new(cmdline.UsageError)) {
		t.Errorf("bad --learner_params: %v, want a UsageError", err)
	}
}

// The vocabulary's sample follows --vocab unless --vocab_sample is given,
// and the settings a report records say which sample the run drew.
func TestJobFlagsSample(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 200_000},
		{[]string{"--vocab", "10000"}, 500_000},
		{[]string{"--vocab", "100000"}, 5_000_000},
		{[]string{"--vocab", "1000000"}, 20_000_000},
		{[]string{"--vocab", "100000", "--vocab_sample", "200000"}, 200_000},
	} {
		fs := flag.NewFlagSet("job", flag.ContinueOnError)
		c := bowline.DefaultConfig()
		j := AddJobFlags(fs, &c)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if err := j.Apply(); err != nil {
			t.Fatal(err)
		}
		recorded := string(Settings(fs, JobGroups())["vocab_sample"])
		if c.Vocab.Sample != tc.want || recorded != strconv.Itoa(tc.want) {
			t.Errorf("%v: sample %d, recorded %s, want %d", tc.args, c.Vocab.Sample, recorded, tc.want)
		}
	}
}

// TestJobGroupsNameEveryJobFlag: --help shows every job flag, in one
// group.
func TestJobGroupsNameEveryJobFlag(t *testing.T) {
	fs := flag.NewFlagSet("job", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c := bowline.DefaultConfig()
	AddJobFlags(fs, &c)
	seen := map[string]int{}
	for _, g := range JobGroups() {
		for _, f := range g.Flags {
			seen[f]++
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if seen[f.Name] != 1 {
			t.Errorf("flag --%s is in %d groups", f.Name, seen[f.Name])
		}
		delete(seen, f.Name)
	})
	if len(seen) > 0 {
		t.Errorf("groups name flags AddJobFlags does not define: %v", seen)
	}
	var b bytes.Buffer
	cmdline.PrintUsage(&b, fs, "usage", JobGroups()) // panics on a group naming an undefined flag
	if !bytes.Contains(b.Bytes(), []byte("--triplets_per_query")) {
		t.Errorf("usage:\n%s", b.String())
	}
}

// --sift_double takes the switch's values it had (alone and true: every
// image; false: none) and a bound N: the images whose longer side, after
// --max_side, is below N pixels, the default 512. The report records it
// as a boolean or the bound.
func TestSIFTDoubleFlag(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		double bool
		below  int
		report any
	}{
		{nil, true, 512, 512},
		{[]string{"--sift_double"}, true, 0, true},
		{[]string{"--sift_double", "--vocab", "5"}, true, 0, true},
		{[]string{"--sift_double=true"}, true, 0, true},
		{[]string{"--sift_double=false"}, false, 0, false},
		{[]string{"--sift_double=0"}, false, 0, false},
		{[]string{"--sift_double", "300"}, true, 300, 300},
		{[]string{"--sift_double=1025"}, true, 1025, 1025},
	} {
		fs := flag.NewFlagSet("job", flag.ContinueOnError)
		c := bowline.DefaultConfig()
		AddJobFlags(fs, &c)
		if err := cmdline.ParseArgs(fs, append([]string{"--input", "x.csv"}, tc.args...), io.Discard, "usage", JobGroups()); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if s := c.Describe.SIFT; s.DoubleImage != tc.double || s.DoubleBelow != tc.below || len(fs.Args()) != 0 {
			t.Errorf("%q: double %v below %d, arguments %q; want %v %d, none", tc.args, s.DoubleImage, s.DoubleBelow, fs.Args(), tc.double, tc.below)
		}
		if got, want := Settings(fs, JobGroups())["sift_double"], report.Setting(tc.report); !bytes.Equal(got, want) {
			t.Errorf("%q: the report records %s, want %s", tc.args, got, want)
		}
	}
}

// --dct_scale is on by default; --global, whose features read colour at
// full size, turns the default off, and the report records what the job
// ran with; both given are refused by the job's settings.
func TestDCTScaleFlag(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		dct, refuse bool
	}{
		{nil, true, false},
		{[]string{"--dct_scale=false"}, false, false},
		{[]string{"--global"}, false, false},
		{[]string{"--global", "--dct_scale=false"}, false, false},
		{[]string{"--global", "--dct_scale"}, true, true},
	} {
		fs := flag.NewFlagSet("job", flag.ContinueOnError)
		c := bowline.DefaultConfig()
		j := AddJobFlags(fs, &c)
		if err := cmdline.ParseArgs(fs, append([]string{"--input", "x.csv", "--learners", "solis-ada"}, tc.args...), io.Discard, "usage", JobGroups()); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if err := j.Apply(); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got, want := Settings(fs, JobGroups())["dct_scale"], report.Setting(tc.dct); c.Describe.DCTScale != tc.dct || !bytes.Equal(got, want) {
			t.Errorf("%q: DCTScale %v, the report records %s; want %v", tc.args, c.Describe.DCTScale, got, tc.dct)
		}
		c.Output = t.TempDir()
		if err := c.Validate(); (err != nil) != tc.refuse {
			t.Errorf("%q: %v; want refused %v", tc.args, err, tc.refuse)
		}
	}
}

// The job sets its process's soft memory limit: --memory_limit's default
// unless GOMEMLIMIT is set, the flag's value when given, none with 0; and
// has every worker process of its pipelines set the same (the worker hook
// enabled with it).
func TestMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer hooks.DisableHook(memlimit.Hook)
	for _, tc := range []struct {
		args []string
		env  string
		want int64
		took int64 // what the runtime took from GOMEMLIMIT, or none (0: 12345)
	}{
		{nil, "", DefaultMemoryLimit, 0},
		{[]string{"--memory_limit", "2GiB"}, "", 2 << 30, 0},
		{[]string{"--memory_limit", "2500MB"}, "1GiB", 2500e6, 0},
		{nil, "1GiB", 12345, 0},
		{[]string{"--memory_limit", "0"}, "", 12345, 0},
		// A limit the runtime takes, past what the flag's units parse.
		{nil, "5000000000000000000", 5e18, 5e18},
	} {
		t.Setenv("GOMEMLIMIT", tc.env)
		if tc.took == 0 {
			tc.took = 12345
		}
		debug.SetMemoryLimit(tc.took)
		fs := flag.NewFlagSet("job", flag.ContinueOnError)
		c := bowline.DefaultConfig()
		j := AddJobFlags(fs, &c)
		if err := fs.Parse(append([]string{"--input", "x.csv"}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		if err := j.Apply(); err != nil {
			t.Fatal(err)
		}
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("%q with GOMEMLIMIT=%q: memory limit %d, want %d", tc.args, tc.env, got, tc.want)
		}
		// The run records the limit in force, not the flag's default.
		if got := fs.Lookup("memory_limit").Value.String(); got != strconv.FormatInt(tc.want, 10) {
			t.Errorf("%q with GOMEMLIMIT=%q: --memory_limit recorded as %s, want %d", tc.args, tc.env, got, tc.want)
		}
		if on, args := hooks.IsEnabled(memlimit.Hook); !on || !slices.Equal(args, []string{strconv.FormatInt(tc.want, 10)}) {
			t.Errorf("%q with GOMEMLIMIT=%q: the workers' hook enabled %v with %q, want %d", tc.args, tc.env, on, args, tc.want)
		}
	}
}
