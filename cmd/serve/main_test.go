package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bowline/bowline/cmd/internal/cmdline"
	"github.com/bowline/bowline/cmd/internal/cmdtest"
)

// binary is the command, built once by TestMain.
var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "serve", &binary) }

// TestCommandLine: a mistake of the command line is refused before the run
// is read, exit 2, in one line naming the one flag, as the job's commands
// refuse theirs; --help is the usage on stdout, at most 100 characters a
// line, exit 0.
func TestCommandLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const hint = " (--help lists every flag)"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "serve: unknown flag --nope" + hint},
		{[]string{"--run", "r", "--max_photo_inflight", "0"}, "serve: --max_photo_inflight 0: must be 1 or more" + hint},
		{[]string{"--run", "r", "--max_inflight", "-1"}, "serve: --max_inflight -1: must be 1 or more" + hint},
		{[]string{"--run", "r", "--timeout", "0s"}, "serve: --timeout 0s: must be more than 0s" + hint},
		{[]string{"--run", "r", "--queue_wait", "-1s"}, "serve: --queue_wait -1s: must be 0 or more" + hint},
		{[]string{"--run", "r", "--drain", "-1s"}, "serve: --drain -1s: must be 0 or more" + hint},
		{[]string{"--run", "r", "--max_body", "0"}, "serve: --max_body 0: must be 1 or more" + hint},
		{[]string{"--run", "r", "--max_body", "lots"}, `serve: --max_body "lots": want a size in bytes, or with a unit such as 10MiB or 500KB` + hint},
		{[]string{"--run", "r", "--max_k", "0"}, "serve: --max_k 0: must be 1 or more" + hint},
		{[]string{"--run", "r", "--max_keypoints", "-1"}, "serve: --max_keypoints -1: must be 0 (no cap) or more" + hint},
		{[]string{"--run", "r", "--timeout", "soon"}, `serve: --timeout "soon": want a duration such as 500ms, 10s or 1m30s` + hint},
		{[]string{"--run", file}, "serve: --run " + file + ": is a file, not a directory" + hint},
		{[]string{"--run", "r", "extra"}, `serve: unexpected arguments ["extra"]: flags are written --name value` + hint},
		{nil, "serve: --run is required" + hint},
	} {
		stdout, stderr, code := cmdtest.Run(t, binary, c.args...)
		if code != 2 || stderr != c.want+"\n" || stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, stdout %q; want 2 and %q", c.args, code, stderr, stdout, c.want)
		}
	}
	help, stderr, code := cmdtest.Run(t, binary, "--help")
	if code != 0 || stderr != "" || !strings.Contains(help, "--max_photo_inflight") {
		t.Fatalf("--help: exit %d, stderr %q, stdout:\n%s", code, stderr, help)
	}
	for i, line := range strings.Split(help, "\n") {
		if n := utf8.RuneCountInString(line); n > cmdline.UsageWidth {
			t.Errorf("--help line %d has %d characters: %q", i+1, n, line)
		}
	}
}
