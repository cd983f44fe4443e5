package order

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/grpctest"
)

func TestConfigValidate(t *testing.T) {
	h := newHarness(t)
	l := slog.New(slog.DiscardHandler)
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"complete", Config{Logger: l, Inventory: h.invConn, Payment: h.payConn}, false},
		{"no logger", Config{Inventory: h.invConn, Payment: h.payConn}, true},
		{"no inventory", Config{Logger: l, Payment: h.payConn}, true},
		{"no payment", Config{Logger: l, Inventory: h.invConn}, true},
		{"negative interval", Config{Logger: l, Inventory: h.invConn, Payment: h.payConn, ReconcileInterval: -1}, true},
		{"negative age", Config{Logger: l, Inventory: h.invConn, Payment: h.payConn, ReconcileAfter: -1}, true},
		{"DB URL of another database", Config{Logger: l, Inventory: h.invConn, Payment: h.payConn, DB: "mysql://root@127.0.0.1/x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if err := cfg.validate(); (err != nil) != tt.wantErr {
				t.Fatalf("validate() = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			want := Config{Listen: "127.0.0.1:43103", DB: filepath.Join("var", "order.db"),
				ReconcileInterval: 2 * time.Second, ReconcileAfter: 5 * time.Second}
			if cfg.Listen != want.Listen || cfg.DB != want.DB || cfg.ReconcileInterval != want.ReconcileInterval ||
				cfg.ReconcileAfter != want.ReconcileAfter {
				t.Errorf("defaults = %+v, want %+v", cfg, want)
			}
		})
	}
}

// TestRun serves on a bufconn listener: an order whose charge timed out is
// finished by the background reconciler at its default interval and age,
// and Run stops cleanly. It runs in a synctest bubble, so the reconciler's
// seconds pass at once and synctest.Wait says when its round is done.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		lis := bufconn.Listen(1 << 20)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		verifier, as := grpctest.CallAs(t, orderv1.OrderService_ServiceDesc.ServiceName, callmeta.Principal{Subject: "nobody", Role: callmeta.RoleCustomer})
		go func() {
			done <- Run(ctx, Config{
				DB: filepath.Join(t.TempDir(), "order.db"), Logger: slog.New(slog.DiscardHandler),
				Inventory: h.invConn, Payment: h.payConn, Listener: lis, Identity: verifier,
			})
		}()
		conn, err := grpc.NewClient("passthrough:///order",
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()), as)
		if err != nil {
			t.Fatalf("grpc.NewClient: %v", err)
		}
		defer conn.Close()
		client := orderv1.NewOrderServiceClient(conn)
		h.payStub.set(chargeThenLose(h))
		o, err := client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 1))
		if err != nil || o.GetStatus() != orderv1.Order_STATUS_PENDING {
			t.Fatalf("CreateOrder = %v, %v; want PENDING", o.GetStatus(), err)
		}
		h.payStub.set(func(k *payHooks) { k.create = h.pay.CreatePayment })

		status := func() orderv1.Order_Status {
			t.Helper()
			synctest.Wait() // any reconcile round that started has finished
			got, err := client.GetOrder(alice(t, ""), &orderv1.GetOrderRequest{Id: o.GetId()})
			if err != nil {
				t.Fatalf("GetOrder: %v", err)
			}
			return got.GetStatus()
		}
		// Rounds run every 2s; an order is theirs once 5s old: the rounds
		// at 2s and 4s leave it, the one at 6s settles it.
		time.Sleep(DefaultReconcileAfter - time.Millisecond)
		if got := status(); got != orderv1.Order_STATUS_PENDING {
			t.Fatalf("order before the reconcile age = %v, want PENDING", got)
		}
		time.Sleep(2 * time.Second)
		if got := status(); got != orderv1.Order_STATUS_CONFIRMED {
			t.Fatalf("order after a reconcile round = %v, want CONFIRMED", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	})
}
