package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// perfRecord samples s's CPU with Linux perf (call graphs, 999 Hz) for
// dur into dir/perf-KEY.data, started in the background; wait returns
// once perf has written the file. Go's frame pointers give perf whole
// stacks: read it with `perf report -i FILE --children --no-demangle`.
func perfRecord(ctx context.Context, s *system, dir string, dur time.Duration) (wait func() error, err error) {
	bin, err := exec.LookPath("perf")
	if err != nil {
		return nil, fmt.Errorf("-perf: %w", err)
	}
	out := filepath.Join(dir, "perf-"+s.Key+".data")
	secs := strconv.FormatFloat(dur.Seconds(), 'f', 1, 64)
	cmd := exec.CommandContext(ctx, bin, "record", "-F", "999", "-g", "-p", strconv.Itoa(s.proc.cmd.Process.Pid), "-o", out, "--", "sleep", secs)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd.Wait, nil
}
