package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/describe"
	"github.com/bowline/bowline/transforms/evaluate"
	"github.com/bowline/bowline/transforms/ingest"
	"github.com/bowline/bowline/transforms/search"
	"github.com/bowline/bowline/transforms/setting"
	"github.com/bowline/bowline/transforms/triplets"
)

// HelpHint ends every error of the command line: the one line a mistake
// prints says where the flags are listed, instead of listing them.
const HelpHint = " (--help lists every flag)"

// Parse parses the command line args into fs and checks every flag's
// value (CheckFlags). --help (or -h) prints the usage to stdout, where a
// pager can read it, and exits 0; any other mistake is written to stderr
// in one line "prog: <cause> (--help lists every flag)" and exits with
// ExitUsage.
func Parse(prog string, fs *flag.FlagSet, args []string, synopsis string, groups []Group) {
	err := ParseArgs(fs, args, os.Stdout, synopsis, groups)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		os.Exit(ExitUsage)
	}
}

// ParseArgs is Parse without the exit: it returns flag.ErrHelp once the
// usage is written to help, and a UsageError ending in HelpHint for a flag
// that is not defined, cannot be parsed or fails its check. The flag
// package's own message and usage dump, written to fs's output, are
// silenced: the error says it all.
func ParseArgs(fs *flag.FlagSet, args []string, help io.Writer, synopsis string, groups []Group) error {
	fs.Init(fs.Name(), flag.ContinueOnError)
	out := fs.Output()
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(joinCounts(fs, args))
	fs.SetOutput(out)
	fs.Usage = Usage(fs, synopsis, groups)
	switch {
	case errors.Is(err, flag.ErrHelp):
		PrintUsage(help, fs, synopsis, groups)
		return flag.ErrHelp
	case err != nil:
		return UsageError{errors.New(parseCause(fs, err) + HelpHint)}
	}
	if err := CheckFlags(fs); err != nil {
		return UsageError{fmt.Errorf("%w%s", err, HelpHint)}
	}
	return nil
}

// The flag package's errors (Go 1.2x), as Parse rewrites them.
var (
	errUndefined = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	errValue     = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): (.*)$`)
	errNoValue   = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
)

// parseCause rewrites an error of fs.Parse in the words of --help, which
// spells flags with two dashes: "unknown flag --nope", "--vocab abc: want
// a whole number".
func parseCause(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := errUndefined.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("unknown flag --%s", m[1])
	}
	if m := errNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	if m := errValue.FindStringSubmatch(msg); m != nil {
		want := m[3]
		// The flag package's own types say only "parse error" or "value
		// out of range"; a type of a command's own says what it wants.
		if f := fs.Lookup(m[2]); f != nil && (want == "parse error" || want == "value out of range") {
			if w := wantOfType(f); w != "" {
				want = w
			}
		}
		return fmt.Sprintf("--%s %q: %s", m[2], m[1], want)
	}
	return msg
}

// wantOfType says what values a flag of f's type takes; "" for a type
// whose own error says it better.
func wantOfType(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return ""
	}
	switch g.Get().(type) {
	case bool:
		return "want true or false"
	case int, int64:
		return "want a whole number"
	case uint, uint64:
		return "want a whole number, 0 or more"
	case float64:
		return "want a number"
	case time.Duration:
		return "want a duration such as 500ms, 10s or 1m30s"
	}
	return ""
}

// check is a flag's rule: it says what is wrong with a value, or "".
// The value is the flag's (flag.Getter); fs holds the other flags, for a
// bound that relates two settings (--vocab_sample and --vocab).
type check func(v any, fs *flag.FlagSet) string

// A Rule is the rule of a flag that sets a field of an options type whose
// Validate holds the bound (Option).
type Rule = check

// Option returns the rule of a flag that sets the option name (a
// setting.Error's Name, "sift.MaxSide"): judge sets the value on valid
// options (their defaults, and the other flags of fs where the bound
// relates two settings) and returns their Validate's error. Only a
// refusal of that setting itself is the flag's reason ("must be 2 or more"):
// the bound is the options' own, checked in one place, and the command
// line only says it in its words.
func Option[V any](name string, judge func(v V, fs *flag.FlagSet) error) Rule {
	return func(v any, fs *flag.FlagSet) string {
		x, ok := v.(V)
		if !ok {
			panic(fmt.Sprintf("cmdline: the rule of %s takes a %T, not a %T", name, x, v))
		}
		var e *setting.Error
		if err := judge(x, fs); errors.As(err, &e) && e.Name() == name {
			return "must be " + e.Must
		}
		return ""
	}
}

// AddRules adds the rules of flags that CheckFlags checks, by flag name:
// those of options in packages cmdline does not import (the job's
// pipeline, retrain's, reindex's gate), added before the command line is
// parsed. A name means one thing in every command: a second rule for a
// name panics.
func AddRules(rules map[string]Rule) {
	for name, r := range rules {
		if rule(name) != nil {
			panic("cmdline: a second rule for --" + name)
		}
		added[name] = r
	}
}

// added are the rules of AddRules.
var added = map[string]check{}

// both takes the values both rules take.
func both(a, b check) check {
	return func(v any, fs *flag.FlagSet) string {
		if why := a(v, fs); why != "" {
			return why
		}
		return b(v, fs)
	}
}

// atLeast takes whole numbers from min.
func atLeast(min int64) check {
	return func(v any, _ *flag.FlagSet) string {
		if n, ok := whole(v); ok && n < min {
			return fmt.Sprintf("must be %d or more", min)
		}
		return ""
	}
}

// longerThan takes durations longer than d: longerThan(0) the positive
// ones, longerThan(-1) those of 0 or more.
func longerThan(d time.Duration) check {
	return func(v any, _ *flag.FlagSet) string {
		if x, ok := v.(time.Duration); ok && x <= d {
			if d < 0 {
				return "must be 0 or more"
			}
			return fmt.Sprintf("must be more than %v", d)
		}
		return ""
	}
}

// nonEmpty refuses "", which an option may read as its default: a flag
// given says what it wants.
func nonEmpty(v any, _ *flag.FlagSet) string {
	if s, _ := v.(string); strings.TrimSpace(s) == "" {
		return "must not be empty"
	}
	return ""
}

func whole(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// The rules of the flags that set the options of the pure stages, which
// query and serve share with the job.
var (
	maxSide      = describeRule("sift.MaxSide", func(o *describe.Options, v int) { o.SIFT.MaxSide = v })
	maxKeypoints = describeRule("sift.MaxKeypoints", func(o *describe.Options, v int) { o.SIFT.MaxKeypoints = v })
	siftDouble   = describeRule("sift.DoubleBelow", func(o *describe.Options, v any) { setDoubling(&o.SIFT, v) })
	maxPixels    = describeRule("describe.MaxPixels", func(o *describe.Options, v int64) { o.MaxPixels = v })
	partImages   = describeRule("describe.PartImages", func(o *describe.Options, v int) { o.PartImages = v })
	partLoads    = describeRule("describe.PartLoads", func(o *describe.Options, v int) { o.PartLoads = v })
	softWords    = Option("bow.SoftOptions.R", func(v int, _ *flag.FlagSet) error {
		return bow.SoftOptions{R: v}.Validate()
	})
	softSigma = Option("bow.SoftOptions.Sigma", func(v float64, _ *flag.FlagSet) error {
		return bow.SoftOptions{Sigma: v}.Validate()
	})
	termFrequency = both(nonEmpty, Option("bow.TF", func(v string, _ *flag.FlagSet) error {
		return bow.TF(v).Validate()
	}))
)

// describeRule is the rule of a flag of describe.Options (its SIFT's
// included): set sets it on the defaults.
func describeRule[V any](name string, set func(*describe.Options, V)) Rule {
	return Option(name, func(v V, _ *flag.FlagSet) error {
		o := describe.DefaultOptions()
		set(&o, v)
		return o.Validate()
	})
}

// evalRule is the rule of a flag of evaluate.Options: set sets it on the
// zero options. query's --rerank and --expand set search.Refine's fields
// of those names, whose bound (Refine.Validate) is the same: a flag name
// means one thing in every command, and the job's is the evaluation's.
func evalRule(field string, set func(*evaluate.Options, int)) Rule {
	return Option("evaluate."+field, func(v int, _ *flag.FlagSet) error {
		var o evaluate.Options
		set(&o, v)
		return o.Validate()
	})
}

// tripletRule is the rule of a flag of triplets.Options: set sets it on
// options that draw mined negatives and near positives, which use every
// setting.
func tripletRule[V any](field string, set func(*triplets.Options, V)) Rule {
	return Option("triplets."+field, func(v V, _ *flag.FlagSet) error {
		o := triplets.Options{PerQuery: 1, Negatives: triplets.Hard, Positives: triplets.Near, HardPool: 1, HardFraction: 1}
		set(&o, v)
		return o.Validate()
	})
}

// checks are the rules of the flags of every command that parses its
// command line here — the job's (cli.AddJobFlags), bowline's, retrain's,
// reindex's, query's and serve's own — by name: a flag of one name means
// one thing in every command. A command's flag that is not here takes any
// value its type parses (Unchecked says which, and why). Beam's runner
// flags are Beam's.
var checks = map[string]check{
	// Directories read or written.
	"output":     isDirectory,
	"root":       isDirectory,
	"run":        isDirectory,
	"previous":   isDirectory,
	"compare_to": isDirectory,
	"image_root": isDirectory,
	// Input and output.
	"label_column": Option("ingest.Columns.Label", func(v string, _ *flag.FlagSet) error {
		c := ingest.DefaultColumns()
		c.Label = v
		return c.Validate()
	}),
	"part_images": partImages,
	"part_loads":  partLoads,
	// Description.
	"max_side":      maxSide,
	"max_pixels":    maxPixels,
	"max_keypoints": maxKeypoints,
	"sift_double":   siftDouble,
	// Bags of words.
	"soft_words": softWords,
	"soft_sigma": softSigma,
	"tf":         termFrequency,
	// Triplets and learners.
	"triplets_per_query": tripletRule("PerQuery", func(o *triplets.Options, v int) { o.PerQuery = v }),
	"negatives":          both(nonEmpty, tripletRule("Negatives", func(o *triplets.Options, v string) { o.Negatives = v })),
	"positives":          both(nonEmpty, tripletRule("Positives", func(o *triplets.Options, v string) { o.Positives = v })),
	"hard_pool":          tripletRule("HardPool", func(o *triplets.Options, v int) { o.HardPool = v }),
	"hard_fraction":      tripletRule("HardFraction", func(o *triplets.Options, v float64) { o.HardFraction = v }),
	// Evaluation.
	"train_queries":      evalRule("TrainQueries", func(o *evaluate.Options, v int) { o.TrainQueries = v }),
	"eval_queries":       evalRule("MaxQueries", func(o *evaluate.Options, v int) { o.MaxQueries = v }),
	"eval_depth":         evalRule("Depth", func(o *evaluate.Options, v int) { o.Depth = v }),
	"eval_shard_queries": evalRule("ShardQueries", func(o *evaluate.Options, v int) { o.ShardQueries = v }),
	"rerank":             evalRule("Rerank", func(o *evaluate.Options, v int) { o.Rerank = v }),
	"expand":             evalRule("Expand", func(o *evaluate.Options, v int) { o.Expand = v }),
	// reindex's nights and quality gate.
	"serving_learner": nonEmpty,
	// query's searches.
	"k": atLeast(1),
	"near": Option("search.Refine.NearCopies", func(v int, _ *flag.FlagSet) error {
		return search.Refine{Rerank: 1, NearCopies: v}.Validate()
	}),
	// serve's limits.
	"max_body":           atLeast(1),
	"timeout":            longerThan(0),
	"max_inflight":       atLeast(1),
	"max_photo_inflight": atLeast(1),
	"queue_wait":         longerThan(-1),
	"memory_idle":        longerThan(-1),
	"max_k":              atLeast(1),
	"max_rerank":         atLeast(1),
	"max_expand":         atLeast(1),
	"max_near":           atLeast(1),
	"reload":             longerThan(-1),
	"drain":              longerThan(-1),
}

// Unchecked are the commands' flags that take any value their type
// parses, with the reason, so that a test can tell a flag left out of
// checks by mistake from one that needs no rule.
var Unchecked = map[string]string{
	"input":           "required (Require); its content is checked before the job starts (bowline.Preflight)",
	"learners":        "checked with the learners' parameters (cli.CheckLearning); serve's, against the run's learners once it is loaded",
	"learner_params":  "checked with the learners' parameters (cli.CheckLearning)",
	"sweep":           "checked with the learners' parameters (cli.CheckLearning)",
	"seed":            "any seed",
	"image":           "query's photo, read before the run is opened",
	"image_id":        "query's indexed image, looked up in the run",
	"learner":         "query's learner, looked up in the run",
	"default_learner": "serve's, checked against the run's learners once it is loaded",
	"addr":            "serve's listening address, refused by the listener if it cannot be used",
	"overwrite":       "a switch", "rebuild_vocab": "a switch", "verbose_errors": "a switch", "akm": "a switch",
	"tune": "a switch", "cosine": "a switch", "dct_scale": "a switch", "rootsift": "a switch", "global": "a switch", "incremental": "a switch",
	"no_geometry": "a switch",
}

// Ruled reports whether flags named name have a rule that CheckFlags
// checks.
func Ruled(name string) bool {
	return rule(name) != nil
}

func rule(name string) check {
	if c, ok := checks[name]; ok {
		return c
	}
	return added[name]
}

// CheckFlags checks the value of every flag of fs that has a rule and
// returns the first mistake in a line naming the flag: "--group_images 0:
// must be 1 or more".
func CheckFlags(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		c := rule(f.Name)
		g, isGetter := f.Value.(flag.Getter)
		if err != nil || c == nil || !isGetter {
			return
		}
		if why := c(g.Get(), fs); why != "" {
			err = fmt.Errorf("--%s %s: %s", f.Name, shown(f.Value.String()), why)
		}
	})
	return err
}

// shown quotes a value that would not read as one word.
func shown(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"'") {
		return strconv.Quote(v)
	}
	return v
}
