// Package cmdline is what every command shares of its command line, and
// what query and serve, which do not link Beam, share with the job's
// commands: flags grouped in --help, written to stdout at UsageWidth
// columns; a mistake in one line "prog: <cause> (--help lists every flag)",
// exit status 2; and the rules of the flags' values, each checked here
// once for every command that has the flag.
package cmdline

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

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

// Group is a titled group of a command's own flags, for --help.
type Group struct {
	Title string
	Flags []string
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

// printFlag prints one flag as the flag package does, "--name" first (a
// count's that may stand alone as "--name [N]"), its usage below, indented.
func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	line := "  --" + f.Name
	if _, ok := f.Value.(countOrSwitch); ok {
		// A count that may stand alone: --name, --name N or --name=N.
		line += " [" + cmp.Or(name, "N") + "]"
	} else if name != "" {
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
