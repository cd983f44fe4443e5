package assembled

import (
	"context"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/retry"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/timeout"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// dial opens the client connection with the interceptor chain of the
// package doc.
func dial(backend string, reg *prometheus.Registry, tp trace.TracerProvider, prop propagation.TextMapPropagator) (*grpc.ClientConn, error) {
	metrics := grpcprom.NewClientMetrics(grpcprom.WithClientHandlingTimeHistogram())
	reg.MustRegister(metrics)
	return grpc.NewClient(backend,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(prop))),
		grpc.WithChainUnaryInterceptor(
			timeout.UnaryClientInterceptor(routeDeadline),
			retry.UnaryClientInterceptor(retry.WithMax(attempts), retry.WithCodes(codes.Unavailable),
				retry.WithBackoff(retry.BackoffExponentialWithJitter(25*time.Millisecond, 0.2))),
			metrics.UnaryClientInterceptor(),
			breaker(),
			bulkheadInterceptor(bulkhead),
		))
}

// breaker is a sony/gobreaker/v2 breaker as a unary interceptor: it opens
// after 5 consecutive failures the upstream is to blame for.
func breaker() grpc.UnaryClientInterceptor {
	cb := gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:    "inventory",
		Timeout: 10 * time.Second,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= 5
		},
	})
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		done, err := cb.Allow()
		if err != nil {
			return status.Error(codes.Unavailable, "circuit open: "+err.Error())
		}
		err = invoker(ctx, method, req, reply, cc, opts...)
		switch status.Code(err) {
		case codes.Unavailable, codes.DeadlineExceeded, codes.Internal, codes.Unknown:
			done(err)
		default:
			done(nil)
		}
		return err
	}
}

// bulkheadInterceptor caps the calls in flight to the upstream at n:
// RESOURCE_EXHAUSTED when full.
func bulkheadInterceptor(n int) grpc.UnaryClientInterceptor {
	sem := make(chan struct{}, n)
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		select {
		case sem <- struct{}{}:
		default:
			return status.Error(codes.ResourceExhausted, "bulkhead full")
		}
		defer func() { <-sem }()
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
