package inventory

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
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
	v, as := grpctest.CallAs(t, inventoryv1.InventoryService_ServiceDesc.ServiceName, callmeta.Principal{Subject: "course-admin", Role: callmeta.RoleAdmin})
	cfg.Identity = v
	conn, stop := grpctest.Run(t, func(ctx context.Context, lis net.Listener) error {
		cfg.Listener = lis
		return Run(ctx, cfg)
	}, as)
	return &running{inventoryv1.NewInventoryServiceClient(conn), healthpb.NewHealthClient(conn), stop}
}

func TestRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inventory.db")
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

// TestRunSweeps: Run's sweeper releases a reservation once its default
// TTL has passed. It runs in a synctest bubble: the five minutes pass at
// once, and synctest.Wait returns when the sweep that the last tick
// started has finished. A 1m interval (a divisor of the TTL) keeps the
// sweeps to five.
func TestRunSweeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRun(t, Config{DB: filepath.Join(t.TempDir(), "inventory.db"), SweepInterval: time.Minute})
		res, err := r.client.ReserveStock(ctx(t), &inventoryv1.ReserveStockRequest{
			OrderId: "order-1", Lines: []*inventoryv1.Line{line("mouse-001", 1)},
		})
		if err != nil {
			t.Fatalf("ReserveStock: %v", err)
		}
		state := func() inventoryv1.Reservation_State {
			t.Helper()
			synctest.Wait()
			got, err := r.client.GetReservation(ctx(t), &inventoryv1.GetReservationRequest{Id: res.GetId()})
			if err != nil {
				t.Fatalf("GetReservation: %v", err)
			}
			return got.GetState()
		}
		time.Sleep(DefaultReservationTTL - time.Nanosecond)
		if got := state(); got != active {
			t.Fatalf("reservation just before its TTL = %v, want ACTIVE", got)
		}
		time.Sleep(time.Nanosecond)
		if got := state(); got != released {
			t.Fatalf("reservation at its TTL = %v, want RELEASED by the sweeper", got)
		}
	})
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
