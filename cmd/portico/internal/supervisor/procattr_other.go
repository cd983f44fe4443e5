//go:build !linux

package supervisor

import "syscall"

// procAttr puts a child in its own process group. Only Linux has a
// parent-death signal: elsewhere a child outlives a supervisor that is
// killed with SIGKILL (a clean stop still stops every child).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
