package interceptors_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = interceptors.WithLogger(slog.New(slog.DiscardHandler))

// recorder is a Metrics that keeps counts.
type recorder struct {
	retried, exhausted, overloaded, ejected atomic.Int64
	inFlightEvents                          atomic.Int64
	mu                                      sync.Mutex
	transitions                             []string
}

func (r *recorder) Retried(string)              { r.retried.Add(1) }
func (r *recorder) RetryBudgetExhausted(string) { r.exhausted.Add(1) }
func (r *recorder) Overloaded(string)           { r.overloaded.Add(1) }
func (r *recorder) InFlight(string, int)        { r.inFlightEvents.Add(1) }
func (r *recorder) Ejected(string, string)      { r.ejected.Add(1) }
func (r *recorder) Unejected(string, string)    {}
func (r *recorder) StateChange(name string, from, to breaker.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.transitions = append(r.transitions, from.String()+"->"+to.String())
}

func (r *recorder) states() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.transitions...)
}

// A slow upstream: the order service takes 350ms, the gateway waits
// 240ms. Two 504s (UPSTREAM_TIMEOUT, hop=order), then the circuit opens and
// the third call fails fast with CIRCUIT_OPEN; after 800ms a probe closes it.
func TestOrderServiceTooSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var slow atomic.Bool
		slow.Store(true)
		var calls atomic.Int32
		target, dial := stub.Serve(t, nil, &stub.Order{CreateOrderFunc: func(ctx context.Context, _ *orderv1.CreateOrderRequest) (*orderv1.Order, error) {
			calls.Add(1)
			if slow.Load() {
				<-ctx.Done() // 350ms would be too late anyway
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			return &orderv1.Order{Id: "ord-0001"}, nil
		}})
		rec := &recorder{}
		up, err := interceptors.NewUpstream(target, interceptors.WithConfig(interceptors.Defaults()),
			interceptors.WithUpstream("order"), interceptors.WithMetrics(rec),
			interceptors.WithDialOptions(dial), quiet)
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		client := orderv1.NewOrderServiceClient(up.Conn())
		ctx := callmeta.WithIdempotencyKey(context.Background(), "checkout-42")
		create := func() error {
			_, err := client.CreateOrder(ctx, &orderv1.CreateOrderRequest{})
			return err
		}

		for i := range 2 {
			err := create()
			info := rpcerr.ErrorInfo(err)
			if status.Code(err) != codes.DeadlineExceeded || info.GetReason() != reason.UpstreamTimeout || info.GetMetadata()["hop"] != "order" {
				t.Fatalf("call %d = %v (%v), want DEADLINE_EXCEEDED UPSTREAM_TIMEOUT hop=order", i+1, err, info)
			}
		}
		err = create()
		info := rpcerr.ErrorInfo(err)
		if status.Code(err) != codes.Unavailable || info.GetReason() != reason.CircuitOpen || info.GetMetadata()["retryAfterMs"] != "800" {
			t.Fatalf("third call = %v (%v), want UNAVAILABLE CIRCUIT_OPEN retryAfterMs=800", err, info)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("order service saw %d calls, want 2 (timeouts are not retried; the open circuit sends none)", n)
		}

		slow.Store(false)
		time.Sleep(800 * time.Millisecond) // the cool-down, in the bubble's time
		if err := create(); err != nil {
			t.Fatalf("probe after the cool-down = %v, want OK", err)
		}
		want := []string{"closed->open", "open->half-open", "half-open->closed"}
		if got := rec.states(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("transitions = %q, want %q", got, want)
		}
	})
}

type inventory struct {
	mu     sync.Mutex
	script []error // answers in order; the last one repeats
	calls  int
	block  chan struct{} // if set, calls wait on it first
}

func (s *inventory) getItem(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	s.mu.Lock()
	s.calls++
	var err error
	if len(s.script) > 0 {
		err = s.script[0]
		if len(s.script) > 1 {
			s.script = s.script[1:]
		}
	}
	block := s.block
	s.mu.Unlock()
	if block != nil {
		<-block
	}
	return &inventoryv1.Item{Sku: "kb-1"}, err
}

func (s *inventory) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func dialInventory(t *testing.T, s *inventory, opts ...interceptors.Option) inventoryv1.InventoryServiceClient {
	t.Helper()
	target, dial := stub.Serve(t, &stub.Inventory{GetItemFunc: s.getItem}, nil)
	conn, err := interceptors.Dial(target, append([]interceptors.Option{
		interceptors.WithUpstream("inventory"), interceptors.WithDialOptions(dial), quiet,
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return inventoryv1.NewInventoryServiceClient(conn)
}

func getItem(c inventoryv1.InventoryServiceClient, ctx context.Context) error {
	_, err := c.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "kb-1"})
	return err
}

var unavailable = status.Error(codes.Unavailable, "instance restarting")

func TestShortBudgetFailsBeforeEveryOtherLayer(t *testing.T) {
	s := &inventory{}
	rec := &recorder{}
	c := dialInventory(t, s, interceptors.WithMinBudget(20*time.Millisecond), interceptors.WithMetrics(rec))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	err := getItem(c, ctx)
	if rpcerr.Reason(err) != reason.BudgetExhausted {
		t.Fatalf("GetItem with 5ms left = %v, want DEADLINE_BUDGET_EXHAUSTED", err)
	}
	if s.count() != 0 || rec.inFlightEvents.Load() != 0 || len(rec.states()) != 0 {
		t.Errorf("upstream calls %d, bulkhead events %d, breaker transitions %q; want none: the deadline layer is outside them",
			s.count(), rec.inFlightEvents.Load(), rec.states())
	}
}

func TestRetriesAreOneBreakerVerdict(t *testing.T) {
	// Every call fails twice and then succeeds: the caller sees successes,
	// so the breaker (outside retry) must stay closed although two attempts
	// in a row failed each time.
	s := &inventory{}
	rec := &recorder{}
	c := dialInventory(t, s, interceptors.WithMetrics(rec))
	for i := range 3 {
		s.mu.Lock()
		s.script = []error{unavailable, unavailable, nil}
		s.mu.Unlock()
		if err := getItem(c, context.Background()); err != nil {
			t.Fatalf("call %d = %v, want OK on the third attempt", i+1, err)
		}
	}
	if got := rec.states(); len(got) != 0 {
		t.Errorf("breaker transitions = %q, want none", got)
	}
	if got := rec.retried.Load(); got != 6 {
		t.Errorf("retries = %d, want 6", got)
	}
}

func TestOpenCircuitIsNeverRetried(t *testing.T) {
	s := &inventory{script: []error{unavailable}} // down for good
	rec := &recorder{}
	c := dialInventory(t, s, interceptors.WithMetrics(rec), interceptors.WithMaxAttempts(3))
	_ = getItem(c, context.Background()) // 3 attempts, one failure
	_ = getItem(c, context.Background()) // 3 attempts, the second: open
	if got := s.count(); got != 6 {
		t.Fatalf("attempts = %d, want 6", got)
	}
	if err := getItem(c, context.Background()); rpcerr.Reason(err) != reason.CircuitOpen {
		t.Fatalf("third call = %v, want CIRCUIT_OPEN", err)
	}
	if got := s.count(); got != 6 {
		t.Errorf("attempts after the circuit opened = %d, want still 6", got)
	}
}

func TestOverloadNeverTripsTheBreaker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &inventory{block: make(chan struct{})}
		rec := &recorder{}
		c := dialInventory(t, s, interceptors.WithMetrics(rec), interceptors.WithBulkhead(1, -1, time.Millisecond))
		done := make(chan error, 1)
		go func() { done <- getItem(c, context.Background()) }()
		synctest.Wait() // the first call holds the slot, blocked in the upstream
		if s.count() != 1 {
			t.Fatalf("upstream calls = %d, want the first one holding the slot", s.count())
		}
		for range 5 {
			if err := getItem(c, context.Background()); rpcerr.Reason(err) != reason.Overloaded {
				t.Fatalf("call while the slot is taken = %v, want OVERLOADED", err)
			}
		}
		close(s.block)
		if err := <-done; err != nil {
			t.Fatalf("first call = %v", err)
		}
		if got := rec.states(); len(got) != 0 {
			t.Errorf("breaker transitions = %q, want none: overload is local", got)
		}
		if got := rec.overloaded.Load(); got != 5 {
			t.Errorf("overloaded = %d, want 5", got)
		}
	})
}

func TestUpstreamAddressesChange(t *testing.T) {
	net := stub.NewNetwork()
	for _, a := range []string{"10.0.0.1:1", "10.0.0.2:1"} {
		net.Serve(t, a, &stub.Inventory{GetItemFunc: func(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			return &inventoryv1.Item{Sku: a}, nil
		}}, nil)
	}
	up, err := interceptors.NewUpstream("", interceptors.WithUpstream("inventory"),
		interceptors.WithAddresses([]string{"10.0.0.1:1"}), interceptors.WithDialOptions(net.DialOption()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	c := inventoryv1.NewInventoryServiceClient(up.Conn())
	served := func() string {
		item, err := c.GetItem(context.Background(), &inventoryv1.GetItemRequest{})
		if err != nil {
			return err.Error()
		}
		return item.GetSku()
	}
	if got := served(); got != "10.0.0.1:1" {
		t.Fatalf("served by %q, want 10.0.0.1:1", got)
	}
	if err := up.SetAddresses([]string{"10.0.0.2:1"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for served() != "10.0.0.2:1" {
		if time.Now().After(deadline) {
			t.Fatal("calls never moved to 10.0.0.2:1")
		}
	}

	byTarget, err := interceptors.NewUpstream("passthrough:///inventory:43101", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer byTarget.Close()
	if err := byTarget.SetAddresses([]string{"10.0.0.1:1"}); err == nil {
		t.Error("SetAddresses on an upstream dialled by target = nil error, want one")
	}
}

func TestLayersWithoutAddressesHaveNoEjection(t *testing.T) {
	layers, err := interceptors.Layers(interceptors.WithConfig(interceptors.Config{Target: "127.0.0.1:1"}), interceptors.WithUpstream("inventory"), quiet)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range layers {
		names = append(names, l.Name)
	}
	want := []string{"trace", "deadline", "bulkhead", "breaker", "retry"}
	if len(names) != len(want) {
		t.Fatalf("layers = %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("layers = %q, want %q", names, want)
		}
	}
}

// grpcPlain dials the stub with grpc-go alone.
func grpcPlain(b *testing.B, target string, dial grpc.DialOption) *grpc.ClientConn {
	conn, err := grpc.NewClient(target, dial, grpc.WithTransportCredentials(insecureCreds()))
	if err != nil {
		b.Fatal(err)
	}
	return conn
}

// TestDNSTargetIsReresolved: a dns:/// target is re-resolved every
// DNSRefresh, so an instance added behind the name joins without a restart,
// and a failed lookup keeps what there is. It runs in a synctest bubble:
// time.Sleep moves the refresh timer, and synctest.Wait returns once the
// refresh it fired has finished.
func TestDNSTargetIsReresolved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		answer, fail, lookups := []string{"10.0.0.1"}, false, 0
		lookup := func(_ context.Context, host string) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			lookups++
			if host != "inventory.internal" {
				t.Errorf("lookup(%q)", host)
			}
			if fail {
				return nil, errors.New("SERVFAIL")
			}
			return slices.Clone(answer), nil
		}
		set := func(addrs []string, failing bool) {
			mu.Lock()
			defer mu.Unlock()
			answer, fail = addrs, failing
		}
		up, err := interceptors.NewUpstream("dns:///inventory.internal:43101", quiet,
			interceptors.WithLookup(lookup),
			interceptors.WithConfig(interceptors.Config{Target: "dns:///inventory.internal:43101", DNSRefresh: 10 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		// check says what the lookups so far made of the addresses.
		check := func(step string, wantLookups int, want []string) {
			t.Helper()
			synctest.Wait() // the refresh goroutine is back waiting on its timer
			mu.Lock()
			n := lookups
			mu.Unlock()
			if n != wantLookups {
				t.Fatalf("%s: lookups = %d, want %d", step, n, wantLookups)
			}
			if got := up.Addresses(); !slices.Equal(got, want) {
				t.Errorf("%s: addresses = %v, want %v", step, got, want)
			}
		}
		// Construction never waits on DNS: it starts from the name, and the
		// first lookup, made at once in the background, replaces it.
		check("first lookup", 1, []string{"10.0.0.1:43101"})
		if err := up.SetAddresses([]string{"10.0.0.9:1"}); err == nil {
			t.Error("SetAddresses on a DNS upstream = nil error; the next refresh would undo it")
		}
		set([]string{"10.0.0.2", "10.0.0.1"}, false)
		time.Sleep(10*time.Second - time.Nanosecond)
		check("just before DNSRefresh", 1, []string{"10.0.0.1:43101"})
		time.Sleep(time.Nanosecond)
		check("instance added", 2, []string{"10.0.0.1:43101", "10.0.0.2:43101"})
		set(nil, true)
		time.Sleep(10 * time.Second)
		check("failed lookup keeps the addresses", 3, []string{"10.0.0.1:43101", "10.0.0.2:43101"})
	})
}
