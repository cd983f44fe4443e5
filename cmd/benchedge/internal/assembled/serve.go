package assembled

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// Settings of the stack: the edge's defaults where it has one.
const (
	maxInFlight   = 1024            // the edge's shed.max_in_flight
	bulkhead      = 100             // concurrent calls to the upstream
	routeDeadline = 5 * time.Second // the edge's upstream timeout
	attempts      = 3               // retry: total attempts on UNAVAILABLE
	limitRate     = 1_000_000       // every token bucket, a second
)

// Handler returns the assembled stack's HTTP handler in front of the
// InventoryService at backend, its access lines written to access, and
// a close func for its client connection.
func Handler(ctx context.Context, backend string, access io.Writer) (http.Handler, func() error, error) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	prop := propagation.TraceContext{}
	reg := prometheus.NewRegistry()
	conn, err := dial(backend, reg, tp, prop)
	if err != nil {
		return nil, nil, err
	}
	mux := runtime.NewServeMux(runtime.WithErrorHandler(problemHandler))
	if err := inventoryv1.RegisterInventoryServiceHandler(ctx, mux, conn); err != nil {
		conn.Close()
		return nil, nil, err
	}
	var h http.Handler = mux
	h = authorize(mux, h)
	h = limits(h)
	h = authenticate(mux, h)
	h = inFlight(mux, h)
	h = accessLog(slog.New(slog.NewJSONHandler(access, nil)), h)
	h = instrument(reg, h)
	h = otelhttp.NewHandler(h, "http.server", otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(prop))
	return h, conn.Close, nil
}

// Serve serves the stack on listen until ctx ends.
func Serve(ctx context.Context, listen, backend string, access io.Writer) error {
	h, closeConn, err := Handler(ctx, backend, access)
	if err != nil {
		return err
	}
	defer closeConn()
	srv := &http.Server{Addr: listen, Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
