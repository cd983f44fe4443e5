package order

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
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
				cfg.ReconcileAfter != want.ReconcileAfter || cfg.Now == nil {
				t.Errorf("defaults = %+v, want %+v and a clock", cfg, want)
			}
		})
	}
}

// TestRun serves on a bufconn listener: an order whose charge timed out is
// finished by the background reconciler, and Run stops cleanly.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the reconciler loop in real time")
	}
	h := newHarness(t)
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{
			DB: filepath.Join(t.TempDir(), "sub", "order.db"), Logger: slog.New(slog.DiscardHandler),
			Inventory: h.invConn, Payment: h.payConn, Listener: lis, Now: h.clock.Now,
			ReconcileInterval: 10 * time.Millisecond,
		})
	}()
	conn, err := grpc.NewClient("passthrough:///order",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
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
	h.clock.Advance(time.Minute)
	waitStatus(t, client, o.GetId(), orderv1.Order_STATUS_CONFIRMED)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run() = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// waitStatus polls GetOrder until the order has want, for at most 5s.
func waitStatus(t *testing.T, c orderv1.OrderServiceClient, id string, want orderv1.Order_Status) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		o, err := c.GetOrder(alice(t, ""), &orderv1.GetOrderRequest{Id: id})
		if err == nil && o.GetStatus() == want {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("order %s = %v, %v; want %v within 5s", id, o.GetStatus(), err, want)
		}
	}
}
