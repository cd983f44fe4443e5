package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestGCDefaults: GOGC and GOMEMLIMIT from the environment win; otherwise
// the edge's GOGC, and 90% of a cgroup memory limit when there is one.
func TestGCDefaults(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	debug.SetGCPercent(prevGC)
	prevLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(prevGC); debug.SetMemoryLimit(prevLimit) })
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gib, unlimited, junk := file("gib", "1073741824\n"), file("max", "max\n"), file("junk", "lots")
	tests := []struct {
		name      string
		env       map[string]string
		memoryMax string
		wantGC    int
		wantLimit int64
	}{
		{"nothing set, no cgroup limit", nil, unlimited, edgeGCPercent, 0},
		{"nothing set, 1 GiB cgroup", nil, gib, edgeGCPercent, 966367638},
		{"no cgroup file", nil, filepath.Join(dir, "absent"), edgeGCPercent, 0},
		{"unreadable limit", nil, junk, edgeGCPercent, 0},
		{"GOGC set", map[string]string{"GOGC": "150"}, gib, 0, 966367638},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "200MiB"}, gib, edgeGCPercent, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(prevLimit)
			gc, limit := gcDefaults(func(k string) string { return tt.env[k] }, tt.memoryMax)
			if gc != tt.wantGC || limit != tt.wantLimit {
				t.Errorf("gcDefaults() = %d, %d; want %d, %d", gc, limit, tt.wantGC, tt.wantLimit)
			}
			wantRuntimeGC := 100
			if tt.wantGC != 0 {
				wantRuntimeGC = tt.wantGC
			}
			if got := debug.SetGCPercent(100); got != wantRuntimeGC {
				t.Errorf("GC percent after gcDefaults = %d, want %d", got, wantRuntimeGC)
			}
			if got := debug.SetMemoryLimit(-1); tt.wantLimit != 0 && got != tt.wantLimit {
				t.Errorf("memory limit after gcDefaults = %d, want %d", got, tt.wantLimit)
			}
		})
	}
}
