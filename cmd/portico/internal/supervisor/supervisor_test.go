package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The test binary doubles as the child: SUPERVISOR_CHILD selects a behaviour.
func TestMain(m *testing.M) {
	switch os.Getenv("SUPERVISOR_CHILD") {
	case "":
		goleak.VerifyTestMain(m)
	case "polite":
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGHUP)
		fmt.Println(`{"service":"polite","msg":"hello"}`)
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
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func run(t *testing.T, mode string, grace time.Duration, until func(out string) bool) (string, time.Duration) {
	t.Helper()
	out := &syncBuf{}
	s := &Supervisor{
		Exe:       os.Args[0],
		Children:  []Child{{Name: mode, Args: []string{"-test.run=^$"}}},
		Out:       out,
		Logger:    slog.New(slog.NewJSONHandler(io.Discard, nil)),
		StopGrace: grace,
		Env:       append(os.Environ(), "SUPERVISOR_CHILD="+mode),
		Reload:    mode,
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !until(out.String()) {
		if time.Now().After(deadline) {
			cancel()
			<-errc
			t.Fatalf("child output never matched; got %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run() = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	return out.String(), time.Since(start)
}

func TestEveryLineIsTaggedJSON(t *testing.T) {
	out, _ := run(t, "polite", 5*time.Second, func(o string) bool { return strings.Contains(o, "plain text") })
	sc := bufio.NewScanner(strings.NewReader(out))
	var lines []map[string]string
	for sc.Scan() {
		var m map[string]string
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", sc.Text(), err)
		}
		if m["service"] == "" {
			t.Errorf("line %q has no service", sc.Text())
		}
		lines = append(lines, m)
	}
	want := []string{"hello", "plain text line", "bye without newline"}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines %q, want %d", len(lines), out, len(want))
	}
	for i, w := range want {
		if lines[i]["msg"] != w {
			t.Errorf("line %d msg = %q, want %q", i, lines[i]["msg"], w)
		}
	}
}

func TestStubbornChildIsKilledAfterGrace(t *testing.T) {
	_, took := run(t, "stubborn", 200*time.Millisecond, func(o string) bool { return strings.Contains(o, "ignoring") })
	if took > 15*time.Second {
		t.Errorf("stop took %v; the grace is 200ms, so SIGKILL never came", took)
	}
}

func TestCrashedChildIsNotRestarted(t *testing.T) {
	out, _ := run(t, "crash", time.Second, func(o string) bool { return strings.Contains(o, "crashing") })
	time.Sleep(200 * time.Millisecond) // give a (wrong) restart a chance to show
	if n := strings.Count(out, "crashing"); n != 1 {
		t.Errorf("child ran %d times, want 1", n)
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
// and kills nobody.
func TestSIGHUPIsForwarded(t *testing.T) {
	out, _ := run(t, "polite", 5*time.Second, func(o string) bool {
		if !strings.Contains(o, "plain text") {
			return false
		}
		if !strings.Contains(o, "reloading") {
			_ = syscall.Kill(os.Getpid(), syscall.SIGHUP)
			time.Sleep(20 * time.Millisecond)
			return false
		}
		return true
	})
	if !strings.Contains(out, "bye without newline") {
		t.Errorf("child did not stop cleanly after the reload: %q", out)
	}
}
