// Package cpushare divides a host's cores among the processes of a local
// cluster, as a node divides its cores among containers with CPU limits.
//
// Every Go process sizes its scheduler to the cores it may use
// (GOMAXPROCS, which since Go 1.25 follows a container's CPU limit). Many
// processes on one host that each assume all its cores keep idle threads
// spinning for work that another process is doing: on two cores a second
// order replica cost 450 to 600 µs more CPU per order in the service
// processes (docs/postgres.md), so it made the cluster slower, not
// faster. A local cluster therefore gives each child GOMAXPROCS = its
// share of the supervisor's own cores, at least 1, unless the environment
// already sets GOMAXPROCS.
package cpushare

import (
	"runtime"
	"strconv"
	"strings"
)

// Key is the environment variable the Go runtime reads.
const Key = "GOMAXPROCS"

// Share is each of procs processes' share of cpus cores: cpus/procs,
// rounded down, at least 1 (and cpus when procs is below 1).
func Share(cpus, procs int) int {
	if procs < 1 {
		procs = 1
	}
	return max(1, cpus/procs)
}

// Var returns the KEY=value that gives each of procs processes its share
// of this process's cores (runtime.GOMAXPROCS, so CPU affinity and a
// container's limit count), and false when environ already sets
// GOMAXPROCS to a positive number: a person's explicit choice wins. An
// empty or invalid GOMAXPROCS, which the runtime ignores, does not count
// (the value returned, added after it, is the one a child sees: os/exec
// keeps the last of duplicate keys).
func Var(environ []string, procs int) (string, bool) {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, Key+"="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return "", false
			}
		}
	}
	return Key + "=" + strconv.Itoa(Share(runtime.GOMAXPROCS(0), procs)), true
}
