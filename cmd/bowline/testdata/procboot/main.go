// Command procboot is the command of Prism's PROCESS environment in
// runner_test.go: it starts Beam's Go boot program (sdks/go/container), which
// fetches the staged worker binary from the job server and runs it.
//
// It exists because Prism v2.77.0 starts the command with --id='<id>', the
// quotes part of the argument (no shell removes them): the boot program
// would register with the job server under an id it does not know. procboot
// strips the quotes, adds --semi_persist_dir (the boot program's default,
// /tmp, is shared by every run on the machine) and replaces itself with the
// boot program, so the worker's process tree is the boot program's own.
//
// Its settings come from the environment, which Prism passes to the command
// from the environment config's "env":
//
//	PROCBOOT_BOOT            the boot program (required)
//	PROCBOOT_SEMI_PERSIST    the boot program's --semi_persist_dir (optional)
package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

func main() {
	boot := os.Getenv("PROCBOOT_BOOT")
	if boot == "" {
		fmt.Fprintln(os.Stderr, "procboot: PROCBOOT_BOOT names no boot program")
		os.Exit(2)
	}
	args := []string{boot}
	for _, a := range os.Args[1:] {
		if id, ok := strings.CutPrefix(a, "--id="); ok {
			a = "--id=" + strings.Trim(id, `'"`)
		}
		args = append(args, a)
	}
	if dir := os.Getenv("PROCBOOT_SEMI_PERSIST"); dir != "" {
		args = append(args, "--semi_persist_dir="+dir)
	}
	fmt.Fprintf(os.Stderr, "procboot: pid %d: %s\n", os.Getpid(), strings.Join(args, " "))
	err := syscall.Exec(boot, args, os.Environ())
	fmt.Fprintf(os.Stderr, "procboot: exec %s: %v\n", boot, err)
	os.Exit(1)
}
