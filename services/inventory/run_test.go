package inventory

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/grpctest"
)

// running is a Run in a goroutine and a client connection to it.
type running struct {
	client inventoryv1.InventoryServiceClient
	health healthpb.HealthClient
	stop   func() // cancels Run and waits for it; fails the test on error
}

func startRun(t *testing.T, cfg Config) *running {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	conn, stop := grpctest.Run(t, func(ctx context.Context, lis net.Listener) error {
		cfg.Listener = lis
		return Run(ctx, cfg)
	})
	return &running{inventoryv1.NewInventoryServiceClient(conn), healthpb.NewHealthClient(conn), stop}
}

func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", "inventory.db")
	r := startRun(t, Config{DB: path})
	for _, service := range []string{"", "portico.inventory.v1.InventoryService"} {
		resp, err := r.health.Check(ctx(t), &healthpb.HealthCheckRequest{Service: service})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health(%q) = %v, %v; want SERVING", service, resp.GetStatus(), err)
		}
	}
	it, err := r.client.GetItem(ctx(t), &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
	if err != nil || it.GetUnitPrice().GetAmountMinor() != 4999 || it.GetAvailable() != 100 {
		t.Fatalf("seeded keyboard-001 = %v, %v; want 4999 USD, 100 available", it, err)
	}
	_, err = r.client.UpdateItem(ctx(t), &inventoryv1.UpdateItemRequest{
		Item: &inventoryv1.Item{Sku: "keyboard-001", Available: 7}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"available"}},
	})
	if err != nil {
		t.Fatalf("UpdateItem: %v", err)
	}
	r.stop()

	// A second process on the same file keeps the change: no re-seed.
	r = startRun(t, Config{DB: path})
	it, err = r.client.GetItem(ctx(t), &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
	if err != nil || it.GetAvailable() != 7 {
		t.Errorf("keyboard-001 after restart = %v, %v; want 7 available", it, err)
	}
}

// TestRunSweeps: Run's sweeper releases what the injected clock expired.
func TestRunSweeps(t *testing.T) {
	clock := &fakeClock{now: t0}
	r := startRun(t, Config{DB: filepath.Join(t.TempDir(), "inventory.db"), Now: clock.Now, SweepInterval: 5 * time.Millisecond})
	res, err := r.client.ReserveStock(ctx(t), &inventoryv1.ReserveStockRequest{
		OrderId: "order-1", Lines: []*inventoryv1.Line{line("mouse-001", 1)},
	})
	if err != nil {
		t.Fatalf("ReserveStock: %v", err)
	}
	clock.Advance(DefaultReservationTTL)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := r.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: res.GetId()})
		if err == nil && got.GetState() == released {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reservation = %v, %v; want RELEASED by the sweeper within 5s", got.GetState(), err)
		}
		time.Sleep(5 * time.Millisecond) // waiting on a real ticker, not moving state
	}
}

func TestRunConfigErrors(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no logger", Config{DB: filepath.Join(t.TempDir(), "a.db")}},
		{"negative TTL", Config{Logger: logger, ReservationTTL: -1}},
		{"negative sweep interval", Config{Logger: logger, SweepInterval: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Run(ctx(t), tt.cfg); err == nil {
				t.Errorf("Run(%+v) = nil, want an error", tt.cfg)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil) = nil error, want one")
	}
	store, err := OpenSQLite(t.Context(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := New(store, WithReservationTTL(-time.Second)); err == nil {
		t.Error("New(negative TTL) = nil error, want one")
	}
}
