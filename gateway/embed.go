package gateway

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/telemetry"
)

// Telemetry is the edge's tracer provider, what WithTelemetry takes. A
// Go program that embeds the edge makes it with NewTelemetry.
type Telemetry = telemetry.Provider

// NewTelemetry starts the tracer provider cfg's telemetry section
// describes (the OTEL_* variables override it; no endpoint exports
// nothing). Shutdown it after the edge is closed.
func NewTelemetry(ctx context.Context, cfg config.Config) (*Telemetry, error) {
	return telemetry.New(ctx, cfg.Tracing())
}

// ObservedUpstreams returns the upstream chains the portico binary gives
// the edge (pass them to WithUpstreams): logged by l, with the resilience
// and gRPC client metrics of cfg's upstreams in reg (the registry given
// to WithRegistry) and a client span per attempt by tp (nil: none).
func ObservedUpstreams(l *slog.Logger, reg *prometheus.Registry, tp *Telemetry, cfg config.Config) (*Upstreams, error) {
	if tp == nil {
		tp = telemetry.Disabled(telemetry.ServiceGateway)
	}
	names := make([]string, len(cfg.Upstreams))
	for i, up := range cfg.Upstreams {
		names[i] = up.Name
	}
	chain, err := interceptors.Observed(reg, tp.ClientHandler(), Services(), names...)
	if err != nil {
		return nil, err
	}
	return NewUpstreams(append([]interceptors.Option{interceptors.WithLogger(l)}, chain...)...), nil
}
