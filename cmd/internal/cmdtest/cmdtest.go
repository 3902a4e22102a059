// Package cmdtest builds a command for its own tests, which run it as a
// user would: flags, exit codes and what it prints.
package cmdtest

import (
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
