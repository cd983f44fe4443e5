package breaker_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// watch reads one WatchOrder stream to its end and returns the messages
// received and the final error (nil at a clean end).
func watch(c orderv1.OrderServiceClient) (int, error) {
	st, err := c.WatchOrder(context.Background(), &orderv1.WatchOrderRequest{Id: "o-1"})
	if err != nil {
		return 0, err
	}
	for n := 0; ; n++ {
		if _, err := st.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
}

// dialWatch dials a WatchOrder stub (nil: no server at all, an upstream
// that is down) through one set of breakers, for streams and unary calls.
func dialWatch(t *testing.T, fn func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error, obs *observer) orderv1.OrderServiceClient {
	t.Helper()
	n := stub.NewNetwork()
	target := "passthrough:///bufnet"
	if fn != nil {
		n.Serve(t, "bufnet", nil, &stub.Order{WatchOrderFunc: fn})
	}
	unary, stream, err := breaker.ClientInterceptors(breaker.WithUpstream("order"), breaker.WithObserver(obs))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(target, n.DialOption(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(unary), grpc.WithStreamInterceptor(stream))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return orderv1.NewOrderServiceClient(conn)
}

func TestStreamSetupsCount(t *testing.T) {
	unavail := status.Error(codes.Unavailable, "down")
	tests := []struct {
		name     string
		fn       func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error
		streams  int
		wantOpen bool
	}{
		{"fails before the first message", func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error {
			return unavail
		}, 2, true},
		{"upstream down", nil, 2, true},
		{"fails after the first message", func(_ *orderv1.WatchOrderRequest, st orderv1.OrderService_WatchOrderServer) error {
			_ = st.Send(&orderv1.Order{Id: "o-1"})
			return unavail
		}, 5, false},
		{"clean end with no message", func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error {
			return nil
		}, 5, false},
		{"not a failure by the unary rules", func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error {
			return status.Error(codes.NotFound, "no order")
		}, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				fn := tt.fn
				if fn != nil {
					fn = func(r *orderv1.WatchOrderRequest, st orderv1.OrderService_WatchOrderServer) error {
						calls.Add(1)
						return tt.fn(r, st)
					}
				}
				obs := &observer{}
				c := dialWatch(t, fn, obs)
				for range tt.streams {
					if _, err := watch(c); rpcerr.Reason(err) == reason.CircuitOpen {
						t.Fatalf("stream refused before the breaker should open: %v", err)
					}
				}
				before := calls.Load()
				_, err := watch(c)
				refused := rpcerr.Reason(err) == reason.CircuitOpen
				if refused != tt.wantOpen {
					t.Fatalf("next stream err = %v; refused %v, want %v (transitions %v)", err, refused, tt.wantOpen, obs.trs)
				}
				if refused && calls.Load() != before {
					t.Error("the refused stream reached the upstream")
				}
			})
		})
	}
}

// TestStreamAndUnaryShareBreaker: failed stream setups open the breaker
// unary calls go through too.
func TestStreamAndUnaryShareBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := dialWatch(t, func(*orderv1.WatchOrderRequest, orderv1.OrderService_WatchOrderServer) error {
			return status.Error(codes.Unavailable, "down")
		}, &observer{})
		for range 2 {
			_, _ = watch(c)
		}
		_, err := c.GetOrder(context.Background(), &orderv1.GetOrderRequest{Id: "o-1"})
		if rpcerr.Reason(err) != reason.CircuitOpen || status.Code(err) != codes.Unavailable {
			t.Errorf("GetOrder after two failed streams = %v, want UNAVAILABLE CIRCUIT_OPEN", err)
		}
	})
}

// TestStreamAbandonedIsExcluded: a stream whose caller cancels before
// the first message is Excluded, so it holds no half-open probe for good.
func TestStreamAbandonedIsExcluded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &observer{}
		c := dialWatch(t, func(_ *orderv1.WatchOrderRequest, st orderv1.OrderService_WatchOrderServer) error {
			<-st.Context().Done()
			return nil
		}, obs)
		for range 3 {
			ctx, cancel := context.WithCancel(context.Background())
			if _, err := c.WatchOrder(ctx, &orderv1.WatchOrderRequest{Id: "o-1"}); err != nil {
				t.Fatal(err)
			}
			cancel()
			synctest.Wait()
		}
		if len(obs.trs) != 0 {
			t.Errorf("abandoned streams moved the breaker: %v", obs.trs)
		}
	})
}
