package supervisor

import "syscall"

// procAttr puts a child in its own process group and has the kernel
// SIGKILL it if the supervisor dies (Linux's parent-death signal), so no
// orphan keeps a port.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
