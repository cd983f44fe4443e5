package interceptors

import (
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/portico-gateway/portico/interceptors/metrics"
	"github.com/portico-gateway/portico/internal/procmetrics"
)

// Observed returns the options that make a process's client chains
// observable: the resilience metrics in reg (every upstream's series at
// zero from the start), the gRPC client metrics per attempt (every unary
// method of services, with every code, at zero from the start) and, when
// spans is not nil, its client span per attempt. One place adds a
// client's series: here.
func Observed(reg *prometheus.Registry, spans stats.Handler, services []string, upstreams ...string) ([]Option, error) {
	m, err := metrics.New(reg)
	if err != nil {
		return nil, err
	}
	m.Init(upstreams...)
	c, err := procmetrics.NewClient(reg)
	if err != nil {
		return nil, err
	}
	if err := c.Init(services...); err != nil {
		return nil, err
	}
	dial := []grpc.DialOption{c.DialOption()}
	if spans != nil {
		dial = append(dial, grpc.WithStatsHandler(spans))
	}
	return []Option{WithMetrics(m), WithDialOptions(dial...)}, nil
}
