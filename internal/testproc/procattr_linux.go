package testproc

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// procAttr has the kernel SIGKILL the process if the test binary dies
// (Linux's parent-death signal), so a crashed test leaves no process
// holding a port.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped blocks until process pid is stopped or has exited. WNOWAIT
// leaves both states to be reported again, so the exit status still goes
// to exec.Cmd.Wait.
func waitStopped(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
