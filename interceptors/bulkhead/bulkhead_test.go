package bulkhead_test

import (
	"context"
	"runtime"
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
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/internal/stub"
	"github.com/portico-gateway/portico/interceptors/reason"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type observer struct {
	overloaded atomic.Int64
	inFlight   atomic.Int64
	peak       atomic.Int64
}

func (o *observer) Overloaded(string) { o.overloaded.Add(1) }
func (o *observer) InFlight(_ string, d int) {
	n := o.inFlight.Add(int64(d))
	for p := o.peak.Load(); n > p && !o.peak.CompareAndSwap(p, n); p = o.peak.Load() {
	}
}

// gate is an upstream whose calls block until released.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 100), release: make(chan struct{})} }

func (g *gate) handle(context.Context, *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	g.entered <- struct{}{}
	<-g.release
	return &inventoryv1.Item{}, nil
}

func (g *gate) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-g.entered:
		case <-time.After(5 * time.Second):
			t.Fatal("calls did not reach the upstream")
		}
	}
}

func dial(t *testing.T, g *gate, opts ...bulkhead.Option) inventoryv1.InventoryServiceClient {
	t.Helper()
	target, dialer := stub.Serve(t, &stub.Inventory{GetItemFunc: g.handle}, nil)
	conn, err := grpc.NewClient(target, dialer, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(bulkhead.UnaryClientInterceptor(append([]bulkhead.Option{bulkhead.WithUpstream("inventory")}, opts...)...)))
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

func TestRejectsBeyondSlotsAndQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &observer{}
		g := newGate()
		c := dial(t, g, bulkhead.WithLimits(2, 1, 50*time.Millisecond), bulkhead.WithObserver(obs))
		ctx := context.Background()

		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { _ = getItem(c, ctx) })
		}
		g.wait(t, 2) // both slots taken

		queued := make(chan error, 1)
		go func() { queued <- getItem(c, ctx) }()
		synctest.Wait() // every goroutine is blocked: the call waits in the queue

		err := getItem(c, ctx) // queue full: refused at once
		if status.Code(err) != codes.Unavailable || rpcerr.Reason(err) != reason.Overloaded {
			t.Fatalf("fourth call = %v, want UNAVAILABLE OVERLOADED", err)
		}
		if up := rpcerr.ErrorInfo(err).GetMetadata()["upstream"]; up != "inventory" {
			t.Errorf("upstream metadata = %q, want inventory", up)
		}
		var ri *errdetails.RetryInfo
		for _, d := range status.Convert(err).Details() {
			if x, ok := d.(*errdetails.RetryInfo); ok {
				ri = x
			}
		}
		if ri.GetRetryDelay().AsDuration() != 50*time.Millisecond {
			t.Errorf("RetryInfo = %v, want 50ms", ri)
		}

		time.Sleep(50 * time.Millisecond) // the queued call's wait runs out
		if err := <-queued; rpcerr.Reason(err) != reason.Overloaded {
			t.Errorf("queued call after MaxWait = %v, want OVERLOADED", err)
		}
		close(g.release)
		wg.Wait()
		if got := obs.overloaded.Load(); got != 2 {
			t.Errorf("Overloaded reported %d times, want 2", got)
		}
		if got, peak := obs.inFlight.Load(), obs.peak.Load(); got != 0 || peak != 2 {
			t.Errorf("in flight = %d (peak %d), want 0 (peak 2)", got, peak)
		}
	})
}

func TestQueuedCallTakesAFreedSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		c := dial(t, g, bulkhead.WithLimits(1, 1, time.Second))
		ctx := context.Background()
		first := make(chan error, 1)
		go func() { first <- getItem(c, ctx) }()
		g.wait(t, 1)
		second := make(chan error, 1)
		go func() { second <- getItem(c, ctx) }()
		synctest.Wait()         // every goroutine is blocked: the call waits in the queue
		g.release <- struct{}{} // the first call ends; the second gets its slot
		g.wait(t, 1)
		close(g.release)
		for _, ch := range []chan error{first, second} {
			if err := <-ch; err != nil {
				t.Errorf("call = %v, want OK", err)
			}
		}
	})
}

func TestCancelWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate()
		c := dial(t, g, bulkhead.WithLimits(1, 1, time.Minute))
		go func() { _ = getItem(c, context.Background()) }()
		g.wait(t, 1)
		ctx, cancel := context.WithCancel(context.Background())
		queued := make(chan error, 1)
		go func() { queued <- getItem(c, ctx) }()
		synctest.Wait() // every goroutine is blocked: the call waits in the queue
		cancel()
		if err := <-queued; status.Code(err) != codes.Canceled {
			t.Errorf("cancelled queued call = %v, want CANCELLED", err)
		}
		close(g.release)
	})
}

func TestExcessNeverGrowsGoroutines(t *testing.T) {
	g := newGate()
	obs := &observer{}
	c := dial(t, g, bulkhead.WithLimits(2, -1, 0), bulkhead.WithObserver(obs))
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { _ = getItem(c, ctx) })
	}
	g.wait(t, 2)
	before := runtime.NumGoroutine()
	// 200 calls beyond the cap, one after another: each fails fast and
	// leaves nothing behind.
	for range 200 {
		if err := getItem(c, ctx); rpcerr.Reason(err) != reason.Overloaded {
			t.Fatalf("excess call = %v, want OVERLOADED", err)
		}
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("goroutines grew from %d to %d while rejecting", before, after)
	}
	close(g.release)
	wg.Wait()
	if got := obs.overloaded.Load(); got != 200 {
		t.Errorf("Overloaded reported %d times, want 200", got)
	}
}
