//go:build unix

package browsertest

import (
	"os/exec"
	"syscall"
)

// setGroup starts node in a process group of its own and has a cancelled
// context kill the whole group, so the Chromium that playwright started
// dies with it instead of outliving the test.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
