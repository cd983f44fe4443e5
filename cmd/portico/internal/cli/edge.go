package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/metrics"
	"github.com/portico-gateway/portico/internal/filewatch"
)

// gatewayOptions wires the edge's dependencies: logger, one metrics
// registry shared by the edge and its client chains, the chains (ups),
// the config file it reloads and the OpenAPI document generated from the
// protos.
func gatewayOptions(l *slog.Logger, path string) ([]gateway.Option, *gateway.Upstreams, error) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	ups := gateway.NewUpstreams(interceptors.WithLogger(l), interceptors.WithMetrics(m))
	return []gateway.Option{
		gateway.WithLogger(l),
		gateway.WithRegistry(reg),
		gateway.WithUpstreams(ups),
		gateway.WithConfigFile(path),
		gateway.WithOpenAPI(openapi.JSON),
	}, ups, nil
}

// reloadLoop re-reads the config file on every SIGHUP and every change of
// the file until ctx ends (Server.ReloadFile: an invalid file is logged,
// counted and audited, and the running config stays). Reloads run one at a
// time in this goroutine, so a storm of signals costs one read each, and a
// file that did not change is no new version.
func reloadLoop(ctx context.Context, hup <-chan os.Signal, changed <-chan struct{}, srv *gateway.Server) {
	for {
		source := gateway.SourceSignal
		select {
		case <-ctx.Done():
			return
		case <-hup:
		case <-changed:
			source = gateway.SourceFile
		}
		_, _ = srv.ReloadFile(ctx, source)
	}
}

// watchConfig reports changes of the config file on changed until ctx
// ends, polling every ops.watch_interval of the config in effect at start
// (negative: never).
func watchConfig(ctx context.Context, path string, cfg gateway.Config, changed chan<- struct{}) {
	interval := cfg.Ops.WatchInterval
	if interval < 0 {
		return
	}
	if interval == 0 {
		interval = gateway.DefaultWatchInterval
	}
	filewatch.Watch(ctx, path, interval, func() {
		select {
		case changed <- struct{}{}:
		default: // a reload is pending already; it reads the newest file
		}
	})
}
