package procstat

import (
	"os"
	"testing"
	"time"
)

func TestCPU(t *testing.T) {
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the counter (10 ms ticks) moves, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		if n%1_000_000 == 0 {
			if now, err := CPU(os.Getpid()); err != nil || now > before {
				return
			}
		}
	}
	t.Fatal("CPU time did not grow in 10 s of busy work")
}

func TestCPUOfMissingProcess(t *testing.T) {
	if _, err := CPU(-1); err == nil {
		t.Fatal("want an error for pid -1")
	}
}

// TestTimesSplitsKernelTime makes system calls until the system time (10 ms
// ticks) moves, bounded: the split is stime, not all of it user time.
func TestTimesSplitsKernelTime(t *testing.T) {
	_, before, err := Times(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1)
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		_, _ = f.Read(buf) // a read(2) on /dev/null: kernel time
		if n%10_000 == 0 {
			if _, now, err := Times(os.Getpid()); err != nil || now > before {
				return
			}
		}
	}
	t.Fatal("system time did not grow in 10 s of system calls")
}
