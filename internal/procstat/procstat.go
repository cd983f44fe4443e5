// Package procstat reads a process's CPU time from Linux's /proc, for the
// benchmarks that report CPU per request of the processes they start.
package procstat

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, 100 on every Linux the benchmarks run on.
const clockTicks = 100

// CPU returns the CPU time (user+system) process pid has used so far, from
// utime and stime in /proc/<pid>/stat.
func CPU(pid int) (time.Duration, error) {
	user, system, err := Times(pid)
	return user + system, err
}

// Times returns the user and the system (kernel) CPU time process pid has
// used so far: utime and stime in /proc/<pid>/stat.
func Times(pid int) (user, system time.Duration, err error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, 0, errors.New("procstat: bad /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, 0, errors.New("procstat: short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut) * time.Second / clockTicks, time.Duration(st) * time.Second / clockTicks, nil
}
