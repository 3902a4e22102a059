// Package cmdtest builds a command for its own tests, which run it as a
// user would: flags, exit codes and what it prints.
package cmdtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main builds the command in the current directory (a package main) as
// name in a temporary directory, sets *binary to its path, runs the tests
// and exits with their code, removing the build. It is a TestMain's body.
func Main(m *testing.M, name string, binary *string) {
	dir, err := os.MkdirTemp("", name+"-cmd-")
	if err != nil {
		panic(err)
	}
	*binary = filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", *binary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// ShapesJob runs the job on the project's shapes into out — labels is the
// path of testdata/shapes/labels.csv as the run should record it — by go
// run of cmd/bowline from a sibling command's directory, so that the
// calling test binary stays free of Beam, at the settings the commands'
// tests share (200 words, SOLIS-ADA, seed 3) and the extra flags.
func ShapesJob(labels, out string, extra ...string) error {
	args := append([]string{"run", "../bowline", "--input", labels, "--output", out, "--vocab", "200", "--learners", "solis-ada", "--seed", "3"}, extra...)
	if b, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("the job: %v\n%s", err, b)
	}
	return nil
}

// Run runs binary with args and returns what it wrote to stdout and
// stderr and its exit status; a command that cannot be started fails t.
func Run(t testing.TB, binary string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return RunCmd(t, exec.Command(binary, args...))
}

// RunCmd runs cmd, set up by the caller (its directory, environment), as
// Run does; it sets cmd's Stdout and Stderr.
func RunCmd(t testing.TB, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}
