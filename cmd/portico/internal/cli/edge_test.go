package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/portico-gateway/portico/gateway"
)

// TestWatchConfigFollowsInterval: ops.watch_interval applies on reload. An
// edge started with watching off (negative) starts polling its file once
// a reload sets an interval, and reports the file's next change.
func TestWatchConfigFollowsInterval(t *testing.T) {
	cfg := gateway.DevConfig(0)
	cfg.AdminListen = ""
	cfg.Ops.WatchInterval = -1
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	write := func(c gateway.Config, note string) {
		t.Helper()
		b, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, "# "+note+"\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg, "start")
	srv, err := gateway.New(t.Context(), cfg, gateway.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	changed, done := make(chan struct{}, 1), make(chan struct{})
	go func() { defer close(done); watchConfig(ctx, path, srv, changed) }()
	defer func() { cancel(); <-done }()

	next := cfg
	next.Ops.WatchInterval = 10 * time.Millisecond
	if _, err := srv.Reload(t.Context(), next, gateway.SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	// The watch restarts on its own goroutine; a change written before it
	// took its first look is its starting point, so write until one is
	// reported.
	deadline := time.After(5 * time.Second)
	for i := 0; ; i++ {
		write(next, fmt.Sprint("edit ", i))
		select {
		case <-changed:
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no change reported within 5s: the watch did not take the reloaded interval")
		}
	}
}
