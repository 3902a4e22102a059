// Command procboot is the command of Prism's PROCESS environment in
// runner_test.go and sharenothing_test.go: it starts Beam's Go boot program
// (sdks/go/container), which fetches the staged worker binary from the job
// server and runs it.
//
// It exists because Prism v2.77.0 starts the command with --id='<id>', the
// quotes part of the argument (no shell removes them): the boot program
// would register with the job server under an id it does not know. procboot
// strips the quotes, adds --semi_persist_dir (the boot program's default,
// /tmp, is shared by every run on the machine) and replaces itself with the
// boot program, so the worker's process tree is the boot program's own.
//
// With PROCBOOT_UNSHARE set it first starts the worker on a machine of its
// own, as far as files go: it replaces itself with util-linux's unshare
// (PROCBOOT_UNSHARE its options, e.g. "--mount --propagation private"),
// which runs procboot again in a new mount namespace. There procboot mounts
// a fresh tmpfs on /tmp holding only a copy of the boot program, mounts an
// empty read-only tmpfs over each of PROCBOOT_HIDE's directories (the
// checkout, the launcher's working and temporary directories) and moves to
// /tmp before starting the boot program: the worker sees the bucket, the
// job server's endpoints and its own disk, nothing the launcher or another
// worker wrote.
//
// Its settings come from the environment, which Prism passes to the command
// from the environment config's "env":
//
//	PROCBOOT_BOOT            the boot program (required)
//	PROCBOOT_SEMI_PERSIST    the boot program's --semi_persist_dir (optional;
//	                         under PROCBOOT_UNSHARE it is made on the new /tmp)
//	PROCBOOT_UNSHARE         unshare's options: start in a new mount namespace
//	PROCBOOT_STAGE           an empty directory outside PROCBOOT_HIDE's where
//	                         the new /tmp is mounted before it is moved over
//	                         /tmp (required with PROCBOOT_UNSHARE)
//	PROCBOOT_HIDE            directories hidden from the worker, separated by
//	                         the list separator (':')
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// isolated marks the procboot that unshare started in the new namespace.
const isolated = "PROCBOOT_ISOLATED"

func main() {
	boot := os.Getenv("PROCBOOT_BOOT")
	if boot == "" {
		fail(fmt.Errorf("PROCBOOT_BOOT names no boot program"))
	}
	if opts := os.Getenv("PROCBOOT_UNSHARE"); opts != "" && os.Getenv(isolated) == "" {
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			fail(fmt.Errorf("PROCBOOT_UNSHARE: %w (util-linux)", err))
		}
		self, err := os.Executable()
		if err != nil {
			fail(err)
		}
		args := append(append([]string{unshare}, strings.Fields(opts)...), "--", self)
		args = append(args, os.Args[1:]...)
		execve(args, append(os.Environ(), isolated+"=1"))
	}
	semi := os.Getenv("PROCBOOT_SEMI_PERSIST")
	if os.Getenv(isolated) != "" {
		var err error
		if boot, err = isolate(boot, os.Getenv("PROCBOOT_STAGE"), filepath.SplitList(os.Getenv("PROCBOOT_HIDE"))); err != nil {
			fail(err)
		}
		if semi != "" {
			semi = "/tmp/semi-persist"
			if err := os.Mkdir(semi, 0o755); err != nil {
				fail(err)
			}
		}
	}
	args := []string{boot}
	for _, a := range os.Args[1:] {
		if id, ok := strings.CutPrefix(a, "--id="); ok {
			a = "--id=" + strings.Trim(id, `'"`)
		}
		args = append(args, a)
	}
	if semi != "" {
		args = append(args, "--semi_persist_dir="+semi)
	}
	execve(args, os.Environ())
}

// isolate, in a mount namespace of this process's own, mounts a new tmpfs
// on /tmp holding a copy of the boot program, hides each directory of hide
// under an empty read-only tmpfs and moves to /tmp. It returns the boot
// program's copy. stage is the empty directory the new /tmp is made in
// before it is moved over /tmp.
func isolate(boot, stage string, hide []string) (string, error) {
	if stage == "" {
		return "", fmt.Errorf("PROCBOOT_STAGE names no directory for the new /tmp")
	}
	if err := syscall.Mount("tmpfs", stage, "tmpfs", 0, "mode=1777"); err != nil {
		return "", fmt.Errorf("mount tmpfs on %s: %w", stage, err)
	}
	if err := copyFile(boot, filepath.Join(stage, "boot")); err != nil {
		return "", err
	}
	if err := syscall.Mount(stage, "/tmp", "", syscall.MS_MOVE, ""); err != nil {
		return "", fmt.Errorf("move %s to /tmp: %w", stage, err)
	}
	for _, dir := range hide {
		// A directory under the old /tmp, or under one hidden before, is
		// hidden already.
		if dir = filepath.Clean(dir); dir == "/tmp" || strings.HasPrefix(dir, "/tmp/") {
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=4k"); err != nil {
			return "", fmt.Errorf("hide %s: %w", dir, err)
		}
	}
	// The working directory Prism gave stays reachable, mounts over it or
	// not, until the process leaves it.
	if err := os.Chdir("/tmp"); err != nil {
		return "", err
	}
	return "/tmp/boot", nil
}

// copyFile copies the program src to dst, executable.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// execve replaces procboot with args[0], logging the command line.
func execve(args, env []string) {
	fmt.Fprintf(os.Stderr, "procboot: pid %d: %s\n", os.Getpid(), strings.Join(args, " "))
	err := syscall.Exec(args[0], args, env)
	fail(fmt.Errorf("exec %s: %w", args[0], err))
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "procboot: %v\n", err)
	os.Exit(1)
}
