// Package supervisor runs Portico's processes as children of `portico dev`:
// each child is the same executable with its own subcommand, so any one can
// be killed or paused (SIGSTOP) on its own to watch the others react.
//
// Every line a child writes to stdout or stderr becomes one JSON record of
// one stream (see tagger): the services' slog lines pass through unchanged;
// anything else (a panic trace, a flag error) gets time, level (INFO from
// stdout, ERROR from stderr), msg and service; a line longer than 64 KiB is
// cut to one record marked truncatedBytes, never split into several.
//
// A child that exits is logged and NOT restarted, and the supervisor logs
// that decision ("child not restarted"): failure behaviour stays visible.
// SIGUSR1 to the supervisor starts every exited child again, with its
// arguments and environment, on request (a person who killed inventory to
// watch the others react, and now wants it back).
// When the context ends, every child gets SIGTERM, then SIGKILL after
// StopGrace. On Linux, children also get SIGKILL if the supervisor
// itself dies (the parent-death signal), so no orphan keeps a port.
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Child is one supervised process.
type Child struct {
	// Name tags the child's output, e.g. "inventory".
	Name string
	// Args are the arguments after the executable, e.g. ["inventory", "--listen", ...].
	Args []string
}

// Supervisor runs children until its context ends.
type Supervisor struct {
	// Exe is the executable every child runs. Required.
	Exe string
	// Children start in order. Required, at least one.
	Children []Child
	// Out receives the merged output stream. Required.
	Out io.Writer
	// Logger logs child starts and exits. Required.
	Logger *slog.Logger
	// StopGrace is how long children get between SIGTERM and SIGKILL. Zero
	// means 15s.
	StopGrace time.Duration
	// Env, if set, is the children's environment; nil inherits ours.
	Env []string
	// Reload names the child a SIGHUP to the supervisor is passed on to
	// (the edge, which reloads its config on SIGHUP), and its replicas
	// named Reload-k. Either way the supervisor itself survives SIGHUP;
	// empty means it is ignored.
	Reload string
	// Ready, if set, is called once every child has started, with a
	// context that ends when Run's does or a child exits; it returns nil
	// once every child serves (and may say so). Until it has, the
	// children are starting: one that exits fails the start, Run stops
	// the others and returns an *ExitError. An error from Ready ends the
	// start without failing it. Nil means no start phase.
	Ready func(context.Context) error
}

// ExitError is Run's error when children exited on their own: one during
// the start (Start true), or every child, so nothing is left to supervise.
type ExitError struct {
	Start bool
	Exits []Exit // in the order they exited
}

// Exit is one child's exit.
type Exit struct {
	Name string
	// Status is how it ended: "exit status 1", "signal: killed".
	Status string
	// LastError is the last line it wrote to stderr, where a portico
	// command reports why it failed; "" if none.
	LastError string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	if e.Start {
		b.WriteString("a child exited while starting")
	} else {
		b.WriteString("every child exited")
	}
	for i, x := range e.Exits {
		sep := ": "
		if i > 0 {
			sep = "; "
		}
		b.WriteString(sep + x.Name + " " + x.Status)
		if x.LastError != "" {
			b.WriteString(" (" + x.LastError + ")")
		}
	}
	return b.String()
}

func (s *Supervisor) validate() error {
	switch {
	case s.Exe == "":
		return errors.New("supervisor: Exe is required")
	case len(s.Children) == 0:
		return errors.New("supervisor: at least one child is required")
	case s.Out == nil || s.Logger == nil:
		return errors.New("supervisor: Out and Logger are required")
	case s.StopGrace < 0:
		return errors.New("supervisor: StopGrace must not be negative")
	}
	return nil
}

// Run starts every child and waits until ctx ends, then stops them all and
// returns nil once every child has exited. It fails if a child cannot be
// started, if one exits before Ready has returned, or once every child has
// exited (an *ExitError); the children still running are stopped first.
func (s *Supervisor) Run(ctx context.Context) error {
	if err := s.validate(); err != nil {
		return err
	}
	grace := s.StopGrace
	if grace == 0 {
		grace = 15 * time.Second
	}
	hup := make(chan os.Signal, 1) // before any child starts: a HUP never kills us
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	out := &lockedWriter{w: s.Out}
	// Each running child exits once, and a child is started again only
	// after its exit was received: the channel never blocks.
	exited := make(chan *proc, len(s.Children))
	var running []*proc
	for _, c := range s.Children {
		p, err := s.start(c, out, exited)
		if err != nil {
			stopAll(running, grace)
			return err
		}
		running = append(running, p)
	}
	ready, stopReady := s.awaitReady(ctx)
	defer stopReady()
	var gone ExitError
	for {
		select {
		case <-ctx.Done():
			stopAll(running, grace)
			return nil
		case <-hup:
			s.forward(running, syscall.SIGHUP)
		case <-usr1:
			gone.Exits = s.restart(running, gone.Exits, out, exited)
		case <-ready:
			ready = nil
		case p := <-exited:
			p.received = true
			gone.Exits = append(gone.Exits, p.exit())
			if ready != nil || len(gone.Exits) == len(running) {
				stopReady()
				stopAll(running, grace)
				gone.Start = ready != nil
				return &gone
			}
			s.Logger.Info("child not restarted", "child", p.name, "restart", fmt.Sprintf("kill -USR1 %d", os.Getpid()))
		}
	}
}

// restart starts again, in place in running, every child whose exit was
// received, and returns exits without theirs. A child that cannot start
// stays down, logged.
func (s *Supervisor) restart(running []*proc, exits []Exit, out *lockedWriter, exited chan<- *proc) []Exit {
	for i, p := range running {
		if !p.received {
			continue
		}
		np, err := s.start(s.Children[i], out, exited)
		if err != nil {
			s.Logger.Warn("child not restarted", "child", p.name, "err", err)
			continue
		}
		running[i] = np
		exits = slices.DeleteFunc(exits, func(x Exit) bool { return x.Name == p.name })
	}
	return exits
}

// awaitReady runs Ready, if set; the channel closes when it returns (never,
// without Ready: no start phase). stop ends the wait.
func (s *Supervisor) awaitReady(ctx context.Context) (ready chan struct{}, stop func()) {
	if s.Ready == nil {
		return nil, func() {}
	}
	ready = make(chan struct{})
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(ready)
		if err := s.Ready(rctx); err != nil && rctx.Err() == nil {
			s.Logger.Warn("not every child is ready; supervising them as they are", "err", err.Error())
		}
	}()
	return ready, func() { cancel(); <-ready }
}

// forward passes sig on to the Reload child and its replicas.
func (s *Supervisor) forward(ps []*proc, sig os.Signal) {
	for _, p := range ps {
		if s.Reload != "" && (p.name == s.Reload || strings.HasPrefix(p.name, s.Reload+"-")) {
			s.Logger.Info("forwarding signal", "child", p.name, "signal", sig.String())
			_ = p.cmd.Process.Signal(sig)
		}
	}
}

type proc struct {
	name   string
	cmd    *exec.Cmd
	done   chan struct{}
	status string  // after done
	stderr *tagger // its last line says why a portico command failed
	// received: Run has received its exit (only Run's goroutine touches it).
	received bool
}

func (p *proc) exit() Exit {
	return Exit{Name: p.name, Status: p.status, LastError: p.stderr.lastLine()}
}

// start starts c and, once it has exited and its exit is logged, sends it
// on exited.
func (s *Supervisor) start(c Child, out *lockedWriter, exited chan<- *proc) (*proc, error) {
	cmd := exec.Command(s.Exe, c.Args...)
	cmd.Env = s.Env
	// Own process group: a terminal's SIGINT or SIGHUP to our group reaches
	// only the supervisor, which stops (or reloads) the children itself, so
	// none is killed behind its back.
	cmd.SysProcAttr = procAttr()
	stdout, stderr := newTagger(c.Name, slog.LevelInfo, out), newTagger(c.Name, slog.LevelError, out)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("supervisor: start %s: %w", c.Name, err)
	}
	s.Logger.Info("child started", "child", c.Name, "pid", cmd.Process.Pid)
	p := &proc{name: c.Name, cmd: cmd, done: make(chan struct{}), stderr: stderr}
	go func() {
		err := cmd.Wait()
		stdout.Flush()
		stderr.Flush()
		lvl := slog.LevelInfo // a clean stop
		if err != nil {
			lvl = slog.LevelWarn
		}
		p.status = exitText(err)
		s.Logger.Log(context.Background(), lvl, "child exited", "child", c.Name, "pid", cmd.Process.Pid, "exit", p.status)
		close(p.done)
		exited <- p
	}()
	return p, nil
}

func stopAll(ps []*proc, grace time.Duration) {
	for _, p := range ps {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused child must wake to stop
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	for _, p := range ps {
		select {
		case <-p.done:
		case <-deadline.C:
			for _, q := range ps {
				_ = q.cmd.Process.Kill()
			}
			<-p.done
		}
	}
	for _, p := range ps {
		<-p.done
	}
}

func exitText(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
