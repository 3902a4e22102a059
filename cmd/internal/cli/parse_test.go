package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/pipelines/bowline"
)

// jobFlagSet is a flag set with the job's flags and a stand-in for Beam's.
func jobFlagSet() (*flag.FlagSet, *JobFlags, *bytes.Buffer) {
	fs := flag.NewFlagSet("bowline", flag.ExitOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	c := bowline.DefaultConfig()
	j := AddJobFlags(fs, &c)
	fs.String("runner", "", "Beam's")
	for _, n := range []string{"async", "dry_run", "staging_location", "temp_location", "worker_binary", "environment_config"} {
		fs.String(n, "", "Beam's")
	}
	return fs, j, &out
}

// TestParseArgsErrors: a flag that is not defined, or a value its type
// cannot parse, is one line naming the flag as --help spells it and
// saying where the flags are listed, a UsageError; the flag package's own
// message and its dump of every flag are not written.
func TestParseArgsErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "unknown flag --nope"},
		{[]string{"--vocab", "abc"}, `--vocab "abc": want a whole number`},
		{[]string{"--vocab=1.5"}, `--vocab "1.5": want a whole number`},
		{[]string{"--query_fraction", "x"}, `--query_fraction "x": want a number`},
		{[]string{"--global=maybe"}, `--global "maybe": want true or false`},
		{[]string{"--seed", "-1"}, `--seed "-1": want a whole number, 0 or more`},
		{[]string{"--input"}, "--input needs a value"},
	} {
		fs, _, out := jobFlagSet()
		var help bytes.Buffer
		err := cmdline.ParseArgs(fs, c.args, &help, "usage", JobGroups())
		if err == nil || err.Error() != c.want+cmdline.HelpHint || !errors.As(err, new(cmdline.UsageError)) {
			t.Errorf("%q: %v, want a cmdline.UsageError %q", c.args, err, c.want+cmdline.HelpHint)
		}
		if out.Len() > 0 || help.Len() > 0 {
			t.Errorf("%q: the flag package wrote %d bytes, the help %d", c.args, out.Len(), help.Len())
		}
	}
}

// TestParseArgsHelp: --help writes the usage to the writer given (the
// command's stdout), in lines of at most cmdline.UsageWidth characters, Beam's
// runner flags included, and returns flag.ErrHelp.
func TestParseArgsHelp(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		fs, _, out := jobFlagSet()
		var help bytes.Buffer
		if err := cmdline.ParseArgs(fs, []string{arg}, &help, "Usage: bowline", JobGroups()); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s: %v", arg, err)
		}
		if out.Len() > 0 || !strings.Contains(help.String(), "--triplets_per_query") || !strings.Contains(help.String(), "--worker_binary") {
			t.Fatalf("%s: %d bytes to the flag set's output; help:\n%s", arg, out.Len(), help.String())
		}
		for i, line := range strings.Split(help.String(), "\n") {
			if utf8.RuneCountInString(line) > cmdline.UsageWidth {
				t.Errorf("%s: line %d has %d characters: %q", arg, i+1, utf8.RuneCountInString(line), line)
			}
		}
	}
}

// badValues are values every job flag with a rule refuses: the edges
// just outside what it takes.
var badValues = map[string][]string{
	"label_column":       {"", " "},
	"part_images":        {"0", "-1"},
	"part_loads":         {"-1"},
	"memory_limit":       {"-1", "lots", "1TiB"},
	"vocab":              {"1", "0", "-5"},
	"vocab_sample":       {"1", "-1", "999"}, // 999: below --vocab's 1000
	"vocab_iter":         {"0", "-1"},
	"akm_checks":         {"-1"},
	"vocab_chunks":       {"-1"},
	"vocab_init":         {"", "kmeans", "KMeans++"},
	"soft_words":         {"-1"},
	"soft_sigma":         {"-1", "NaN", "+Inf"},
	"tf":                 {"", "cube", "Sqrt"},
	"max_keypoints":      {"-1"},
	"max_side":           {"-1", "15"},
	"max_pixels":         {"-1"},
	"sift_double":        {"-1", "16", "2", "yes", "512px", ""},
	"triplets_per_query": {"0", "-1"},
	"negatives":          {"", "Hard", "hardest"},
	"positives":          {"", "far"},
	"hard_pool":          {"0", "-1"},
	"hard_fraction":      {"-0.1", "1.5", "NaN"},
	"batch_images":       {"1", "-1"},
	"train_shards":       {"0", "-1"},
	"train_rounds":       {"0", "-1"},
	"group_images":       {"0", "-1"},
	"group_postings":     {"-1"},
	"group_loads":        {"-1"},
	"tune_fraction":      {"-0.1", "1", "NaN"},
	"target_sparsity":    {"-0.1", "1", "NaN"},
	"query_fraction":     {"-0.1", "1", "NaN"},
	"train_queries":      {"-1"},
	"eval_queries":       {"-1"},
	"eval_depth":         {"-1"},
	"eval_shard_queries": {"-1"},
	"rerank":             {"-1"},
	"expand":             {"-1"},
	"learners":           {"", "nope", "itq"},                                                     // itq: global features without --global
	"learner_params":     {"lambda", "solis-ada.lambda=-1", "itq.bits=8", "solis-ada.nonneg=0.5"}, // itq: not trained; nonneg: 0 or 1
	"sweep":              {"solis-ada", "solis-ada.nope=1,2", "solis-ada.lambda=1e-5,1e-5", "solis-ada.nonneg=0,2"},
}

// TestEveryJobFlagIsChecked: every flag of AddJobFlags either has a rule
// (and the table above refuses values outside it, in one line naming the
// flag, before the job starts: --group_images 0 ran 10 s and panicked) or
// is in cmdline.Unchecked, with the reason; values at the edge of each rule pass.
func TestEveryJobFlagIsChecked(t *testing.T) {
	fs, _, _ := jobFlagSet()
	fs.VisitAll(func(f *flag.Flag) {
		if _, beam := map[string]bool{"runner": true, "async": true, "dry_run": true, "staging_location": true, "temp_location": true,
			"worker_binary": true, "environment_config": true}[f.Name]; beam {
			return
		}
		ruled := cmdline.Ruled(f.Name)
		_, free := cmdline.Unchecked[f.Name]
		if _, tested := badValues[f.Name]; (ruled || !free) && !tested {
			t.Errorf("--%s: no bad values tested (has a rule: %v, in Unchecked: %v)", f.Name, ruled, free)
		}
	})
	for name, values := range badValues {
		for _, v := range values {
			fs, j, _ := jobFlagSet()
			err := cmdline.ParseArgs(fs, []string{"--" + name + "=" + v}, &bytes.Buffer{}, "usage", JobGroups())
			if err == nil {
				err = j.Apply()
			}
			if err == nil || !errors.As(err, new(cmdline.UsageError)) || !strings.HasPrefix(err.Error(), "--"+name+" ") && !strings.HasPrefix(err.Error(), "--"+name+":") ||
				strings.Contains(err.Error(), "\n") || !strings.HasSuffix(err.Error(), cmdline.HelpHint) {
				t.Errorf("--%s=%q: %v; want one line naming --%s", name, v, err, name)
			}
		}
	}
	good := [][]string{
		{"--max_side", "0"}, {"--max_side", "16"}, {"--sift_double", "17"}, {"--sift_double=false"}, {"--query_fraction", "0"}, {"--vocab", "2", "--vocab_sample", "2"},
		{"--group_loads", "0"}, {"--tune", "--target_sparsity", "0.95", "--tune_fraction", "0.5"}, {"--batch_images", "2"}, {"--negatives", "semihard", "--positives", "near", "--hard_pool", "1", "--hard_fraction", "1"}, {"--hard_fraction", "0"}, {"--soft_sigma", "0"}, {"--tf", "log"}, {"--vocab_init", "kmeans||"}, {"--vocab_init", "random"}, {"--learners", "all", "--global"},
		{"--learner_params", "solis-ada.lambda=0"}, {"--sweep", "solis-ada.lambda=1e-6,1e-5", "--learner_params", "solis-ada.eta=1", "--learners", "oasis-diag"},
		// Non-negative weights: a parameter of every diagonal learner, and a
		// sweep over it although no default sets it.
		{"--learner_params", "solis-ada.nonneg=1,solis-tg.nonneg=1,solis-da.nonneg=1,solis-afb.nonneg=1,oasis-diag.nonneg=1"},
		{"--sweep", "solis-ada.nonneg=0,1"}, {"--sweep", "solis-ada.lambda=1e-6,1e-5", "--learner_params", "solis-ada.nonneg=1"},
	}
	for _, args := range good {
		fs, j, _ := jobFlagSet()
		err := cmdline.ParseArgs(fs, append([]string{"--input", "x.csv"}, args...), &bytes.Buffer{}, "usage", JobGroups())
		if err == nil {
			err = j.Apply()
		}
		if err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}
