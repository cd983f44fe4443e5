//go:build !linux

package bench

import "syscall"

// procAttr puts a process in its own group; only Linux has a parent-death
// signal, so elsewhere it outlives a harness killed before its cleanup.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
