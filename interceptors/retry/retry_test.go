package retry_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/interceptors/retry"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// upstream answers each RPC with the next error of its script, then OK, and
// counts attempts.
type upstream struct {
	mu       sync.Mutex
	script   []error
	attempts int
	retryMD  []string // x-retry-attempt of each attempt
}

func (u *upstream) next(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.attempts++
	u.retryMD = append(u.retryMD, metadata.ValueFromIncomingContext(ctx, retry.AttemptMetadataKey)...)
	if len(u.script) == 0 {
		return nil
	}
	err := u.script[0]
	if len(u.script) > 1 {
		u.script = u.script[1:]
	}
	return err
}

func (u *upstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.attempts
}

type clients struct {
	inv   inventoryv1.InventoryServiceClient
	order orderv1.OrderServiceClient
}

// dial serves u over bufconn and dials it through the retry interceptor,
// with full jitter pinned. Tests call it inside a synctest bubble, so
// backoff waits take no real time and are exact.
func dial(t *testing.T, u *upstream, opts ...retry.Option) clients {
	t.Helper()
	target, dialer := stub.Serve(t,
		&stub.Inventory{
			GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
				return &inventoryv1.Item{}, u.next(ctx)
			},
			CreateItemFunc: func(ctx context.Context, _ *inventoryv1.CreateItemRequest) (*inventoryv1.Item, error) {
				return &inventoryv1.Item{}, u.next(ctx)
			},
		},
		&stub.Order{CreateOrderFunc: func(ctx context.Context, _ *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
			return &orderv1.Order{}, u.next(ctx)
		}})
	opts = append([]retry.Option{retry.WithRand(func() float64 { return 0.5 })}, opts...)
	conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(retry.UnaryClientInterceptor(opts...)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return clients{inventoryv1.NewInventoryServiceClient(conn), orderv1.NewOrderServiceClient(conn)}
}

var unavailable = status.Error(codes.Unavailable, "connection refused")

func TestRetriesOnlyWhatTheProtoCallsSafe(t *testing.T) {
	getItem := func(c clients, ctx context.Context) error {
		_, err := c.inv.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"})
		return err
	}
	createItem := func(c clients, ctx context.Context) error {
		_, err := c.inv.CreateItem(ctx, &inventoryv1.CreateItemRequest{})
		return err
	}
	createOrder := func(c clients, ctx context.Context) error {
		_, err := c.order.CreateOrder(ctx, &orderv1.CreateOrderRequest{})
		return err
	}
	withKey := func(ctx context.Context) context.Context { return callmeta.WithIdempotencyKey(ctx, "k-1") }
	tests := []struct {
		name     string
		call     func(clients, context.Context) error
		ctx      func(context.Context) context.Context
		attempts int
	}{
		{"GetItem is NO_SIDE_EFFECTS: retried", getItem, nil, 3},
		{"CreateItem has no idempotency_level: not retried", createItem, nil, 1},
		{"CreateItem with an idempotency key: retried", createItem, withKey, 3},
		// order.proto declares CreateOrder IDEMPOTENT (the server requires
		// the key and refuses keyless calls before doing anything), so the
		// schema makes it retryable with or without a key.
		{"CreateOrder is IDEMPOTENT in order.proto: retried", createOrder, nil, 3},
		{"CreateOrder with an idempotency key: retried", createOrder, withKey, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				u := &upstream{script: []error{unavailable, unavailable, nil}}
				c := dial(t, u)
				ctx := context.Background()
				if tt.ctx != nil {
					ctx = tt.ctx(ctx)
				}
				err := tt.call(c, ctx)
				if got := u.count(); got != tt.attempts {
					t.Errorf("attempts = %d, want %d (err %v)", got, tt.attempts, err)
				}
			})
		})
	}
}

func TestRetriesOnlyTransientFailures(t *testing.T) {
	withRetryInfo := rpcerr.WithRetryInfo(status.Error(codes.ResourceExhausted, "slow down"), 40*time.Millisecond)
	local := func(r string) error { return rpcerr.New(codes.Unavailable, reason.Domain, r, "local fast-fail") }
	tests := []struct {
		name     string
		err      error
		attempts int
	}{
		{"UNAVAILABLE", unavailable, 2},
		{"RESOURCE_EXHAUSTED with RetryInfo", withRetryInfo, 2},
		{"RESOURCE_EXHAUSTED without RetryInfo", status.Error(codes.ResourceExhausted, "quota"), 1},
		{"INTERNAL", status.Error(codes.Internal, "boom"), 1},
		{"INVALID_ARGUMENT", status.Error(codes.InvalidArgument, "bad sku"), 1},
		{"DEADLINE_EXCEEDED from the server", status.Error(codes.DeadlineExceeded, "downstream slow"), 1},
		{"UNAVAILABLE CIRCUIT_OPEN", local(reason.CircuitOpen), 1},
		{"UNAVAILABLE OVERLOADED", local(reason.Overloaded), 1},
		{"UNAVAILABLE DEADLINE_BUDGET_EXHAUSTED", local(reason.BudgetExhausted), 1},
		{"UNAVAILABLE a live upstream sent on purpose", rpcerr.New(codes.Unavailable, "order.portico.dev", "INVENTORY_UNAVAILABLE", "x"), 1},
		{"UNAVAILABLE injected fault", rpcerr.New(codes.Unavailable, reason.Domain, reason.FaultInjected, "drill"), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				u := &upstream{script: []error{tt.err, nil}}
				c := dial(t, u)
				_, _ = c.inv.GetItem(context.Background(), &inventoryv1.GetItemRequest{})
				if got := u.count(); got != tt.attempts {
					t.Errorf("attempts after %v = %d, want %d", tt.err, got, tt.attempts)
				}
			})
		})
	}
}

func TestPushbackSetsTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{script: []error{rpcerr.WithRetryInfo(status.Error(codes.ResourceExhausted, "slow down"), 900*time.Millisecond), nil}}
		c := dial(t, u)
		start := time.Now()
		if _, err := c.inv.GetItem(context.Background(), &inventoryv1.GetItemRequest{}); err != nil {
			t.Fatalf("GetItem: %v", err)
		}
		if waited := time.Now().Sub(start); waited != 900*time.Millisecond {
			t.Errorf("waited %v before the retry, want the server's 900ms", waited)
		}
	})
}

func TestMaxAttemptsCountsEveryAttempt(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		synctest.Test(t, func(t *testing.T) {
			u := &upstream{script: []error{unavailable}} // fails for ever
			c := dial(t, u, retry.WithMaxAttempts(n))
			_, err := c.inv.GetItem(context.Background(), &inventoryv1.GetItemRequest{})
			if status.Code(err) != codes.Unavailable {
				t.Errorf("WithMaxAttempts(%d): err = %v, want the last UNAVAILABLE", n, err)
			}
			if got := u.count(); got != n {
				t.Errorf("WithMaxAttempts(%d): attempts = %d, want %d", n, got, n)
			}
		})
	}
}

// TestBackoffFollowsGRFCA6: the wait before retry n is
// rand*min(initial*2^(n-1), max); the bubble's clock makes it exact.
func TestBackoffFollowsGRFCA6(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		u := &upstream{script: []error{unavailable}} // fails for ever
		target, dialer := stub.Serve(t, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
			return nil, u.next(ctx)
		}}, nil)
		conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(retry.UnaryClientInterceptor(retry.WithMaxAttempts(5),
				retry.WithBackoff(100*time.Millisecond, 300*time.Millisecond), retry.WithRand(func() float64 { return 0.5 }))))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, _ = inventoryv1.NewInventoryServiceClient(conn).GetItem(context.Background(), &inventoryv1.GetItemRequest{})
		// Ceilings 100ms, 200ms, then the 300ms max twice; half of each.
		want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 150 * time.Millisecond}
		mu.Lock()
		defer mu.Unlock()
		if len(at) != len(want)+1 {
			t.Fatalf("attempts = %d, want %d", len(at), len(want)+1)
		}
		for i, w := range want {
			if got := at[i+1].Sub(at[i]); got != w {
				t.Errorf("wait before retry %d = %v, want %v", i+1, got, w)
			}
		}
	})
}

func TestRetriesCarryTheAttemptNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{script: []error{unavailable, unavailable, nil}}
		c := dial(t, u)
		if _, err := c.inv.GetItem(context.Background(), &inventoryv1.GetItemRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := u.retryMD; len(got) != 2 || got[0] != "1" || got[1] != "2" {
			t.Errorf("x-retry-attempt values = %q, want [1 2] (none on the first attempt)", got)
		}
	})
}

func TestNoRetryPastTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{script: []error{unavailable, nil}}
		// Backoff before the first retry is rand*200ms = 100ms; the caller has 80ms.
		c := dial(t, u, retry.WithBackoff(200*time.Millisecond, time.Second))
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(80*time.Millisecond))
		defer cancel()
		start := time.Now()
		_, err := c.inv.GetItem(ctx, &inventoryv1.GetItemRequest{})
		if status.Code(err) != codes.Unavailable {
			t.Errorf("err = %v, want the first attempt's UNAVAILABLE at once", err)
		}
		if got := u.count(); got != 1 {
			t.Errorf("attempts = %d, want 1: the retry would start after the deadline", got)
		}
		if waited := time.Now().Sub(start); waited != 0 {
			t.Errorf("waited %v, want 0", waited)
		}
	})
}

// TestAttemptTimeoutIsRetried: a DEADLINE_EXCEEDED is the attempt's own
// timeout, and retried, only when the attempt's deadline has run out while
// the caller still has time. A server that answers DEADLINE_EXCEEDED before
// then (its downstream timed out, or it had too little budget to start)
// gave an answer, and it is not retried. grpc-timeout is rounded up, so a
// server never gives up before the client's attempt deadline. No slack
// constant decides it.
func TestAttemptTimeoutIsRetried(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	early := func(context.Context) error { return status.Error(codes.DeadlineExceeded, "downstream timed out") }
	tests := []struct {
		name         string
		first        func(context.Context) error // the first attempt's handler
		caller       time.Duration
		wantAttempts int32
		wantCode     codes.Code
	}{
		{"first attempt hangs past its 20ms", hang, 5 * time.Second, 2, codes.OK},
		{"server answers DEADLINE_EXCEEDED at once", early, 5 * time.Second, 1, codes.DeadlineExceeded},
		{"caller's deadline is the attempt's", early, 20 * time.Millisecond, 1, codes.DeadlineExceeded},
		{"caller's deadline is sooner", hang, 10 * time.Millisecond, 1, codes.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var attempts atomic.Int32
				target, dialer := stub.Serve(t, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
					if attempts.Add(1) == 1 {
						return nil, tt.first(ctx)
					}
					return &inventoryv1.Item{}, nil
				}}, nil)
				conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()),
					grpc.WithUnaryInterceptor(retry.UnaryClientInterceptor(
						retry.WithAttemptTimeout(20*time.Millisecond), retry.WithBackoff(time.Millisecond, time.Millisecond))))
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				ctx, cancel := context.WithTimeout(context.Background(), tt.caller)
				defer cancel()
				_, err = inventoryv1.NewInventoryServiceClient(conn).GetItem(ctx, &inventoryv1.GetItemRequest{})
				if status.Code(err) != tt.wantCode {
					t.Errorf("GetItem = %v, want %v", err, tt.wantCode)
				}
				if got := attempts.Load(); got != tt.wantAttempts {
					t.Errorf("attempts = %d, want %d", got, tt.wantAttempts)
				}
			})
		})
	}
}

type counter struct{ retried, exhausted atomic.Int64 }

func (c *counter) Retried(string)              { c.retried.Add(1) }
func (c *counter) RetryBudgetExhausted(string) { c.exhausted.Add(1) }

func TestBudgetCapsAFailingUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			calls  = 200
			ratio  = 0.2
			window = 10 * time.Second
			floor  = 3.0 // retries per second of window
		)
		u := &upstream{script: []error{unavailable}} // every attempt fails
		obs := &counter{}
		c := dial(t, u, retry.WithMaxAttempts(5), retry.WithBudget(ratio, window, floor),
			retry.WithBackoff(time.Nanosecond, time.Nanosecond), retry.WithObserver(obs))
		for range calls {
			_, _ = c.inv.GetItem(context.Background(), &inventoryv1.GetItemRequest{})
		}
		limit := int(calls*(1+ratio) + floor*window.Seconds())
		if got := u.count(); got > limit {
			t.Errorf("%d calls made %d attempts, want at most %d (1+%v per call + %v floor)", calls, got, limit, ratio, floor*window.Seconds())
		}
		if got := obs.retried.Load(); int(got) != u.count()-calls {
			t.Errorf("Retried reported %d times, want %d", got, u.count()-calls)
		}
		if obs.exhausted.Load() == 0 {
			t.Error("RetryBudgetExhausted never reported")
		}
		t.Logf("%d calls, %d attempts (limit %d), %d retries refused", calls, u.count(), limit, obs.exhausted.Load())
	})
}

func TestBudgetRefillsAsTheWindowSlides(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		u := &upstream{script: []error{unavailable}}
		obs := &counter{}
		// No floor, ratio 0.5: two calls buy one retry.
		c := dial(t, u, retry.WithMaxAttempts(2), retry.WithBudget(0.5, 10*time.Second, -1),
			retry.WithBackoff(time.Nanosecond, time.Nanosecond), retry.WithObserver(obs))
		call := func() { _, _ = c.inv.GetItem(context.Background(), &inventoryv1.GetItemRequest{}) }
		call() // 1 call: 0.5 retries allowed, refused
		call() // 2 calls: 1 retry allowed, spent
		call() // 3 calls: 1.5 allowed, 1 spent: refused
		if got := obs.retried.Load(); got != 1 {
			t.Fatalf("retries = %d, want 1", got)
		}
		time.Sleep(11 * time.Second) // everything slides out
		call()
		call()
		if got := obs.retried.Load(); got != 2 {
			t.Errorf("retries after the window slid = %d, want 2", got)
		}
	})
}
