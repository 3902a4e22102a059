package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bowline/bowline/transforms/bow"
	"github.com/bowline/bowline/transforms/sift"
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
type check func(v any) string

// atLeast takes whole numbers from min.
func atLeast(min int64) check {
	return func(v any) string {
		if n, ok := whole(v); ok && n < min {
			return fmt.Sprintf("must be %d or more", min)
		}
		return ""
	}
}

// zeroOrAtLeast takes 0 (what off means) or whole numbers from min.
func zeroOrAtLeast(min int64, zero string) check {
	return func(v any) string {
		if n, ok := whole(v); ok && n != 0 && n < min {
			return fmt.Sprintf("must be 0 (%s) or %d or more", zero, min)
		}
		return ""
	}
}

// inRange takes the numbers of [lo, hi], or [lo, hi) when open.
func inRange(lo, hi float64, open bool) check {
	return func(v any) string {
		x, _ := v.(float64)
		if x >= lo && (x < hi || !open && x == hi) {
			return ""
		}
		if open {
			return fmt.Sprintf("must be in [%g, %g)", lo, hi)
		}
		return fmt.Sprintf("must be in [%g, %g]", lo, hi)
	}
}

// longerThan takes durations longer than d: longerThan(0) the positive
// ones, longerThan(-1) those of 0 or more.
func longerThan(d time.Duration) check {
	return func(v any) string {
		if x, ok := v.(time.Duration); ok && x <= d {
			if d < 0 {
				return "must be 0 or more"
			}
			return fmt.Sprintf("must be more than %v", d)
		}
		return ""
	}
}

// finiteFrom takes the finite numbers from lo.
func finiteFrom(lo float64) check {
	return func(v any) string {
		if x, _ := v.(float64); !(x >= lo) || math.IsInf(x, 1) {
			return fmt.Sprintf("must be a number, %g or more", lo)
		}
		return ""
	}
}

// validTF takes bow's term frequencies.
func validTF(v any) string {
	if s, _ := v.(string); s == "" || bow.TF(s).Validate() != nil {
		return fmt.Sprintf("must be %s, %s or %s", bow.TFRaw, bow.TFSqrt, bow.TFLog)
	}
	return ""
}

// oneOf takes the strings of values.
func oneOf(values []string) check {
	return func(v any) string {
		if s, _ := v.(string); !slices.Contains(values, s) {
			return "must be one of " + strings.Join(values, ", ")
		}
		return ""
	}
}

// nonEmpty refuses "".
func nonEmpty(v any) string {
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
	"label_column": nonEmpty,
	"part_images":  atLeast(1),
	"part_loads":   atLeast(0),
	"shards":       atLeast(1),
	// Description.
	"max_side":      zeroOrAtLeast(sift.MinImageSide, "never downscale"),
	"max_pixels":    atLeast(0),
	"max_keypoints": atLeast(0),
	// Vocabulary.
	"vocab":        atLeast(2),
	"vocab_sample": atLeast(2),
	"vocab_iter":   atLeast(1),
	"akm_checks":   atLeast(0),
	"vocab_chunks": atLeast(0),
	"max_drift":    finiteFrom(0),
	// Bags of words.
	"soft_words": atLeast(0),
	"soft_sigma": finiteFrom(0),
	"tf":         validTF,
	// Triplets and learners.
	"triplets_per_query": atLeast(1),
	"negatives":          oneOf(triplets.NegativeModes),
	"positives":          oneOf(triplets.PositiveModes),
	"hard_pool":          atLeast(1),
	"hard_fraction":      inRange(0, 1, false),
	"batch_images":       atLeast(2),
	"train_shards":       atLeast(1),
	"train_rounds":       atLeast(1),
	"group_images":       atLeast(1),
	"group_postings":     atLeast(0),
	"group_loads":        atLeast(0),
	"tune_fraction":      inRange(0, 1, true),
	"target_sparsity":    inRange(0, 1, true),
	// Evaluation.
	"query_fraction":     inRange(0, 1, true),
	"train_queries":      atLeast(0),
	"eval_queries":       atLeast(0),
	"eval_depth":         atLeast(0),
	"eval_shard_queries": atLeast(0),
	"rerank":             atLeast(0),
	"expand":             atLeast(0),
	// reindex's nights and quality gate.
	"keep":            atLeast(0),
	"serving_learner": nonEmpty,
	"max_map_drop":    finiteFrom(0),
	"max_dead_rate":   inRange(0, 1, false),
	"max_shrink":      inRange(0, 1, false),
	// query's searches.
	"k":    atLeast(1),
	"near": atLeast(0),
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
	"tune": "a switch", "cosine": "a switch", "sift_double": "a switch", "rootsift": "a switch", "global": "a switch", "incremental": "a switch",
	"no_geometry": "a switch",
}

// Ruled reports whether flags named name have a rule that CheckFlags
// checks.
func Ruled(name string) bool {
	_, ok := checks[name]
	return ok
}

// CheckFlags checks the value of every flag of fs that has a rule, and
// that --vocab_sample holds at least --vocab descriptors, and returns the
// first mistake in a line naming the flag: "--group_images 0: must be 1
// or more".
func CheckFlags(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		c, ok := checks[f.Name]
		g, isGetter := f.Value.(flag.Getter)
		if err != nil || !ok || !isGetter {
			return
		}
		if why := c(g.Get()); why != "" {
			err = fmt.Errorf("--%s %s: %s", f.Name, shown(f.Value.String()), why)
		}
	})
	if err != nil {
		return err
	}
	k, s := fs.Lookup("vocab"), fs.Lookup("vocab_sample")
	if k != nil && s != nil {
		kn, _ := strconv.Atoi(k.Value.String())
		sn, _ := strconv.Atoi(s.Value.String())
		if sn < kn {
			return fmt.Errorf("--vocab_sample %d is less than --vocab %d: k-means needs a sampled descriptor for every word", sn, kn)
		}
	}
	return nil
}

// shown quotes a value that would not read as one word.
func shown(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"'") {
		return strconv.Quote(v)
	}
	return v
}
