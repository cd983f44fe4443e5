//go:build !linux

package testproc

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// procAttr is empty: only Linux has a parent-death signal, so elsewhere a
// process outlives a test binary that is killed before its cleanup runs.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// isStopped reports whether process pid is stopped, from ps(1)'s state
// column ("T"); ok is false when ps cannot tell (it has exited).
func isStopped(pid int) (stopped, ok bool) {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return false, false
	}
	return strings.HasPrefix(strings.TrimSpace(string(out)), "T"), true
}
