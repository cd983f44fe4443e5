// Package procmetrics builds what every Portico process exposes at
// /metrics besides its own series: a registry with the Go runtime, process
// and build-info collectors, and go-grpc-middleware's gRPC server and
// client metrics, their latency histograms carrying the trace id of
// sampled calls as exemplars.
//
// Latency histograms use Buckets (0.5 ms to 30 s) and are native
// histograms as well for a scraper that asks for them.
package procmetrics

import (
	"context"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// Buckets are the latency buckets in seconds, 0.5 ms to 30 s.
var Buckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// NativeBucketFactor makes every latency histogram a native histogram too.
const NativeBucketFactor = 1.1

// NewRegistry returns a registry holding the Go runtime, process and
// build-info collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
	)
	return reg
}

// Exemplar returns the exemplar labels of a call: its trace id when its
// span is sampled (a trace to jump to exists), else nil.
func Exemplar(ctx context.Context) prometheus.Labels {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		return prometheus.Labels{"trace_id": sc.TraceID().String()}
	}
	return nil
}

func histogram() grpcprom.HistogramOption {
	return grpcprom.WithHistogramOpts(&prometheus.HistogramOpts{
		Buckets:                     Buckets,
		NativeHistogramBucketFactor: NativeBucketFactor,
	})
}

// Server is a service's gRPC server metrics (grpc_server_*).
type Server struct{ m *grpcprom.ServerMetrics }

// NewServer registers the gRPC server metrics on reg.
func NewServer(reg prometheus.Registerer) (*Server, error) {
	m := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(histogram()))
	if err := reg.Register(m); err != nil {
		return nil, err
	}
	return &Server{m}, nil
}

// Unary is the server chain's metrics interceptor.
func (s *Server) Unary() grpc.UnaryServerInterceptor {
	return s.m.UnaryServerInterceptor(grpcprom.WithExemplarFromContext(Exemplar))
}

// Init sets every method of srv's registered services, with every code, to
// zero, so a dashboard shows 0 rather than no data.
func (s *Server) Init(srv *grpc.Server) { s.m.InitializeMetrics(srv) }
