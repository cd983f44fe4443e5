//go:build !linux

package testproc

import "syscall"

// procAttr is empty: only Linux has a parent-death signal, so elsewhere a
// process outlives a test binary that is killed before its cleanup runs.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
