package grpctest

import (
	"context"
	"errors"
	"net"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestServe(t *testing.T) {
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	r, err := healthpb.NewHealthClient(Serve(t, srv)).Check(Context(t), &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check() = %v, %v; want SERVING", r, err)
	}
}

func TestRunStops(t *testing.T) {
	conn, stop := Run(t, func(ctx context.Context, lis net.Listener) error {
		srv := grpc.NewServer()
		healthpb.RegisterHealthServer(srv, health.NewServer())
		go func() { <-ctx.Done(); srv.Stop() }()
		if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			return err
		}
		return nil
	})
	if _, err := healthpb.NewHealthClient(conn).Check(Context(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatalf("Check() = %v", err)
	}
	stop()
	stop() // idempotent
}

func TestStatusParts(t *testing.T) {
	st, _ := status.New(codes.InvalidArgument, "bad sku").WithDetails(
		&errdetails.ErrorInfo{Reason: "INVALID", Domain: "example.portico", Metadata: map[string]string{"sku": "x-1"}},
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "sku"}, {Field: "lines[0].quantity"}}})
	err := st.Err()
	CheckError(t, "call", err, codes.InvalidArgument, "example.portico", "INVALID")
	if got := BadFields(err); len(got) != 2 || got[0] != "sku" || got[1] != "lines[0].quantity" {
		t.Errorf("BadFields() = %q", got)
	}
	for _, tt := range []struct {
		s    string
		want bool
	}{{"bad", true}, {"x-1", true}, {"nothing", false}} {
		if got := Echoes(err, tt.s); got != tt.want {
			t.Errorf("Echoes(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
