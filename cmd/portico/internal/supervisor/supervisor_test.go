package supervisor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/portico-gateway/portico/internal/testproc"
)

// longLen is a child's over-long line: past maxLine, and past the 98 KB at
// which a pipe read used to split it.
const longLen = 300 << 10

// longHead begins the child's over-long JSON line.
const longHead = `{"time":"2026-11-30T12:00:00Z","level":"ERROR","msg":"big","service":"long","traceId":"t-1","err":"`

// The test binary doubles as the child: SUPERVISOR_CHILD selects a behaviour.
func TestMain(m *testing.M) {
	mode := os.Getenv("SUPERVISOR_CHILD")
	if i := slices.Index(os.Args, "--child"); i >= 0 && i+1 < len(os.Args) {
		mode = os.Args[i+1] // one child among several of other kinds
	}
	switch mode {
	case "":
		goleak.VerifyTestMain(m)
	case "polite":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGHUP)
		fmt.Println(`{"time":"2026-11-30T12:00:00Z","level":"INFO","msg":"hello","service":"polite"}`)
		fmt.Println("plain text line")
		for sig := range c {
			if sig == syscall.SIGTERM {
				break
			}
			fmt.Println("reloading")
		}
		fmt.Print("bye without newline")
		os.Exit(0)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ignoring SIGTERM")
		time.Sleep(time.Minute)
	case "crash":
		fmt.Println("crashing")
		os.Exit(3)
	case "failer":
		fmt.Fprintln(os.Stderr, "portico failer: listen tcp 127.0.0.1:1: bind: address already in use")
		os.Exit(1)
	case "long":
		fmt.Println(longHead + strings.Repeat("x", longLen) + `"}`)
		fmt.Fprintln(os.Stderr, strings.Repeat("y", longLen))
		fmt.Println(`{"time":"2026-11-30T12:00:01Z","level":"INFO","msg":"after","service":"long"}`)
		os.Exit(0)
	}
}

// waitFor waits (bounded) until cond holds for what b holds.
func waitFor(t *testing.T, b *testproc.Buffer, what string, cond func(string) bool) bool {
	t.Helper()
	if !b.WaitFor(t.Context(), 10*time.Second, cond) {
		t.Errorf("never saw %s; got %.2000q", what, b.String())
		return false
	}
	return true
}

// childRace keeps a -race child from sleeping 1s before it exits
// (atexit_sleep_ms): every stop would wait for it. The child still reports
// a race when it happens.
var childRace = "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"

// supervised is one Run of a Supervisor over the test binary's children.
type supervised struct {
	out, log *testproc.Buffer // the merged stream and the supervisor's own log
	cancel   context.CancelFunc
	errc     chan error
}

func start(t *testing.T, mode string, grace time.Duration) *supervised {
	t.Helper()
	return startAll(t, grace, nil, mode)
}

// startAll runs one child of each mode, named after it, with ready as the
// Supervisor's Ready.
func startAll(t *testing.T, grace time.Duration, ready func(context.Context) error, modes ...string) *supervised {
	t.Helper()
	r := &supervised{out: &testproc.Buffer{}, log: &testproc.Buffer{}, errc: make(chan error, 1)}
	s := &Supervisor{
		Exe:       os.Args[0],
		Out:       r.out,
		Logger:    slog.New(slog.NewJSONHandler(r.log, nil)),
		StopGrace: grace,
		Env:       append(os.Environ(), childRace),
		Reload:    modes[0],
		Ready:     ready,
	}
	for _, m := range modes {
		s.Children = append(s.Children, Child{Name: m, Args: []string{"-test.run=^$", "--child", m}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.errc <- s.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// wait waits (bounded) for Run to return on its own and returns its error.
func (r *supervised) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.errc:
		close(r.errc)
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// stop cancels Run and waits (bounded) for it to return.
func (r *supervised) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	select {
	case err, ok := <-r.errc:
		if ok && err != nil {
			t.Errorf("Run() = %v", err)
		}
		if ok {
			close(r.errc)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// records parses every line of out, failing on one that is not a whole
// record.
func records(t *testing.T, out string) []map[string]any {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	var recs []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %.200q is not JSON: %v", sc.Text(), err)
		}
		for _, k := range []string{"time", "level", "msg", "service"} {
			if s, _ := m[k].(string); s == "" {
				t.Errorf("line %.200q has no %s", sc.Text(), k)
			}
		}
		recs = append(recs, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestEveryLineIsOneRecord(t *testing.T) {
	r := start(t, "polite", 5*time.Second)
	waitFor(t, r.out, "the plain line", func(o string) bool { return strings.Contains(o, "plain text") })
	r.stop(t)
	recs := records(t, r.out.String())
	want := []string{"hello", "plain text line", "bye without newline"}
	if len(recs) != len(want) {
		t.Fatalf("got %d records %q, want %d", len(recs), r.out.String(), len(want))
	}
	for i, w := range want {
		if recs[i]["msg"] != w || recs[i]["service"] != "polite" {
			t.Errorf("record %d = %v, want msg %q from polite", i, recs[i], w)
		}
	}
}

// TestLongLinesAreNeverSplit: an over-long line becomes one record, cut and
// marked, keeping the time, level and msg it began with.
func TestLongLinesAreNeverSplit(t *testing.T) {
	r := start(t, "long", 5*time.Second)
	var xe *ExitError
	if err := r.wait(t); !errors.As(err, &xe) { // its only child is gone
		t.Fatalf("Run() = %v, want an *ExitError", err)
	}
	recs := records(t, r.out.String())
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3 (one per line the child wrote)", len(recs))
	}
	// stdout and stderr are two pipes: their lines may arrive in either order.
	byMsg := map[string]map[string]any{}
	for _, rec := range recs {
		msg, _ := rec["msg"].(string)
		byMsg[msg[:min(len(msg), 5)]] = rec
	}
	tests := []struct {
		name, msg string
		want      map[string]any
	}{
		{"json", "big", map[string]any{"level": "ERROR", "time": "2026-11-30T12:00:00Z", "traceId": "t-1", "service": "long", "truncatedBytes": float64(len(longHead) + longLen + 2 - maxLine)}},
		{"plain", "yyyyy", map[string]any{"level": "ERROR", "service": "long", "truncatedBytes": float64(longLen - maxLine)}},
		{"next", "after", map[string]any{"level": "INFO", "service": "long", "truncatedBytes": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, ok := byMsg[tt.msg]
			if !ok {
				t.Fatalf("no record with msg %q in %.500q", tt.msg, r.out.String())
			}
			for k, v := range tt.want {
				if rec[k] != v {
					t.Errorf("%s = %.100v, want %v", k, rec[k], v)
				}
			}
		})
	}
	if msg, _ := byMsg["yyyyy"]["msg"].(string); len(msg) != maxLine {
		t.Errorf("plain record msg has %d bytes, want the line's first %d", len(msg), maxLine)
	}
}

// TestStubbornChildIsKilledAfterGrace: a child that ignores SIGTERM gets
// SIGKILL once the grace is over.
func TestStubbornChildIsKilledAfterGrace(t *testing.T) {
	r := start(t, "stubborn", 200*time.Millisecond)
	waitFor(t, r.out, "the child ignoring SIGTERM", func(o string) bool { return strings.Contains(o, "ignoring") })
	r.stop(t)
	if !strings.Contains(r.log.String(), `"exit":"signal: killed"`) {
		t.Errorf("the child was not killed: %s", r.log.String())
	}
}

// TestCrashedChildIsNotRestarted: after the child's exit the supervisor
// says it will not restart it (the decision a restart, delayed or not,
// would replace), Run keeps going with nothing started again, and when it
// returns the child has run exactly once.
func TestCrashedChildIsNotRestarted(t *testing.T) {
	r := startAll(t, time.Second, nil, "crash", "polite")
	if !waitFor(t, r.log, "the decision not to restart", func(o string) bool { return strings.Contains(o, "child not restarted") }) {
		return
	}
	select {
	case err := <-r.errc:
		t.Fatalf("Run returned %v when its child crashed; want it to keep running until cancelled", err)
	default:
	}
	r.stop(t)
	var msgs []string
	for line := range strings.Lines(r.log.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["child"] == "crash" {
			msgs = append(msgs, rec["msg"].(string))
		}
	}
	if want := []string{"child started", "child exited", "child not restarted"}; !slices.Equal(msgs, want) {
		t.Errorf("supervisor logged %q, want %q", msgs, want)
	}
	if n := strings.Count(r.out.String(), "crashing"); n != 1 {
		t.Errorf("child ran %d times, want 1", n)
	}
	if !strings.Contains(r.log.String(), `"exit":"exit status 3"`) {
		t.Errorf("the crash's exit status is not logged: %s", r.log.String())
	}
}

func TestValidate(t *testing.T) {
	l := slog.New(slog.NewJSONHandler(io.Discard, nil))
	tests := []struct {
		name string
		s    Supervisor
	}{
		{"no exe", Supervisor{Children: []Child{{Name: "a"}}, Out: io.Discard, Logger: l}},
		{"no children", Supervisor{Exe: "x", Out: io.Discard, Logger: l}},
		{"no out", Supervisor{Exe: "x", Children: []Child{{Name: "a"}}, Logger: l}},
		{"negative grace", Supervisor{Exe: "x", Children: []Child{{Name: "a"}}, Out: io.Discard, Logger: l, StopGrace: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.s.Run(context.Background()); err == nil {
				t.Error("Run() = nil, want a validation error")
			}
		})
	}
}

// TestSIGHUPIsForwarded: SIGHUP to the supervisor reaches the Reload child
// and kills nobody. The child listens for it before its first line, and
// the supervisor before any child starts.
func TestSIGHUPIsForwarded(t *testing.T) {
	r := start(t, "polite", 5*time.Second)
	waitFor(t, r.out, "the plain line", func(o string) bool { return strings.Contains(o, "plain text") })
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.out, "the reload", func(o string) bool { return strings.Contains(o, "reloading") })
	r.stop(t)
	if !strings.Contains(r.out.String(), "bye without newline") {
		t.Errorf("child did not stop cleanly after the reload: %q", r.out.String())
	}
}

// TestRunEndsWhenNoChildIsLeft: Run does not supervise nothing. When every
// child has exited it returns an *ExitError naming each exit and the last
// line each wrote to stderr (a portico command's reason); a child that
// exits while the others are starting (before Ready returns) fails the
// start at once, and the others are stopped.
func TestRunEndsWhenNoChildIsLeft(t *testing.T) {
	const bind = "portico failer: listen tcp 127.0.0.1:1: bind: address already in use"
	never := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name      string
		ready     func(context.Context) error
		modes     []string
		wantStart bool
		want      []Exit // in any order
	}{
		{"every child exited", nil, []string{"crash", "failer"}, false,
			[]Exit{{"crash", "exit status 3", ""}, {"failer", "exit status 1", bind}}},
		{"one exited while starting", never, []string{"polite", "failer"}, true,
			[]Exit{{"failer", "exit status 1", bind}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startAll(t, 5*time.Second, tt.ready, tt.modes...)
			err := r.wait(t)
			var xe *ExitError
			if !errors.As(err, &xe) {
				t.Fatalf("Run() = %v, want an *ExitError", err)
			}
			if xe.Start != tt.wantStart {
				t.Errorf("Start = %v, want %v", xe.Start, tt.wantStart)
			}
			got := slices.Clone(xe.Exits)
			slices.SortFunc(got, func(a, b Exit) int { return strings.Compare(a.Name, b.Name) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("Exits = %q, want %q", got, tt.want)
			}
			if !strings.Contains(err.Error(), bind) {
				t.Errorf("Error() = %q, want the child's reason", err)
			}
			// Run has returned, so every child has exited; one that had
			// begun (its first line: its SIGTERM handler is installed)
			// must have been stopped gracefully. One stopped before it
			// began dies of the signal, printing nothing.
			out := r.out.String()
			if slices.Contains(tt.modes, "polite") && strings.Contains(out, "plain text") && !strings.Contains(out, "bye without newline") {
				t.Errorf("the starting child was not stopped: %q", out)
			}
		})
	}
}

// TestSIGUSR1RestartsExitedChildren: SIGUSR1 to the supervisor starts the
// exited child again (it runs a second time, and its second exit is
// handled like the first), and leaves the running one alone.
func TestSIGUSR1RestartsExitedChildren(t *testing.T) {
	r := startAll(t, 5*time.Second, nil, "polite", "crash")
	waitFor(t, r.out, "the running child", func(o string) bool { return strings.Contains(o, "plain text") })
	if !waitFor(t, r.log, "the decision not to restart", func(o string) bool { return strings.Contains(o, "child not restarted") }) {
		return
	}
	if !strings.Contains(r.log.String(), fmt.Sprintf(`"restart":"kill -USR1 %d"`, os.Getpid())) {
		t.Errorf("the log does not say how to restart: %s", r.log.String())
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r.log, "the second exit handled", func(o string) bool { return strings.Count(o, "child not restarted") == 2 })
	r.stop(t)
	if n := strings.Count(r.out.String(), "crashing"); n != 2 {
		t.Errorf("the crashed child ran %d times, want 2", n)
	}
	if n := strings.Count(r.out.String(), "plain text"); n != 1 {
		t.Errorf("the running child ran %d times, want 1 (never restarted)", n)
	}
}
