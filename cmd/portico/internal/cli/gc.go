package cli

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// edgeGCPercent is every process's GOGC (the gateway and the three
// services) when the environment sets none. Nearly everything they
// allocate dies with its request or call and their live heaps are a few
// MB, so at Go's default of 100 they collect every few hundred requests: BenchmarkGetItemShape (loaded machine) spent 408 µs of
// CPU per request at GOGC=100, 347 at 200, 324 at 400 and 265 at 800,
// with a heap goal of 6, 16 (400) and 32 MB (800). 400 takes most of the
// gain for a heap a few times larger.
const edgeGCPercent = 400

// cgroupMemoryMax is where cgroup v2 puts the container's memory limit.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// gcDefaults sets a process's garbage collector defaults: GOGC
// edgeGCPercent unless GOGC is set (then tuned down toward 100 as the live
// heap grows past 16 MiB, gctune.go), and unless GOMEMLIMIT is set, a soft
// memory limit of 90% of the cgroup's memory limit (when there is one), so
// that the larger heap goal makes the collector work harder near the
// container's limit instead of taking the process past it. It returns
// what it set (0 for what it left alone); the environment always wins.
func gcDefaults(getenv func(string) string, memoryMaxFile string) (gcPercent int, memLimit int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(edgeGCPercent)
		gcPercent = edgeGCPercent
		tuneGC(edgeGCPercent) // gctune.go: less as the live heap grows
	}
	if getenv("GOMEMLIMIT") == "" {
		if max, ok := cgroupLimit(memoryMaxFile); ok {
			memLimit = max / 10 * 9
			debug.SetMemoryLimit(memLimit)
		}
	}
	return gcPercent, memLimit
}

// cgroupLimit reads a cgroup v2 memory.max: a byte count, or "max" for
// none.
func cgroupLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 32 {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n == math.MaxInt64 {
		return 0, false
	}
	return n, true
}
