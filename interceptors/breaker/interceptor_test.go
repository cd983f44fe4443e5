package breaker_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/deadline"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type observer struct {
	mu  sync.Mutex
	trs []string
}

func (o *observer) StateChange(name string, from, to breaker.State) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.trs = append(o.trs, name+": "+from.String()+" -> "+to.String())
}

// serve dials a GetItem stub through the breaker interceptor; handle decides
// each call's answer.
func serve(t *testing.T, handle func(context.Context) error, opts ...breaker.Option) (inventoryv1.InventoryServiceClient, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	target, dialer := stub.Serve(t, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		calls.Add(1)
		return &inventoryv1.Item{}, handle(ctx)
	}}, nil)
	ic, err := breaker.UnaryClientInterceptor(append([]breaker.Option{breaker.WithUpstream("inventory")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUnaryInterceptor(ic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return inventoryv1.NewInventoryServiceClient(conn), &calls
}

func getItem(c inventoryv1.InventoryServiceClient, ctx context.Context) error {
	_, err := c.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"})
	return err
}

func TestOpenCircuitFailsFast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &observer{}
		c, calls := serve(t, func(context.Context) error { return unavailable },
			breaker.WithObserver(obs))
		ctx := context.Background()
		for range 2 {
			if err := getItem(c, ctx); status.Code(err) != codes.Unavailable || rpcerr.Reason(err) != "" {
				t.Fatalf("GetItem = %v, want the upstream's own UNAVAILABLE", err)
			}
		}
		err := getItem(c, ctx)
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("third GetItem = %v, want UNAVAILABLE", err)
		}
		info := rpcerr.ErrorInfo(err)
		if info.GetReason() != reason.CircuitOpen || info.GetMetadata()["upstream"] != "inventory" || info.GetMetadata()["retryAfterMs"] != "800" {
			t.Errorf("ErrorInfo = %v, want CIRCUIT_OPEN upstream=inventory retryAfterMs=800", info)
		}
		var retryInfo *errdetails.RetryInfo
		for _, d := range status.Convert(err).Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				retryInfo = ri
			}
		}
		if got := retryInfo.GetRetryDelay().AsDuration(); got != 800*time.Millisecond {
			t.Errorf("RetryInfo delay = %v, want 800ms", got)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("stub saw %d calls, want 2: the open circuit must not call it", n)
		}
		time.Sleep(300 * time.Millisecond)
		if got := rpcerr.ErrorInfo(getItem(c, ctx)).GetMetadata()["retryAfterMs"]; got != "500" {
			t.Errorf("retryAfterMs 300ms later = %s, want 500", got)
		}
		if len(obs.trs) != 1 || obs.trs[0] != "inventory: closed -> open" {
			t.Errorf("observed %q, want [inventory: closed -> open]", obs.trs)
		}
	})
}

func TestHalfOpenAdmitsOnlyMaxRequestsConcurrentProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var healthy atomic.Bool
		release := make(chan struct{})
		entered := make(chan struct{}, 8)
		c, calls := serve(t, func(ctx context.Context) error {
			if !healthy.Load() {
				return unavailable
			}
			entered <- struct{}{}
			<-release
			return nil
		}, breaker.WithSettings(breaker.Settings{MaxRequests: 2}))
		ctx := context.Background()
		_ = getItem(c, ctx)
		_ = getItem(c, ctx)
		time.Sleep(breaker.DefaultCoolDown)
		healthy.Store(true)
		calls.Store(0)

		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Go(func() { errs <- getItem(c, ctx) })
		}
		for range 2 {
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("probes did not reach the upstream")
			}
		}
		// Both slots are taken: a third call is refused without reaching it.
		if err := getItem(c, ctx); rpcerr.Reason(err) != reason.CircuitOpen {
			t.Errorf("third concurrent call = %v, want CIRCUIT_OPEN", err)
		}
		close(release)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("probe = %v, want OK", err)
			}
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("upstream saw %d probes, want 2", n)
		}
		if err := getItem(c, ctx); err != nil {
			t.Errorf("call after 2 good probes = %v, want OK (closed)", err)
		}
	})
}

func TestCallerCausedOutcomesDoNotCount(t *testing.T) {
	tests := []struct {
		name   string
		handle func(context.Context) error
		ctx    func(t *testing.T) (context.Context, context.CancelFunc)
		wrap   bool // behind the deadline interceptor
	}{
		{
			name:   "client errors",
			handle: func(context.Context) error { return status.Error(codes.InvalidArgument, "bad sku") },
			ctx: func(*testing.T) (context.Context, context.CancelFunc) {
				return context.WithCancel(context.Background())
			},
		},
		{
			name: "the caller cancels",
			handle: func(ctx context.Context) error {
				<-ctx.Done()
				return ctx.Err()
			},
			ctx: func(*testing.T) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(10*time.Millisecond, cancel)
				return ctx, cancel
			},
		},
		{
			name: "the caller's deadline is shorter than the upstream's timeout",
			handle: func(ctx context.Context) error {
				<-ctx.Done()
				return ctx.Err()
			},
			ctx: func(*testing.T) (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 20*time.Millisecond)
			},
			wrap: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ic, err := breaker.UnaryClientInterceptor(breaker.WithUpstream("inventory"))
				if err != nil {
					t.Fatal(err)
				}
				var calls atomic.Int32
				target, dialer := stub.Serve(t, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
					calls.Add(1)
					return &inventoryv1.Item{}, tt.handle(ctx)
				}}, nil)
				chain := []grpc.UnaryClientInterceptor{ic}
				if tt.wrap {
					chain = []grpc.UnaryClientInterceptor{deadline.UnaryClientInterceptor(deadline.WithTimeout(time.Minute)), ic}
				}
				conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithChainUnaryInterceptor(chain...))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				c := inventoryv1.NewInventoryServiceClient(conn)
				for range 3 {
					ctx, cancel := tt.ctx(t)
					_ = getItem(c, ctx)
					cancel()
				}
				if n := calls.Load(); n != 3 {
					t.Errorf("upstream saw %d calls, want 3: the circuit must stay closed", n)
				}
			})
		})
	}
}

func TestSlowCallsTripTheCircuit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, calls := serve(t, func(context.Context) error {
			time.Sleep(300 * time.Millisecond) // the upstream takes 300ms, then succeeds
			return nil
		}, breaker.WithSettings(breaker.Settings{SlowCallThreshold: 200 * time.Millisecond}))
		ctx := context.Background()
		_ = getItem(c, ctx)
		_ = getItem(c, ctx)
		if err := getItem(c, ctx); rpcerr.Reason(err) != reason.CircuitOpen {
			t.Errorf("after 2 slow calls = %v, want CIRCUIT_OPEN", err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("upstream saw %d calls, want 2", n)
		}
	})
}

func TestPerMethodBreakers(t *testing.T) {
	ic, err := breaker.UnaryClientInterceptor(breaker.WithUpstream("inventory"),
		breaker.WithMethods(inventoryv1.InventoryService_CreateItem_FullMethodName))
	if err != nil {
		t.Fatal(err)
	}
	fail := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
		return unavailable
	}
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	create := inventoryv1.InventoryService_CreateItem_FullMethodName
	get := inventoryv1.InventoryService_GetItem_FullMethodName
	ctx := context.Background()
	_ = ic(ctx, create, nil, nil, nil, fail)
	_ = ic(ctx, create, nil, nil, nil, fail)
	if err := ic(ctx, create, nil, nil, nil, ok); rpcerr.Reason(err) != reason.CircuitOpen {
		t.Errorf("CreateItem after 2 failures = %v, want CIRCUIT_OPEN", err)
	}
	if err := ic(ctx, get, nil, nil, nil, ok); err != nil {
		t.Errorf("GetItem = %v, want OK: its breaker is the upstream's, not CreateItem's", err)
	}
}
