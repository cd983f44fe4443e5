package gateway

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/answered"
	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/internal/telemetry"
	"github.com/portico-gateway/portico/internal/traceid"
)

// BenchmarkUpstreamCall is one unary call through the edge's upstream
// connection stack alone, as an edge request makes it: the client chain
// and the connection's stats handlers (the tracer's client handler with
// no exporter, answered, in flight per instance) over loopback, from a
// context holding the request's sampled-out span, its trace id and
// traceparent, and an answered.Record.
func BenchmarkUpstreamCall(b *testing.B) {
	h := newHarness(b, setup{})
	h.inv.getItem = benchKeyboard
	tp, err := telemetry.New(context.Background(), h.cfg.Tracing())
	if err != nil {
		b.Fatal(err)
	}
	ups := NewUpstreams(interceptors.WithLogger(discardLogger()),
		interceptors.WithDialOptions(grpc.WithStatsHandler(tp.ClientHandler())))
	b.Cleanup(func() { ups.Close(); _ = tp.Shutdown(context.Background()) })
	i := slices.IndexFunc(h.cfg.Upstreams, func(u config.UpstreamConfig) bool { return u.Name == "inventory" })
	cc, err := ups.Dialer()(context.Background(), h.cfg.Upstreams[i])
	if err != nil {
		b.Fatal(err)
	}
	client := inventoryv1.NewInventoryServiceClient(cc)
	ctx, span := telemetry.StartRoot(context.Background(), tp, "GET")
	defer span.End()
	ctx, _, _ = traceid.NewSpanContext(ctx, "", span.SpanContext())
	ctx, rec := answered.NewContext(ctx)
	req := &inventoryv1.GetItemRequest{Sku: "kb-1"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.GetItem(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	if !rec.Answered() {
		b.Fatal("record not answered")
	}
}
