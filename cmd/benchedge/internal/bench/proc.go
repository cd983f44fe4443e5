package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/portico-gateway/portico/internal/freeport"
	"github.com/portico-gateway/portico/internal/procstat"
)

// CPUs the harness pins to: the system under test alone on sutCPU, the
// generator and the backend on loadCPU. On a machine with one CPU nothing
// is pinned.
const (
	loadCPU = 0
	sutCPU  = 1
)

// proc is a started process.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan error
}

// start runs bin with args, pinned to cpu (when the machine has two) and
// with GOMAXPROCS=1 when solo, its output to log.
func start(name string, cpu int, solo bool, log string, bin string, args ...string) (*proc, error) {
	argv := append([]string{bin}, args...)
	if runtime.NumCPU() >= 2 {
		if ts, err := exec.LookPath("taskset"); err == nil {
			argv = append([]string{ts, "-c", strconv.Itoa(cpu)}, argv...)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = os.Environ()
	if solo {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); f.Close() }()
	return p, nil
}

// stop ends the process: SIGTERM, then SIGKILL after 5 seconds.
func (p *proc) stop() {
	if p == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// cpuTime returns the CPU time (user+system) the process has used so far.
func (p *proc) cpuTime() (time.Duration, error) {
	return procCPU(p.cmd.Process.Pid)
}

// sysTime returns the system (kernel) part of cpuTime.
func (p *proc) sysTime() time.Duration {
	_, sys, _ := procstat.Times(p.cmd.Process.Pid)
	return sys
}

// procCPU reads utime+stime of pid from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) { return procstat.CPU(pid) }

// freePort returns a loopback port nothing listens on now, reserved
// (package freeport) until the bench process exits.
func freePort() (int, error) {
	r, err := freeport.Ports(1)
	if err != nil {
		return 0, err
	}
	return r.Base, nil
}

// waitHTTP polls url until it answers 200, at most timeout.
func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w", url, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitTCP polls addr until it accepts a connection, at most timeout.
func waitTCP(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not listening: %w", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// goBuild builds pkg into dir/name; modfile, when set, is go's -modfile.
func goBuild(ctx context.Context, root, dir, name, pkg, modfile string) (string, error) {
	out := filepath.Join(dir, name)
	args := []string{"build", "-o", out}
	if modfile != "" {
		args = append(args, "-modfile="+modfile)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}
