package payment

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/grpctest"
)

// startRun runs Run on a bufconn listener until the returned stop is called
// (or the test ends) and returns a client connection to it.
func startRun(t *testing.T, cfg Config) (paymentv1.PaymentServiceClient, healthpb.HealthClient, func()) {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	v, as := grpctest.CallAs(t, paymentv1.PaymentService_ServiceDesc.ServiceName, callmeta.Principal{Subject: "order", Role: callmeta.RoleService})
	cfg.Identity = v
	conn, stop := grpctest.Run(t, func(ctx context.Context, lis net.Listener) error {
		cfg.Listener = lis
		return Run(ctx, cfg)
	}, as)
	return paymentv1.NewPaymentServiceClient(conn), healthpb.NewHealthClient(conn), stop
}

func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "payment.db")
	client, health, stop := startRun(t, Config{DB: path})
	for _, service := range []string{"", "portico.payment.v1.PaymentService"} {
		resp, err := health.Check(ctx(t), &healthpb.HealthCheckRequest{Service: service})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health(%q) = %v, %v; want SERVING", service, resp.GetStatus(), err)
		}
	}
	p, err := client.CreatePayment(keyed(t, "key-1"), charge("order-1", 4999, MethodCardOK))
	if err != nil {
		t.Fatalf("CreatePayment: %v", err)
	}
	stop()

	client, _, _ = startRun(t, Config{DB: path})
	got, err := client.GetPayment(ctx(t), &paymentv1.GetPaymentRequest{Id: p.GetId()})
	if err != nil || got.GetStatus() != paymentv1.Payment_STATUS_CAPTURED {
		t.Errorf("GetPayment after restart = %v, %v; want CAPTURED", got, err)
	}
}

func TestRunNeedsLogger(t *testing.T) {
	if err := Run(ctx(t), Config{DB: filepath.Join(t.TempDir(), "p.db")}); err == nil {
		t.Error("Run without a Logger = nil, want an error")
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) = nil error, want one")
	}
}
