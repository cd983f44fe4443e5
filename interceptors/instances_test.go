package interceptors_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Instance behaviours.
const (
	serving = iota
	hanging // blocks until the attempt's deadline: a host cut off its link
	failing // answers UNAVAILABLE at once
	absent  // nothing listens: connections fail
)

// instanceSet serves GetItem at n addresses, each behaving as its mode
// says (switchable while calls run), answering with its address.
type instanceSet struct {
	net   *stub.Network
	addrs []string
	mode  []*atomic.Int32
	calls atomic.Int64 // calls that reached any instance
}

func newInstanceSet(t *testing.T, modes ...int) *instanceSet {
	s := &instanceSet{net: stub.NewNetwork()}
	for i, m := range modes {
		a := fmt.Sprintf("10.0.0.%d:1", i+1)
		mode := &atomic.Int32{}
		s.addrs, s.mode = append(s.addrs, a), append(s.mode, mode)
		if m == absent {
			continue
		}
		s.net.Serve(t, a, &stub.Inventory{GetItemFunc: func(ctx context.Context, _ *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
			s.calls.Add(1)
			switch mode.Load() {
			case hanging:
				<-ctx.Done()
				return nil, status.FromContextError(ctx.Err()).Err()
			case failing:
				return nil, status.Error(codes.Unavailable, a+" is down")
			}
			return &inventoryv1.Item{Sku: a}, nil
		}}, nil)
	}
	return s
}

// upstream dials the set with attempts per call (100ms each) and a
// breaker whose cool-down outlasts the test, so an open breaker stays open.
func (s *instanceSet) upstream(t *testing.T, attempts int) (*interceptors.Upstream, inventoryv1.InventoryServiceClient) {
	t.Helper()
	return s.upstreamWithin(t, attempts, 100*time.Millisecond)
}

// upstreamWithin is upstream with each attempt bounded by perAttempt.
func (s *instanceSet) upstreamWithin(t *testing.T, attempts int, perAttempt time.Duration) (*interceptors.Upstream, inventoryv1.InventoryServiceClient) {
	t.Helper()
	up, err := interceptors.NewUpstream("", interceptors.WithConfig(interceptors.Config{
		Name: "inventory", Addresses: s.addrs, Timeout: 3 * time.Second,
		Retry: interceptors.RetryConfig{MaxAttempts: attempts, AttemptTimeout: perAttempt},
	}), interceptors.WithBreaker(breaker.Settings{CoolDown: time.Minute}),
		interceptors.WithDialOptions(s.net.DialOption()), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	return up, inventoryv1.NewInventoryServiceClient(up.Conn())
}

// warm calls until every serving instance has answered (within 5s), so
// round robin spreads the calls that follow over all of them.
func warm(t *testing.T, c inventoryv1.InventoryServiceClient, n int) {
	t.Helper()
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for len(seen) < n {
		item, err := c.GetItem(ctx, &inventoryv1.GetItemRequest{})
		if ctx.Err() != nil {
			t.Fatalf("only %d of %d instances answered within 5s", len(seen), n)
		}
		if err == nil {
			seen[item.GetSku()] = true
		}
	}
}

func breakerStates(up *interceptors.Upstream) map[string]string {
	out := map[string]string{}
	for _, b := range up.State().Breakers {
		out[b.Name] = b.State
	}
	return out
}

// TestOneInstanceHangingCostsNoCall: with one of three instances hanging
// (a host cut off: calls wait for their deadline) or failing, calls are
// retried on the others after one attempt and none fails; the instance's
// breaker opens and takes it out of the rotation, while the other
// instances' breakers and the upstream's stay closed. Without retries the
// calls that went to it fail, but only until its breaker opens (its 2
// failures, plus one per concurrent caller), and never with CIRCUIT_OPEN:
// the healthy instances keep serving.
func TestOneInstanceHangingCostsNoCall(t *testing.T) {
	tests := []struct {
		name      string
		bad       int // the mode instance 10.0.0.2 switches to
		attempts  int
		maxFailed int32
	}{
		{"hanging", hanging, 3, 0},
		{"failing", failing, 3, 0},
		{"hanging without retries", hanging, 1, 2 + 3},
		{"failing without retries", failing, 1, 2 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newInstanceSet(t, serving, serving, serving)
			// A second per attempt: a healthy instance answering slowly on
			// a busy host (-race, many packages at once) must not count as
			// failed; only the bad instance should.
			up, c := s.upstreamWithin(t, tt.attempts, time.Second)
			warm(t, c, 3)
			s.mode[1].Store(int32(tt.bad))

			const workers, calls = 3, 20
			var failed atomic.Int32
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for range calls {
						ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
						if _, err := c.GetItem(ctx, &inventoryv1.GetItemRequest{}); err != nil {
							if failed.Add(1) > tt.maxFailed || rpcerr.Reason(err) == reason.CircuitOpen {
								t.Errorf("GetItem = %v, want at most %d failures, none CIRCUIT_OPEN", err, tt.maxFailed)
							}
						}
						cancel()
					}
				})
			}
			wg.Wait()
			want := map[string]string{
				"inventory": "closed", "inventory@10.0.0.1:1": "closed",
				"inventory@10.0.0.2:1": "open", "inventory@10.0.0.3:1": "closed",
			}
			if got := breakerStates(up); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("breakers = %v, want %v", got, want)
			}
			if got := up.Addresses(); len(got) != 2 {
				t.Errorf("Addresses() = %q, want the two live instances", got)
			}
		})
	}
}

// TestEveryInstanceDownFailsFast: when every instance fails, whether it
// hangs, answers UNAVAILABLE or cannot be reached, the chain refuses calls
// at once with CIRCUIT_OPEN and the upstream's breaker is open, as for a
// single upstream.
func TestEveryInstanceDownFailsFast(t *testing.T) {
	tests := []struct {
		name string
		mode int
	}{
		{"hanging", hanging},
		{"failing", failing},
		{"absent", absent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newInstanceSet(t, tt.mode, tt.mode, tt.mode)
			for _, m := range s.mode {
				m.Store(int32(tt.mode))
			}
			up, c := s.upstream(t, 3)
			// Every instance's breaker (or, with none reachable, the
			// upstream's) needs its 2 failures; each call makes up to 3.
			var err error
			for i := 0; i < 10 && rpcerr.Reason(err) != reason.CircuitOpen; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				_, err = c.GetItem(ctx, &inventoryv1.GetItemRequest{})
				cancel()
			}
			if rpcerr.Reason(err) != reason.CircuitOpen {
				t.Fatalf("GetItem after 10 calls = %v, want CIRCUIT_OPEN", err)
			}
			// At once: the refused call reaches no instance (nor waits out
			// its deadline, which would end DEADLINE_EXCEEDED).
			before := s.calls.Load()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			_, err = c.GetItem(ctx, &inventoryv1.GetItemRequest{})
			if status.Code(err) != codes.Unavailable || rpcerr.Reason(err) != reason.CircuitOpen {
				t.Errorf("GetItem with the circuit open = %v, want UNAVAILABLE CIRCUIT_OPEN at once", err)
			}
			if n := s.calls.Load() - before; n != 0 {
				t.Errorf("GetItem with the circuit open reached %d instances, want none", n)
			}
			if got := breakerStates(up)["inventory"]; got != "open" {
				t.Errorf("upstream's breaker = %s, want open: the upstream is down", got)
			}
		})
	}
}
