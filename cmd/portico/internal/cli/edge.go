package cli

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/internal/filewatch"
	"github.com/portico-gateway/portico/internal/procmetrics"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// gatewayOptions wires the edge's dependencies: logger, one metrics
// registry shared by the edge and its client chains (with the runtime,
// process and build-info collectors), the tracer provider, the chains (ups),
// the config file it reloads and the OpenAPI document generated from the
// protos.
func gatewayOptions(l *slog.Logger, cfg config.Config, tp *telemetry.Provider, path string) ([]gateway.Option, *gateway.Upstreams, error) {
	reg := procmetrics.NewRegistry()
	ups, err := gateway.ObservedUpstreams(l, reg, tp, cfg)
	if err != nil {
		return nil, nil, err
	}
	return []gateway.Option{
		gateway.WithLogger(l),
		gateway.WithRegistry(reg),
		gateway.WithTelemetry(tp),
		gateway.WithUpstreams(ups),
		gateway.WithConfigFile(path),
		gateway.WithOpenAPI(openapi.JSON),
	}, ups, nil
}

// reloadLoop re-reads the config file on every SIGHUP and every change of
// the file until ctx ends (Server.ReloadFile: an invalid file is logged,
// counted and audited, and the running config stays), and the edge's TLS
// pair on every SIGHUP. Reloads run one at a time in this goroutine, so a
// storm of signals costs one read each, and a file that did not change is
// no new version.
func reloadLoop(ctx context.Context, hup <-chan os.Signal, changed <-chan struct{}, srv *gateway.Server, l *slog.Logger) {
	for {
		source := gateway.SourceSignal
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := srv.ReloadTLS(); err != nil {
				l.Error("TLS certificate not reloaded; keeping the running one", "err", err.Error())
			}
		case <-changed:
			source = gateway.SourceFile
		}
		_, _ = srv.ReloadFile(ctx, source)
	}
}

// watchConfig reports changes of the config file on changed until ctx
// ends, polling every ops.watch_interval of the live config (negative:
// never). A reload that changes the interval restarts the poll with it.
func watchConfig(ctx context.Context, path string, srv *gateway.Server, changed chan<- struct{}) {
	for {
		next := srv.Applied()
		interval := srv.Config().Ops.WatchInterval
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		if interval >= 0 {
			wg.Go(func() { pollConfig(wctx, path, interval, changed) })
		}
		for same := true; same; {
			select {
			case <-ctx.Done():
				cancel()
				wg.Wait()
				return
			case <-next:
				next = srv.Applied()
				same = srv.Config().Ops.WatchInterval == interval
			}
		}
		cancel()
		wg.Wait()
	}
}

// pollConfig is one interval's watch of the config file.
func pollConfig(ctx context.Context, path string, interval time.Duration, changed chan<- struct{}) {
	if interval == 0 {
		interval = config.DefaultWatchInterval
	}
	filewatch.Watch(ctx, path, interval, func() {
		select {
		case changed <- struct{}{}:
		default: // a reload is pending already; it reads the newest file
		}
	})
}
