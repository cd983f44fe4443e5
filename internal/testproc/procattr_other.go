//go:build !linux

package testproc

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procAttr is empty: only Linux has a parent-death signal, so elsewhere a
// process outlives a test binary that is killed before its cleanup runs.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// waitStopped returns once process pid is stopped or ps cannot find it
// (it has exited). No portable call reports a stop without reaping, so it
// polls ps(1)'s state column ("T").
func waitStopped(pid int) {
	for {
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		if err != nil || strings.HasPrefix(strings.TrimSpace(string(out)), "T") {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
