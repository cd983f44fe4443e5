package health

import (
	"context"
	"errors"
	"testing"
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

func TestCheck(t *testing.T) {
	up := &fakeConn{status: healthpb.HealthCheckResponse_SERVING}
	tests := []struct {
		name string
		deps []Dependency
		want Report
	}{
		{"all up", []Dependency{{Name: "a", Conn: up}, {Name: "b", Conn: up}},
			Report{Up, "edge", []DependencyStatus{{"a", Up}, {"b", Up}}}},
		{"not serving", []Dependency{{Name: "a", Conn: up}, {Name: "b", Conn: &fakeConn{status: healthpb.HealthCheckResponse_NOT_SERVING}}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Up}, {"b", Down}}}},
		{"error", []Dependency{{Name: "a", Conn: &fakeConn{err: errors.New("refused")}}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Down}}}},
		{"hang", []Dependency{{Name: "a", Conn: &fakeConn{hang: true}}, {Name: "b", Conn: up}},
			Report{Degraded, "edge", []DependencyStatus{{"a", Down}, {"b", Up}}}},
		{"no dependencies", nil, Report{Up, "edge", []DependencyStatus{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := NewChecker("edge", tt.deps, 50*time.Millisecond).Check(context.Background())
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Check() (-want +got):\n%s", d)
			}
			if time.Since(start) > time.Second {
				t.Errorf("Check took %v; checks must run in parallel within the timeout", time.Since(start))
			}
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
