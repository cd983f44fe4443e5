package bench

import "syscall"

// procAttr puts a process in its own group and kills it with the harness.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
