package logging

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"google.golang.org/grpc"
)

// BenchmarkUnaryServerInterceptor is a service's access line: one call
// through the logging interceptor, its line written.
func BenchmarkUnaryServerInterceptor(b *testing.B) {
	info := &grpc.UnaryServerInfo{FullMethod: "/portico.inventory.v1.InventoryService/GetItem"}
	ctx := withSpan(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
	handler := func(context.Context, any) (any, error) { return nil, nil }
	in := UnaryServerInterceptor(New(io.Discard, "inventory", slog.LevelInfo))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = in(ctx, nil, info, handler)
	}
}
