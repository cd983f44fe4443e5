package retry_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/retry"
	"github.com/portico-gateway/portico/internal/callmeta"
)

// keyedOrders is an order service that keeps idempotency keys as the real
// one does: the first call with a key creates the order, a later one
// answers from it with the replay marker. Each attempt then fails or not
// as its script says, after the create (a lost answer).
type keyedOrders struct {
	mu     sync.Mutex
	seen   map[string]bool
	script []error
}

func (s *keyedOrders) create(ctx context.Context, _ *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := callmeta.IdempotencyKeyFromIncoming(ctx)
	if s.seen[key] {
		// Sent at once, so the marker reaches the client also when this
		// attempt then fails.
		_ = grpc.SendHeader(ctx, metadata.Pairs(callmeta.ReplayedKey, "true"))
	}
	s.seen[key] = true
	var err error
	if len(s.script) > 0 {
		err, s.script = s.script[0], s.script[1:]
	}
	return &orderv1.Order{}, err
}

// The replay marker must mean the client's own earlier request: when the
// edge's retry meets the order its own first attempt created, the answer
// is not a replay to the client.
func TestRetriedCallIsNotReportedAsReplay(t *testing.T) {
	tests := []struct {
		name         string
		earlierCall  bool    // the client sent this key before
		script       []error // per attempt
		wantReplayed bool
	}{
		{"first attempt created the order and lost its answer; the retry found it", false, []error{unavailable, nil}, false},
		{"two attempts created or found it and lost their answers; the third found it", false, []error{unavailable, unavailable, nil}, false},
		{"no retry, the client's own earlier request", true, nil, true},
		{"the client's own earlier request, and the first attempt said so before failing", true, []error{unavailable, nil}, true},
		{"a new key, no retry", false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := &keyedOrders{seen: map[string]bool{}, script: tt.script}
				if tt.earlierCall {
					srv.seen["k-1"] = true
				}
				target, dialer := stub.Serve(t, nil, &stub.Order{CreateOrderFunc: srv.create})
				conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()),
					grpc.WithUnaryInterceptor(retry.UnaryClientInterceptor(retry.WithRand(func() float64 { return 0.5 }))))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				var header metadata.MD
				ctx := callmeta.WithIdempotencyKey(context.Background(), "k-1")
				if _, err := orderv1.NewOrderServiceClient(conn).CreateOrder(ctx, &orderv1.CreateOrderRequest{}, grpc.Header(&header)); err != nil {
					t.Fatalf("CreateOrder: %v", err)
				}
				if got := len(header.Get(callmeta.ReplayedKey)) > 0; got != tt.wantReplayed {
					t.Errorf("answer carries %s = %v (header %v), want %v", callmeta.ReplayedKey, got, header, tt.wantReplayed)
				}
			})
		})
	}
}
