package cli

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// TestTunedGCPercent: edgeGCPercent up to a 16 MiB live heap, then a
// headroom of gcHeadroom, never under minGCPercent.
func TestTunedGCPercent(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live uint64
		want int
	}{
		{0, edgeGCPercent},
		{4 * mib, edgeGCPercent},
		{16 * mib, edgeGCPercent},
		{32 * mib, 200},
		{64 * mib, 100},
		{100 * mib, minGCPercent},
		{10 << 30, minGCPercent},
	}
	for _, tt := range tests {
		if got := tunedGCPercent(tt.live); got != tt.want {
			t.Errorf("tunedGCPercent(%d MiB) = %d, want %d", tt.live/mib, got, tt.want)
		}
	}
}

// gogc is the GOGC in force.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// collectUntil runs collections (the tuner acts after each, in a cleanup)
// until ok holds, failing after 200.
func collectUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for range 200 {
		runtime.GC()
		runtime.Gosched()
		if ok() {
			return
		}
	}
	t.Fatalf("after 200 collections: %s (GOGC %d)", what, gogc())
}

// TestTuneGC: the tuner lowers GOGC for a large live heap, raises it
// again when the heap is freed, and stops once someone else sets GOGC.
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(edgeGCPercent)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tuneGC(edgeGCPercent)
	ballast := make([]byte, 96<<20)
	for i := range ballast {
		ballast[i] = 1 // resident, though only its size matters
	}
	collectUntil(t, "GOGC lowered for a 96 MiB live heap", func() bool { return gogc() == minGCPercent })
	runtime.KeepAlive(ballast)
	ballast = nil
	collectUntil(t, "GOGC back up once the heap is freed", func() bool { return gogc() == edgeGCPercent })
	debug.SetGCPercent(150)
	for range 5 {
		runtime.GC()
		runtime.Gosched()
	}
	ballast = make([]byte, 96<<20)
	for range 5 {
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(ballast)
	if got := gogc(); got != 150 {
		t.Errorf("GOGC %d after another SetGCPercent(150): the tuner did not stop", got)
	}
}
