package health

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeConn answers Health/Check with a fixed status, error or hang.
type fakeConn struct {
	status  healthpb.HealthCheckResponse_ServingStatus
	err     error
	hang    bool
	service chan string
}

func (f *fakeConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	if f.service != nil {
		f.service <- args.(*healthpb.HealthCheckRequest).GetService()
	}
	if f.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.err != nil {
		return f.err
	}
	reply.(*healthpb.HealthCheckResponse).Status = f.status
	return nil
}

func (f *fakeConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams")
}

// TestCheck runs in a synctest bubble: a hanging dependency costs exactly
// the timeout on the bubble's clock, and two of them cost no more, which
// is what asking them in parallel means.
func TestCheck(t *testing.T) {
	const timeout = 50 * time.Millisecond
	up := &fakeConn{status: healthpb.HealthCheckResponse_SERVING}
	hang := &fakeConn{hang: true}
	tests := []struct {
		name string
		deps []Dependency
		want Report
		took time.Duration
	}{
		{"all up", []Dependency{{Name: "a", Conn: up}, {Name: "b", Conn: up}},
			Report{Up, "edge", []DependencyStatus{{"a", Up}, {"b", Up}}}, 0},
		{"not serving", []Dependency{{Name: "a", Conn: up}, {Name: "b", Conn: &fakeConn{status: healthpb.HealthCheckResponse_NOT_SERVING}}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Up}, {"b", Down}}}, 0},
		{"error", []Dependency{{Name: "a", Conn: &fakeConn{err: errors.New("refused")}}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Down}}}, 0},
		{"hang", []Dependency{{Name: "a", Conn: hang}, {Name: "b", Conn: up}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Down}, {"b", Up}}}, timeout},
		{"two hang in parallel", []Dependency{{Name: "a", Conn: hang}, {Name: "b", Conn: hang}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Down}, {"b", Down}}}, timeout},
		{"no dependencies", nil, Report{Up, "edge", []DependencyStatus{}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				got := NewChecker("edge", tt.deps, timeout).Check(context.Background())
				if d := cmp.Diff(tt.want, got); d != "" {
					t.Errorf("Check() (-want +got):\n%s", d)
				}
				if took := time.Since(start); took != tt.took {
					t.Errorf("Check took %v on the bubble's clock, want %v", took, tt.took)
				}
			})
		})
	}
}

func TestCheckAsksForTheService(t *testing.T) {
	c := &fakeConn{status: healthpb.HealthCheckResponse_SERVING, service: make(chan string, 1)}
	NewChecker("edge", []Dependency{{Name: "a", Service: "pkg.Svc", Conn: c}}, 0).Check(context.Background())
	if got := <-c.service; got != "pkg.Svc" {
		t.Errorf("asked about %q, want pkg.Svc", got)
	}
}

// countConn answers SERVING and counts the checks it was asked; gate, when
// set, holds each answer until it is closed.
type countConn struct {
	fakeConn
	calls atomic.Int64
	gate  chan struct{}
}

func (c *countConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	c.calls.Add(1)
	if c.gate != nil {
		<-c.gate
	}
	return c.fakeConn.Invoke(ctx, method, args, reply, opts...)
}

// TestCheckSharesRounds: 600 concurrent callers share one round of checks
// (one call per dependency), callers within the max age reuse its report,
// and a caller after it starts the next round. Each caller's report is its
// own: changing it changes no one else's.
func TestCheckSharesRounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &countConn{fakeConn: fakeConn{status: healthpb.HealthCheckResponse_SERVING}, gate: make(chan struct{})}
		b := &countConn{fakeConn: fakeConn{status: healthpb.HealthCheckResponse_SERVING}, gate: a.gate}
		c := NewChecker("edge", []Dependency{{Name: "a", Conn: a}, {Name: "b", Conn: b}}, time.Second)
		var wg sync.WaitGroup
		reports := make([]Report, 600)
		for i := range reports {
			wg.Go(func() { reports[i] = c.Check(context.Background()) })
		}
		synctest.Wait() // every caller is in Check, the round held at the gate
		close(a.gate)
		wg.Wait()
		if a.calls.Load() != 1 || b.calls.Load() != 1 {
			t.Fatalf("600 concurrent Checks asked a %d and b %d times, want once each", a.calls.Load(), b.calls.Load())
		}
		want := Report{Up, "edge", []DependencyStatus{{"a", Up}, {"b", Up}}}
		reports[0].Dependencies[0].Status = Down // the caller's own copy
		reports[0].Dependencies = append(reports[0].Dependencies, DependencyStatus{"redis", Down})
		if d := cmp.Diff(want, reports[1]); d != "" {
			t.Errorf("another caller's report (-want +got):\n%s", d)
		}
		time.Sleep(DefaultMaxAge - time.Nanosecond)
		if d := cmp.Diff(want, c.Check(context.Background())); d != "" || a.calls.Load() != 1 {
			t.Errorf("within the max age: %d calls, report (-want +got):\n%s", a.calls.Load(), d)
		}
		time.Sleep(time.Nanosecond)
		c.Check(context.Background())
		if a.calls.Load() != 2 {
			t.Errorf("after the max age: %d calls, want 2 (a new round)", a.calls.Load())
		}
	})
}

// TestCheckWithoutReuse: WithMaxAge(-1) asks the dependencies on every
// Check.
func TestCheckWithoutReuse(t *testing.T) {
	a := &countConn{fakeConn: fakeConn{status: healthpb.HealthCheckResponse_SERVING}}
	c := NewChecker("edge", []Dependency{{Name: "a", Conn: a}}, 0, WithMaxAge(-1))
	for range 3 {
		c.Check(context.Background())
	}
	if a.calls.Load() != 3 {
		t.Errorf("3 Checks asked %d times, want 3", a.calls.Load())
	}
}
