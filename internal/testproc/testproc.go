// Package testproc runs the real portico binary in tests: it builds it once,
// starts subcommands as separate processes on free ports, waits (bounded) for
// them to be ready, captures their logs, and always stops them when the test
// ends, even on failure. Its Buffer, the goroutine-safe sink that captures a
// process's output, also serves tests that capture a logger's output: they
// wait on it for a line instead of polling.
package testproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/freeport"
	"github.com/portico-gateway/portico/internal/logging"
)

// BinEnv names an environment variable that, when set, points at a portico
// binary to use instead of building one (e.g. a binary built with -race).
const BinEnv = "PORTICO_E2E_BIN"

// Build compiles ./cmd/portico into dir and returns the binary's path, or
// returns $PORTICO_E2E_BIN when that is set. Call it once from TestMain.
// moduleRoot is the repository root.
func Build(moduleRoot, dir string) (string, error) {
	if bin := os.Getenv(BinEnv); bin != "" {
		return bin, nil
	}
	bin := filepath.Join(dir, "portico")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/portico")
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// FreePort returns a loopback TCP port reserved for the test (package
// freeport: below the kernel's ephemeral range, so no outgoing connection
// or :0 listener takes it before the process binds it, and locked against
// other test binaries) until the test ends.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePortRange(t, 1)
}

// FreePortRange returns base such that base..base+n-1 are reserved for the
// test as FreePort's port is.
func FreePortRange(t testing.TB, n int) int {
	t.Helper()
	r, err := freeport.Ports(n)
	if err != nil {
		t.Fatalf("FreePortRange: %v", err)
	}
	t.Cleanup(r.Release)
	return r.Base
}

// Addr formats 127.0.0.1:port.
func Addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// Proc is one running portico process.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	out  *Buffer
	done chan struct{}
	err  error
}

// Start runs bin with args, stopping it (SIGTERM, then SIGKILL after 10s)
// when the test ends. It gets the test's environment, and in a test (not
// a benchmark) an unbuffered log (logging.BufferEnv=0), so that a line a
// test waits for in a live process's output is there as soon as it is
// logged, never a flush interval later; a benchmark's processes buffer
// their access lines as in production.
func Start(t testing.TB, bin, name string, args ...string) *Proc {
	t.Helper()
	return StartEnv(t, bin, name, Env(t), args...)
}

// Env is what Start adds to the test's environment: an unbuffered log in
// a test, nothing in a benchmark.
func Env(t testing.TB) []string {
	if _, bench := t.(*testing.B); !bench {
		return []string{logging.BufferEnv + "=0"}
	}
	return nil
}

// StartEnv is Start with env (KEY=value) added to the test's environment,
// and no more: e.g. logging.BufferEnv= for a test of the buffered log.
func StartEnv(t testing.TB, bin, name string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, out: &Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = procAttr()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("--- %s output ---\n%s", name, p.Output())
		}
	})
	return p
}

// Output returns everything the process has written so far.
func (p *Proc) Output() string { return p.out.String() }

// WaitOutput waits until cond holds of the process's output, re-checking
// it after every write (see Buffer.WaitFor), and reports whether it did.
func (p *Proc) WaitOutput(ctx context.Context, timeout time.Duration, cond func(string) bool) bool {
	return p.out.WaitFor(ctx, timeout, cond)
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Kill sends SIGKILL and waits for the process to exit.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Pause stops the process with SIGSTOP: it keeps its sockets but answers
// nothing, like a hung service. kill(2) returns before the target has
// stopped, so Pause waits (up to 5s) until the process has stopped (or
// exited).
func (p *Proc) Pause() {
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
	stopped := make(chan struct{})
	go func() { waitStopped(p.Pid()); close(stopped) }() // returns at the latest when the process exits
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
	}
}

// Resume continues a paused process.
func (p *Proc) Resume() { _ = p.cmd.Process.Signal(syscall.SIGCONT) }

// Stop sends SIGTERM and waits up to grace before SIGKILL. It returns the
// process's exit error (nil for a clean exit).
func (p *Proc) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	return p.err
}

// Wait waits up to timeout for the process to exit on its own and returns
// its exit error (nil for a clean exit); ok is false if it is still
// running.
func (p *Proc) Wait(timeout time.Duration) (err error, ok bool) {
	select {
	case <-p.done:
		return p.err, true
	case <-time.After(timeout):
		return nil, false
	}
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitFor polls cond every 20ms until it holds or timeout passes.
func WaitFor(ctx context.Context, timeout time.Duration, cond func(context.Context) bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if cond(ctx) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// TempDir is a directory for one test's databases.
func TempDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
