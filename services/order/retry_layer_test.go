package order

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"testing/synctest"

	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// dialChain serves register on bufconn and dials it through the client
// chain the order process uses (interceptors.Dial with its defaults).
func dialChain(t *testing.T, name string, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	register(srv)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn, err := interceptors.Dial("passthrough:///"+name, interceptors.WithUpstream(name),
		interceptors.WithLogger(slog.New(slog.DiscardHandler)),
		interceptors.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return lis.DialContext(ctx)
		})))
	if err != nil {
		t.Fatalf("interceptors.Dial: %v", err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop(); <-done })
	return conn
}

// TestPaymentRetriedInOneLayer counts the CreatePayment attempts payment
// sees for one order while it answers UNAVAILABLE: the client chain owns
// retries, so there are at most its attempts, not the chain's times the
// saga's. The order stays PENDING for the reconciler. The bubble makes the
// chain's backoffs exact, so no attempt is lost to a slow machine.
func TestPaymentRetriedInOneLayer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		h.payStub.set(func(k *payHooks) {
			k.create = func(ctx context.Context, _ *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
				return nil, unavailableErr(ctx)
			}
		})
		h.payConn = dialChain(t, "payment", func(s *grpc.Server) { paymentv1.RegisterPaymentServiceServer(s, h.payStub) })
		h.restart()

		o, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_PENDING {
			t.Fatalf("CreateOrder() = %v, %v; want a PENDING order", o.GetStatus(), err)
		}
		if got := h.payStub.creates.Load(); got != retry.DefaultMaxAttempts {
			t.Errorf("CreatePayment attempts = %d, want the chain's %d (one retry layer)", got, retry.DefaultMaxAttempts)
		}
	})
}
