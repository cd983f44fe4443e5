package testproc

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
)

// procAttr has the kernel SIGKILL the process if the test binary dies
// (Linux's parent-death signal), so a crashed test leaves no process
// holding a port.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// isStopped reports whether process pid is stopped, from the state in
// /proc/<pid>/stat; ok is false when that cannot be read (it has exited).
func isStopped(pid int) (stopped, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false, false
	}
	// The state follows the parenthesised command name: "pid (comm) T ...".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false, false
	}
	return b[i+2] == 'T' || b[i+2] == 't', true
}
