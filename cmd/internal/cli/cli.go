// Package cli is what the job's commands share of the command line beyond
// package cmdline: the job's flags grouped by stage in --help, the learner
// list and hyper-parameters as the flags spell them, the runner the flags
// name, and errors a user can read — one "prog: cause" line, not the
// runner's plan dump.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/bowline/bowline/cmd/internal/cmdline"
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

// Exit prints err to stderr as one line "prog: cause" (Cause), with the
// whole error first when verbose, and exits: with cmdline.ExitUsage for a
// cmdline.UsageError, cmdline.ExitFailed otherwise.
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
	if errors.As(err, new(cmdline.UsageError)) {
		os.Exit(cmdline.ExitUsage)
	}
	os.Exit(cmdline.ExitFailed)
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

// Settings returns the values of the command's own flags (those of
// groups) and, if set, of --runner: what a report needs to say how the run
// was made, without the Beam SDK's dozens of runner flags. Each keeps its
// flag's type (flag.Getter), so report.json holds numbers and booleans.
func Settings(fs *flag.FlagSet, groups []cmdline.Group) report.Settings {
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
