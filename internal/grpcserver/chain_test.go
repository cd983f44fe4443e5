package grpcserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/interceptors/faults"
)

func names(layers []Layer) string {
	var n []string
	for _, s := range layers {
		n = append(n, s.Name)
	}
	return strings.Join(n, " -> ")
}

// ExampleChain prints the server chain of a service process, outermost
// first, without and with fault injection.
func ExampleChain() {
	l := slog.New(slog.DiscardHandler)
	fmt.Println(names(Chain(Config{Logger: l})), "-> handler")
	rules, _ := faults.Parse("delay=1ms")
	fmt.Println(names(Chain(Config{Logger: l, Faults: rules})), "-> handler")
	// Output:
	// trace -> log -> deadline -> identity -> recover -> handler
	// trace -> log -> deadline -> identity -> faults -> recover -> handler
}

// TestChainRefusesExpiredWork checks the deadline layer is part of every
// service's own chain: a call whose deadline has passed when it reaches
// the server is refused before the handler runs.
func TestChainRefusesExpiredWork(t *testing.T) {
	layers := Chain(Config{Logger: slog.New(slog.DiscardHandler)})
	ran := false
	var h grpc.UnaryHandler = func(context.Context, any) (any, error) { ran = true; return nil, nil }
	for i := len(layers) - 1; i >= 0; i-- { // wrap innermost first
		next, ic := h, layers[i].Unary
		h = func(ctx context.Context, req any) (any, error) {
			return ic(ctx, req, &grpc.UnaryServerInfo{FullMethod: "/a.B/C"}, next)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := h(ctx, nil)
	if status.Code(err) != codes.DeadlineExceeded || ran {
		t.Fatalf("expired call = %v, handler ran %v; want DEADLINE_EXCEEDED before the handler", err, ran)
	}
}
