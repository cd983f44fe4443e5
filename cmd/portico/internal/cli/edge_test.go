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

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// TestWatchConfigFollowsInterval: ops.watch_interval applies on reload. An
// edge started with watching off (negative) starts polling its file once
// a reload sets an interval, and reports the file's next change.
func TestWatchConfigFollowsInterval(t *testing.T) {
	cfg := config.Dev(0)
	cfg.AdminListen = ""
	cfg.Ops.WatchInterval = -1
	path := filepath.Join(t.TempDir(), "gateway.yaml")
	write := func(c config.Config, note string) {
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

// TestFollowTelemetry: each applied config's trace sample ratio and log
// sample rate apply to the process's tracer and logger.
func TestFollowTelemetry(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "")
	zero, one := 0.0, 1.0
	cfg := config.Dev(0)
	cfg.AdminListen = ""
	cfg.Telemetry.Traces.SampleRatio, cfg.Telemetry.Logs.SampleRate = &zero, &zero
	srv, err := gateway.New(t.Context(), cfg, gateway.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tc := cfg.Tracing()
	tc.Exporter, tc.SampleRatio = tracetest.NewInMemoryExporter(), &one // until the live config applies
	tp, err := telemetry.New(t.Context(), tc)
	if err != nil {
		t.Fatal(err)
	}
	var buf lockedBuffer
	sampling := logging.NewSampler(logging.Sampling{Rate: &one})
	l := sampling.Logger(logging.New(&buf, "gateway", slog.LevelInfo))
	applied := make(chan struct{}, 4)
	telemetryFollowed = func() { applied <- struct{}{} }
	defer func() { telemetryFollowed = nil }()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); followTelemetry(ctx, srv, tp, sampling, l) }()
	defer func() { cancel(); <-done }()
	// follows waits (at most 5s) until followTelemetry has applied the
	// live config on its goroutine, then reports whether a span and an
	// access line are kept as want.
	follows := func(want bool) bool {
		select {
		case <-applied:
		case <-time.After(5 * time.Second):
			return false
		}
		before := len(buf.String())
		sctx, span := tp.TracerProvider().Tracer("t").Start(context.Background(), "x")
		l.InfoContext(sctx, "request", "durationMs", 0.1)
		span.End()
		return span.SpanContext().IsSampled() == want && (len(buf.String()) > before) == want
	}
	if !follows(false) {
		t.Fatal("the live config's ratio 0 never applied")
	}
	next := cfg
	next.Telemetry.Traces.SampleRatio, next.Telemetry.Logs.SampleRate = &one, &one
	if _, err := srv.Reload(t.Context(), next, gateway.SourceAdmin); err != nil {
		t.Fatalf("Reload() = %v", err)
	}
	if !follows(true) {
		t.Fatal("a reload to ratio 1 and rate 1 never applied")
	}
}
