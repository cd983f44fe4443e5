package gateway

import "syscall"

// openFileLimit is the process's soft RLIMIT_NOFILE (which the Go
// runtime raises to the hard limit at start); 0 when it cannot be read
// or is unlimited.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == rlimInfinity {
		return 0
	}
	return r.Cur
}

// rlimInfinity is RLIM_INFINITY as Getrlimit reports it (syscall's
// constant is an untyped -1).
const rlimInfinity = ^uint64(0)
