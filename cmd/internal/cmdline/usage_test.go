package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestPrintUsage: the command's flags come in their groups, in order,
// before one line naming every other flag.
func TestPrintUsage(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("input", "", "the input")
	fs.Int("vocab", 1000, "words")
	fs.String("runner", "", "Beam's")
	fs.String("project", "", "Beam's")
	var b bytes.Buffer
	PrintUsage(&b, fs, "Usage: x", []Group{{Title: "Input", Flags: []string{"input"}}, {Title: "Vocabulary", Flags: []string{"vocab"}}})
	out := b.String()
	i, v, r := strings.Index(out, "--input"), strings.Index(out, "--vocab"), strings.Index(out, "Beam runner flags")
	if !(0 < i && i < v && v < r) || !strings.Contains(out, "(default 1000)") {
		t.Fatalf("usage out of order:\n%s", out)
	}
	if rest := out[r:]; !strings.Contains(rest, "--project --runner") || strings.Contains(rest, "--input") {
		t.Errorf("runner flags line: %q", rest)
	}
}

func TestRequire(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("input", "", "")
	fs.String("output", "o", "")
	err := Require(fs, "output", "input")
	if err == nil || err.Error() != "--input is required" || !errors.As(err, new(UsageError)) {
		t.Errorf("Require = %v, want a usage error for --input", err)
	}
}
