package cli

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcHeadroom is the garbage the tuned GOGC lets the heap hold over its
// live part: edgeGCPercent of a 16 MiB live heap (the edge's is a few MB
// when it serves few connections). Above that the percent falls toward
// minGCPercent, so the headroom stays about gcHeadroom instead of growing
// with the live heap: at 400, every idle keep-alive connection (about
// 18 KiB live with its goroutine stack) let the heap keep 4 times that in
// garbage (make bench-edge's idle phase: 40.5 KiB of RSS per connection at
// 400, 26.5–30.7 at 100, stock grpc-gateway 23.5–24.9).
const gcHeadroom = 64 << 20

// minGCPercent is the lowest GOGC the tuner sets: Go's default.
const minGCPercent = 100

// tunedGCPercent is the GOGC for a heap whose last collection found live
// bytes (heap, stacks and globals, what Go's heap goal is a percent of).
func tunedGCPercent(live uint64) int {
	if live == 0 {
		return edgeGCPercent
	}
	return int(min(max(gcHeadroom*100/live, minGCPercent), edgeGCPercent))
}

// gcLiveMetrics are what tunedGCPercent's live is the sum of, and the GOGC
// in force.
var gcLiveMetrics = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes", "/gc/gogc:percent"}

// tuneGC sets GOGC to tunedGCPercent after every collection, starting
// from set (the percent gcDefaults set). It stops for good once GOGC is
// found changed by anyone else (debug.SetGCPercent elsewhere): they win.
// It runs in a cleanup the runtime calls after each collection (no
// goroutine of its own).
func tuneGC(set int) {
	s := make([]metrics.Sample, len(gcLiveMetrics))
	for i, name := range gcLiveMetrics {
		s[i].Name = name
	}
	var arm func()
	arm = func() {
		runtime.AddCleanup(new([32]byte), // not a tiny allocation: collected alone
			func(struct{}) {
				metrics.Read(s)
				if int(s[3].Value.Uint64()) != set {
					return
				}
				var live uint64
				for _, v := range s[:3] {
					live += v.Value.Uint64()
				}
				if p := tunedGCPercent(live); p != set {
					debug.SetGCPercent(p)
					set = p
				}
				arm()
			}, struct{}{})
	}
	arm()
}
