package shed_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/portico-gateway/portico/gateway/shed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newLimiter(t *testing.T, slots, queue int) *shed.Limiter {
	t.Helper()
	l, err := shed.New(slots, queue)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewRejectsNoSlots(t *testing.T) {
	for _, n := range []int{0, -1} {
		if _, err := shed.New(n, 0); err == nil {
			t.Errorf("New(%d, 0) = nil error, want one", n)
		}
	}
}

func TestCapWithoutQueue(t *testing.T) {
	tests := []struct {
		name         string
		slots, queue int
		wait         time.Duration
	}{
		{"no queue", 2, 0, time.Second},
		{"queue but no wait", 2, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimiter(t, tt.slots, tt.queue)
			ctx := context.Background()
			for i := range tt.slots {
				if err := l.Acquire(ctx, tt.wait); err != nil {
					t.Fatalf("Acquire #%d = %v, want a slot", i+1, err)
				}
			}
			if err := l.Acquire(ctx, tt.wait); !errors.Is(err, shed.ErrOverloaded) {
				t.Fatalf("Acquire beyond %d slots = %v, want ErrOverloaded", tt.slots, err)
			}
			if got := l.InFlight(); got != tt.slots {
				t.Errorf("InFlight() = %d, want %d", got, tt.slots)
			}
			l.Release()
			if !l.TryAcquire() {
				t.Error("TryAcquire after a Release = false, want a slot")
			}
		})
	}
}

func TestWaiterGetsAFreedSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, 1, 1)
		if !l.TryAcquire() {
			t.Fatal("first TryAcquire failed")
		}
		got := make(chan error, 1)
		go func() { got <- l.Acquire(context.Background(), time.Second) }()
		synctest.Wait() // the second caller waits
		if l.Waiting() != 1 {
			t.Fatalf("Waiting() = %d, want 1", l.Waiting())
		}
		time.Sleep(500 * time.Millisecond)
		l.Release()
		if err := <-got; err != nil {
			t.Fatalf("waiter = %v, want a slot", err)
		}
		if l.InFlight() != 1 || l.Waiting() != 0 {
			t.Errorf("InFlight, Waiting = %d, %d; want 1, 0", l.InFlight(), l.Waiting())
		}
	})
}

func TestWaitEndsAtItsBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, 1, 4)
		l.TryAcquire()
		start := time.Now()
		if err := l.Acquire(context.Background(), 30*time.Millisecond); !errors.Is(err, shed.ErrOverloaded) {
			t.Fatalf("Acquire = %v, want ErrOverloaded", err)
		}
		if waited := time.Since(start); waited != 30*time.Millisecond {
			t.Errorf("waited %v, want exactly the 30ms bound", waited)
		}
	})
}

func TestWaitEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, 1, 4)
		l.TryAcquire()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := l.Acquire(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v, want the context's DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != 10*time.Millisecond {
			t.Errorf("waited %v, want the 10ms deadline", waited)
		}
	})
}

func TestQueueIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLimiter(t, 1, 2)
		l.TryAcquire()
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for range 2 {
			wg.Go(func() {
				err := l.Acquire(context.Background(), time.Second)
				if err == nil {
					l.Release()
				}
				errs <- err
			})
		}
		synctest.Wait() // two callers wait: the queue is full
		start := time.Now()
		if err := l.Acquire(context.Background(), time.Second); !errors.Is(err, shed.ErrOverloaded) {
			t.Fatalf("Acquire with a full queue = %v, want ErrOverloaded", err)
		}
		if time.Since(start) != 0 {
			t.Error("a caller beyond the queue waited, want an immediate refusal")
		}
		l.Release() // one waiter gets the slot, releases it, and the other gets it
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("queued waiter = %v, want a slot", err)
			}
		}
		if l.InFlight() != 0 || l.Waiting() != 0 {
			t.Errorf("InFlight, Waiting = %d, %d; want 0, 0", l.InFlight(), l.Waiting())
		}
	})
}

func TestNeverOverCapUnderContention(t *testing.T) {
	const slots = 3
	l := newLimiter(t, slots, 8)
	var (
		mu        sync.Mutex
		now, peak int
		wg        sync.WaitGroup
	)
	for range 16 {
		wg.Go(func() {
			for range 200 {
				if l.Acquire(context.Background(), time.Millisecond) != nil {
					continue
				}
				mu.Lock()
				now++
				peak = max(peak, now)
				mu.Unlock()
				mu.Lock()
				now--
				mu.Unlock()
				l.Release()
			}
		})
	}
	wg.Wait()
	if peak > slots {
		t.Errorf("peak holders = %d, want at most %d", peak, slots)
	}
	if l.InFlight() != 0 {
		t.Errorf("InFlight() = %d after every release, want 0", l.InFlight())
	}
}

func BenchmarkTryAcquireRelease(b *testing.B) {
	l, _ := shed.New(1024, 0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if l.TryAcquire() {
				l.Release()
			}
		}
	})
}

func BenchmarkRefusal(b *testing.B) {
	l, _ := shed.New(1, 16)
	l.TryAcquire()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_ = l.Acquire(ctx, 0)
	}
}
