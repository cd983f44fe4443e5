package telemetry

import (
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc/stats"
)

// ServerHandler returns the stats handler a service's gRPC server installs:
// one server span per call, continuing the caller's traceparent. Health
// checks and reflection get none.
func (p *Provider) ServerHandler() stats.Handler {
	return otelgrpc.NewServerHandler(p.grpcOptions()...)
}

// ClientHandler returns the stats handler of a connection to an upstream:
// one client span per attempt (grpc-go calls stats handlers per attempt,
// so a retry is its own span), carrying traceparent to the callee. While
// nothing is exported it starts no span: the callee gets the caller's
// span's traceparent, unsampled, instead of that of a child span that
// would record nothing (clientHandler).
func (p *Provider) ClientHandler() stats.Handler {
	return &clientHandler{otel: otelgrpc.NewClientHandler(p.grpcOptions()...), p: p}
}

func (p *Provider) grpcOptions() []otelgrpc.Option {
	return []otelgrpc.Option{
		otelgrpc.WithTracerProvider(p.tp),
		otelgrpc.WithPropagators(Propagator()),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()), // metrics are Prometheus's
		otelgrpc.WithFilter(traced),
	}
}

// traced leaves out health checks and reflection: probes, not requests.
func traced(info *stats.RPCTagInfo) bool {
	return !strings.HasPrefix(info.FullMethodName, "/grpc.health.v1.") &&
		!strings.HasPrefix(info.FullMethodName, "/grpc.reflection.")
}
