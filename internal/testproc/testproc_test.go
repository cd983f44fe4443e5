package testproc

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestPauseWaitsUntilStopped: when Pause returns the process is stopped,
// and Resume lets it run to a clean stop.
func TestPauseWaitsUntilStopped(t *testing.T) {
	p := Start(t, "sleep", "sleep", "60")
	p.Pause()
	if state := procState(t, p.Pid()); state != "T" {
		t.Fatalf("state after Pause = %q, want T (stopped)", state)
	}
	p.Resume()
	if err := p.Stop(5 * time.Second); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("Stop() = %v, want terminated by SIGTERM", err)
	}
}

// procState is the one-letter state of pid in /proc (Linux only).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return s[i+2 : i+3]
}
