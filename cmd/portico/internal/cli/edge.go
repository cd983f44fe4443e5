package cli

import (
	"context"
	"log/slog"
	"os"

	"github.com/portico-gateway/portico/gateway"
	"github.com/portico-gateway/portico/gen/openapi"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/grpcserver"
	"github.com/portico-gateway/portico/internal/procmetrics"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// gatewayOptions wires the edge's dependencies: logger, one metrics
// registry shared by the edge and its client chains (with the runtime,
// process and build-info collectors), the tracer provider, the chains (ups)
// and the OpenAPI document generated from the protos.
func gatewayOptions(l *slog.Logger, cfg gateway.Config, tp *telemetry.Provider) ([]gateway.Option, *gateway.Upstreams, error) {
	reg := procmetrics.NewRegistry()
	var names []string
	for _, up := range cfg.Upstreams {
		names = append(names, up.Name)
	}
	chain, err := clientObservers(observed{observe: grpcserver.Observe{Tracing: tp, Registry: reg}}, names...)
	if err != nil {
		return nil, nil, err
	}
	ups := gateway.NewUpstreams(append([]interceptors.Option{interceptors.WithLogger(l)}, chain...)...)
	return []gateway.Option{
		gateway.WithLogger(l),
		gateway.WithRegistry(reg),
		gateway.WithTelemetry(tp),
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
			srv.ReloadResult(err)
			if err != nil {
				l.Error("reload rejected; keeping the running config", "err", err.Error())
				continue
			}
			running = ups.Reload(running, next, srv, l)
		}
	}
}
