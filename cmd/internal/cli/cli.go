// Package cli is what the job's commands share of the command line: flags
// grouped by stage in --help, the learner list and hyper-parameters as the
// flags spell them, and errors a user can read — one "prog: cause" line,
// not the runner's plan dump.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bowline/bowline/transforms/report"
)

// Cause returns the message a user needs from err: for an error a Beam
// runner returns after a DoFn failed — the failed stage's plan, then a chain
// of "caused by:" sections, the last one naming the DoFn — the DoFn's own
// error, without the plan, the DoFn header or a goroutine dump; for any
// other error, its message. Surrounding white space is trimmed.
func Cause(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, "caused by:"); i >= 0 {
		msg = msg[i+len("caused by:"):]
		msg = strings.TrimSpace(msg)
		// "DoFn[UID:8, PID:e2, Name: …listFn] failed:\n<the DoFn's error>"
		if strings.HasPrefix(msg, "DoFn[") {
			if j := strings.Index(msg, "failed:"); j >= 0 {
				msg = msg[j+len("failed:"):]
			}
		}
	}
	if i := strings.Index(msg, "\ngoroutine "); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}

// Exit codes: 1 for a failed run, 2 for a command line the command cannot
// run with, as the flag package does.
const (
	ExitFailed = 1
	ExitUsage  = 2
)

// UsageError marks an error of the command line.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with the formatted message.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// Exit prints err to stderr as one line "prog: cause" (Cause), with the
// whole error first when verbose, and exits: with ExitUsage for a
// UsageError, ExitFailed otherwise.
func Exit(prog string, err error, verbose bool) {
	// The runner's goroutines may still be logging their shutdown: the
	// cause must be the last line.
	muted.Store(true)
	if verbose {
		fmt.Fprintf(os.Stderr, "%s: the whole error:\n%v\n", prog, err)
	}
	cause := Cause(err)
	// A cause that already names the command is not named twice.
	cause = strings.TrimPrefix(cause, prog+": ")
	fmt.Fprintf(os.Stderr, "%s: %s\n", prog, cause)
	if errors.As(err, new(UsageError)) {
		os.Exit(ExitUsage)
	}
	os.Exit(ExitFailed)
}

// QuietRunnerLogs replaces the default slog handler, which the Beam runner
// logs through, by one that drops the runner's records carrying a stage's
// execution plan: on a failure Prism logs the same plan and cause about ten
// times, kilobytes that bury the one line Exit prints. Every other record,
// the job's own progress and warnings included, is kept until Exit. It
// also notes the id of a job the runner logs as submitted (JobID).
func QuietRunnerLogs() {
	slog.SetDefault(slog.New(quietHandler{slog.Default().Handler()}))
}

type quietHandler struct{ slog.Handler }

// muted silences every record once Exit has started.
var muted atomic.Bool

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	noteSubmitted(r)
	if muted.Load() || planDump(r) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}

// planDump reports whether a log record holds a stage's execution plan.
func planDump(r slog.Record) bool {
	const mark = "while executing Process for Plan"
	found := strings.Contains(r.Message, mark)
	r.Attrs(func(a slog.Attr) bool {
		found = found || strings.Contains(a.Value.String(), mark)
		return !found
	})
	return found
}

// Group is a titled group of a command's own flags, for --help.
type Group struct {
	Title string
	Flags []string
}

// Settings returns the values of the command's own flags (those of
// groups) and, if set, of --runner: what a report needs to say how the run
// was made, without the Beam SDK's dozens of runner flags. Each keeps its
// flag's type (flag.Getter), so report.json holds numbers and booleans.
func Settings(fs *flag.FlagSet, groups []Group) report.Settings {
	out := report.Settings{}
	value := func(f *flag.Flag) any {
		if g, ok := f.Value.(flag.Getter); ok {
			return g.Get()
		}
		return f.Value.String()
	}
	for _, g := range groups {
		for _, name := range g.Flags {
			if f := fs.Lookup(name); f != nil {
				out[name] = report.Setting(value(f))
			}
		}
	}
	if f := fs.Lookup("runner"); f != nil && f.Value.String() != "" {
		out["runner"] = report.Setting(f.Value.String())
	}
	return out
}

// Usage returns a flag.FlagSet Usage function that prints synopsis, then
// the command's own flags group by group, then the names of every other
// flag of fs — those the Beam SDK registers — together.
func Usage(fs *flag.FlagSet, synopsis string, groups []Group) func() {
	return func() { PrintUsage(fs.Output(), fs, synopsis, groups) }
}

// UsageWidth is the widest line PrintUsage writes, so that --help reads
// in a terminal without wrapping and pastes into an issue whole.
const UsageWidth = 100

// PrintUsage writes what Usage's function prints to w, wrapped at
// UsageWidth.
func PrintUsage(w io.Writer, fs *flag.FlagSet, synopsis string, groups []Group) {
	fmt.Fprintln(w, strings.TrimSpace(synopsis))
	own := map[string]bool{}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.Title)
		for _, name := range g.Flags {
			f := fs.Lookup(name)
			if f == nil {
				panic(fmt.Sprintf("cli: group %q names flag %q, which is not defined", g.Title, name))
			}
			own[name] = true
			printFlag(w, f)
		}
	}
	var rest []string
	fs.VisitAll(func(f *flag.Flag) {
		if !own[f.Name] {
			rest = append(rest, "--"+f.Name)
		}
	})
	sort.Strings(rest)
	if len(rest) > 0 {
		fmt.Fprintf(w, "\nBeam runner flags (the Beam Go SDK's; --runner selects the runner, Prism in-process by default):\n")
		writeWrapped(w, "  ", strings.Join(rest, " "))
	}
}

// printFlag prints one flag as the flag package does, "--name" first, its
// usage below, indented.
func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if name != "" {
		line += " " + name
	}
	fmt.Fprintln(w, line)
	if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	for _, para := range strings.Split(usage, "\n") {
		writeWrapped(w, "      ", para)
	}
}

// writeWrapped writes text's words after indent, in lines of at most
// UsageWidth characters; a word longer than a line has one of its own.
func writeWrapped(w io.Writer, indent, text string) {
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > UsageWidth {
			fmt.Fprintln(w, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}

// Require returns a UsageError naming the first of the flags of fs that
// was left empty; wrapping it keeps it a UsageError.
func Require(fs *flag.FlagSet, names ...string) error {
	for _, n := range names {
		if f := fs.Lookup(n); f != nil && f.Value.String() == "" {
			return Usagef("--%s is required", n)
		}
	}
	return nil
}
