package testproc

import "syscall"

// procAttr has the kernel SIGKILL the process if the test binary dies
// (Linux's parent-death signal), so a crashed test leaves no process
// holding a port.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
