package deadline_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/call"
	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const getItem = inventoryv1.InventoryService_GetItem_FullMethodName

// capture returns an invoker that records the deadline it was called with.
func capture(dl *time.Time, bound *bool) grpc.UnaryInvoker {
	return func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		*dl, _ = ctx.Deadline()
		*bound = call.From(ctx).Owner() == call.Caller
		return nil
	}
}

func TestClientDeadlineIsTheSoonerOfBudgetAndTimeout(t *testing.T) {
	tests := []struct {
		name      string
		caller    time.Duration // 0: no caller deadline
		method    string
		want      time.Duration
		wantBound bool
	}{
		{"no caller deadline: the timeout", 0, getItem, 240 * time.Millisecond, false},
		{"caller has more: the timeout", 5 * time.Second, getItem, 240 * time.Millisecond, false},
		{"caller has less: the caller's", 100 * time.Millisecond, getItem, 100 * time.Millisecond, true},
		{"method timeout replaces the upstream's", 5 * time.Second, "/portico.order.v1.OrderService/CreateOrder", time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				now := time.Now() // the bubble's; it moves only when all wait
				ic := deadline.UnaryClientInterceptor(
					deadline.WithTimeout(240*time.Millisecond),
					deadline.WithMethodTimeout("/portico.order.v1.OrderService/CreateOrder", time.Second))
				ctx := context.Background()
				if tt.caller > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, now.Add(tt.caller))
					defer cancel()
				}
				var got time.Time
				var bound bool
				if err := ic(ctx, tt.method, nil, nil, nil, capture(&got, &bound)); err != nil {
					t.Fatalf("call: %v", err)
				}
				if want := now.Add(tt.want); !got.Equal(want) {
					t.Errorf("deadline = now+%v, want now+%v", got.Sub(now), tt.want)
				}
				if bound != tt.wantBound {
					t.Errorf("the caller owns the deadline = %v, want %v", bound, tt.wantBound)
				}
			})
		})
	}
}

func TestMinBudgetFailsLocally(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		target, dial := stub.Serve(t, &stub.Inventory{GetItemFunc: func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			calls.Add(1)
			return &inventoryv1.Item{}, nil
		}}, nil)
		now := time.Now()
		conn, err := grpc.NewClient(target, dial, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(deadline.UnaryClientInterceptor(
				deadline.WithUpstream("inventory"), deadline.WithTimeout(240*time.Millisecond),
				deadline.WithMinBudget(10*time.Millisecond))))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithDeadline(context.Background(), now.Add(5*time.Millisecond))
		defer cancel()
		_, err = inventoryv1.NewInventoryServiceClient(conn).GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"})
		if got := status.Code(err); got != codes.DeadlineExceeded {
			t.Fatalf("GetItem with 5ms left = %v, want DEADLINE_EXCEEDED", err)
		}
		info := rpcerr.ErrorInfo(err)
		if info.GetReason() != reason.BudgetExhausted || info.GetDomain() != reason.Domain || info.GetMetadata()["upstream"] != "inventory" {
			t.Errorf("ErrorInfo = %v, want %s in %s with upstream=inventory", info, reason.BudgetExhausted, reason.Domain)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("stub saw %d calls, want 0: the call must fail before the network", n)
		}
	})
}

func TestUpstreamTimeoutNamesTheHop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		target, dial := stub.Serve(t, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			<-ctx.Done() // slower than any deadline
			return nil, ctx.Err()
		}}, nil)
		conn, err := grpc.NewClient(target, dial, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(deadline.UnaryClientInterceptor(
				deadline.WithUpstream("inventory"), deadline.WithTimeout(20*time.Millisecond))))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, err = inventoryv1.NewInventoryServiceClient(conn).GetItem(context.Background(), &inventoryv1.GetItemRequest{Sku: "kb-1"})
		if got := status.Code(err); got != codes.DeadlineExceeded {
			t.Fatalf("GetItem = %v, want DEADLINE_EXCEEDED", err)
		}
		info := rpcerr.ErrorInfo(err)
		if info.GetReason() != reason.UpstreamTimeout || info.GetMetadata()["hop"] != "inventory" {
			t.Errorf("ErrorInfo = %v, want %s with hop=inventory", info, reason.UpstreamTimeout)
		}
	})
}

func TestDeeperHopIsKept(t *testing.T) {
	deeper := rpcerr.New(codes.DeadlineExceeded, reason.Domain, reason.UpstreamTimeout, "inventory timed out", "hop", "inventory")
	ic := deadline.UnaryClientInterceptor(deadline.WithUpstream("order"), deadline.WithTimeout(time.Second))
	err := ic(context.Background(), "/portico.order.v1.OrderService/CreateOrder", nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return deeper })
	if hop := rpcerr.ErrorInfo(err).GetMetadata()["hop"]; hop != "inventory" {
		t.Errorf("hop = %q, want the deeper hop %q", hop, "inventory")
	}
}

func TestOtherErrorsPassUnchanged(t *testing.T) {
	want := status.Error(codes.NotFound, "no such item")
	ic := deadline.UnaryClientInterceptor(deadline.WithTimeout(time.Second))
	err := ic(context.Background(), getItem, nil, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return want })
	if err != want {
		t.Errorf("error = %v, want it unchanged: %v", err, want)
	}
}

func TestServerRejectsExpiredWork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		ic := deadline.UnaryServerInterceptor()
		info := &grpc.UnaryServerInfo{FullMethod: getItem}
		var ran bool
		handler := func(context.Context, any) (any, error) { ran = true; return "ok", nil }

		ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Second))
		defer cancel()
		if _, err := ic(ctx, nil, info, handler); err != nil || !ran {
			t.Fatalf("call with 1s left: err %v, handler ran %v; want nil, true", err, ran)
		}
		ran = false
		time.Sleep(2 * time.Second) // the deadline has passed by the time the work starts
		_, err := ic(ctx, nil, info, handler)
		if status.Code(err) != codes.DeadlineExceeded || rpcerr.Reason(err) != reason.BudgetExhausted {
			t.Errorf("call past its deadline = %v, want DEADLINE_EXCEEDED %s", err, reason.BudgetExhausted)
		}
		if ran {
			t.Error("handler ran for work whose deadline had passed")
		}
	})
}

// TestUpstreamDeadlineIsNotCallerBound: a deadline marked as the upstream's
// own budget (the edge's route timeout) is not the caller's, so running out
// of it counts against the upstream.
func TestUpstreamDeadlineIsNotCallerBound(t *testing.T) {
	tests := []struct {
		name   string
		mark   bool
		wantCB bool
	}{
		{"caller's shorter deadline", false, true},
		{"route's own deadline", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if tt.mark {
				ctx = deadline.WithUpstreamDeadline(ctx)
			}
			var got bool
			ic := deadline.UnaryClientInterceptor(deadline.WithTimeout(time.Minute))
			_ = ic(ctx, "/s/M", nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				got = call.From(ctx).Owner() == call.Caller
				return nil
			})
			if got != tt.wantCB {
				t.Errorf("the caller owns the deadline = %v, want %v", got, tt.wantCB)
			}
		})
	}
}
