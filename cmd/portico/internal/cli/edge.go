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
)

// gatewayOptions wires the edge's dependencies: logger, one metrics
// registry shared by the edge and its client chains, the chains (ups),
// and the OpenAPI document generated from the protos.
func gatewayOptions(l *slog.Logger) ([]gateway.Option, *gateway.Upstreams, error) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		return nil, nil, err
	}
	ups := gateway.NewUpstreams(interceptors.WithLogger(l), interceptors.WithMetrics(m))
	return []gateway.Option{
		gateway.WithLogger(l),
		gateway.WithRegistry(reg),
		gateway.WithDialer(ups.Dialer()),
		gateway.WithOpenAPI(openapi.JSON),
	}, ups, nil
}

// reloadOnHangup re-reads the edge's TLS pair and the config at path on
// every signal on hup until ctx ends and applies it (gateway.Upstreams.Reload). An invalid file is
// logged and ignored: the running config stays.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, path string, running gateway.Config, ups *gateway.Upstreams, srv *gateway.Server, l *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := srv.ReloadTLS(); err != nil {
				l.Error("TLS certificate not reloaded; keeping the running one", "err", err.Error())
			}
			next, err := gateway.LoadConfig(path)
			if err != nil {
				l.Error("reload rejected; keeping the running config", "err", err.Error())
				continue
			}
			running = ups.Reload(running, next, srv, l)
		}
	}
}
