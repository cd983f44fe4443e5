package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/services/inventory"
	"github.com/portico-gateway/portico/services/order"
	"github.com/portico-gateway/portico/services/payment"
)

var migrateT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// sqliteData writes one reservation, two payments sharing a create time and
// one settled order into SQLite files under dir, and returns what it wrote.
func sqliteData(t *testing.T, dir string) (inventory.Reservation, []payment.Payment, *order.Record) {
	t.Helper()
	ctx := context.Background()
	inv, err := inventory.OpenSQLite(ctx, filepath.Join(dir, "inventory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	if _, err := inv.Seed(ctx, inventory.Catalogue(migrateT0)); err != nil {
		t.Fatal(err)
	}
	res := inventory.Reservation{ID: "res-1", OrderID: "ord-1", State: inventory.StateCommitted,
		Lines:      []inventory.Line{{SKU: "keyboard-001", Quantity: 2, Price: inventory.Money{Minor: 4999, Currency: "USD"}}},
		ExpireTime: migrateT0.Add(time.Minute), CreateTime: migrateT0, UpdateTime: migrateT0}
	err = inv.InTx(ctx, func(tx inventory.Tx) error {
		if err := tx.MoveStock(ctx, "keyboard-001", inventory.Stock{Available: -2, Sold: 2}, migrateT0); err != nil {
			return err
		}
		return tx.InsertReservation(ctx, res)
	})
	if err != nil {
		t.Fatal(err)
	}

	pay, err := payment.OpenSQLite(ctx, filepath.Join(dir, "payment.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer pay.Close()
	var ps []payment.Payment
	for _, id := range []string{"pay-b", "pay-a"} { // ids against insertion order
		p := payment.Payment{ID: id, OrderID: "ord-1", Amount: payment.Money{Minor: 9998, Currency: "USD"}, Method: "pm_card_declined",
			Status: payment.StatusDeclined, FailureReason: "card_declined", CreateTime: migrateT0, UpdateTime: migrateT0}
		if err := pay.InTx(ctx, func(tx payment.Tx) error {
			return tx.InsertPayment(ctx, p, payment.Key{Key: "k-" + id, RequestHash: bytes.Repeat([]byte{7}, 32), PaymentID: id})
		}); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}

	ord, err := order.OpenSQLite(ctx, filepath.Join(dir, "order.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ord.Close()
	at := timestamppb.New(migrateT0)
	rec := &order.Record{Order: &orderv1.Order{Id: "ord-1", Customer: "alice", Status: orderv1.Order_STATUS_FAILED,
		Lines:         []*orderv1.OrderLine{{Sku: "keyboard-001", Quantity: 2, UnitPrice: &typev1.Money{AmountMinor: 4999, Currency: "USD"}}},
		PaymentMethod: "pm_card_declined", Total: &typev1.Money{AmountMinor: 9998, Currency: "USD"}, ReservationId: "res-1",
		FailureReason: "PAYMENT_DECLINED", CreateTime: at, UpdateTime: at},
		IdempotencyKey: "k1", RequestHash: bytes.Repeat([]byte{9}, 32), FailureInfo: map[string]string{"step": "charge"}}
	if _, err := ord.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	return res, ps, rec
}

// TestMigrate: portico migrate copies every service's rows into its
// schema, and a second run copies nothing and keeps what PostgreSQL has.
func TestMigrate(t *testing.T) {
	url := pgtest.New(t)
	dir := t.TempDir()
	res, ps, rec := sqliteData(t, dir)
	migrate := func() string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Main([]string{"migrate", "--data", dir, "--to", url}, &out, &errb); code != 0 {
			t.Fatalf("portico migrate = %d; stderr %s", code, errb.String())
		}
		return out.String()
	}
	out := migrate()
	for _, want := range []string{"items=6 reservations=1 reservation_lines=1", "payments=2 idempotency_keys=2", "orders=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("first run output lacks %q:\n%s", want, out)
		}
	}
	ctx := context.Background()
	inv, err := inventory.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	if got, err := inv.Reservation(ctx, "res-1"); err != nil || !cmp.Equal(res, got) {
		t.Errorf("reservation in PostgreSQL = %v (-sqlite +postgres):\n%s", err, cmp.Diff(res, got))
	}
	if it, _ := inv.Item(ctx, "keyboard-001"); it.Stock != (inventory.Stock{Available: 98, Sold: 2}) {
		t.Errorf("keyboard stock in PostgreSQL = %+v, want 98 available and 2 sold", it.Stock)
	}
	pay, err := payment.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pay.Close()
	if got, err := pay.Payments(ctx, "ord-1", "", 10); err != nil || !cmp.Equal(ps, got) {
		t.Errorf("payments in PostgreSQL = %v (-sqlite +postgres):\n%s", err, cmp.Diff(ps, got))
	}
	ord, err := order.OpenPostgres(ctx, url, order.Lease{})
	if err != nil {
		t.Fatal(err)
	}
	defer ord.Close()
	if got, err := ord.Get(ctx, "ord-1"); err != nil || !cmp.Equal(rec, got, protocmp.Transform()) {
		t.Errorf("order in PostgreSQL = %v (-sqlite +postgres):\n%s", err, cmp.Diff(rec, got, protocmp.Transform()))
	}

	// PostgreSQL moves on; a second run copies nothing and keeps it.
	if err := inv.InTx(ctx, func(tx inventory.Tx) error {
		return tx.MoveStock(ctx, "keyboard-001", inventory.Stock{Available: -8, Reserved: 8}, migrateT0)
	}); err != nil {
		t.Fatal(err)
	}
	out = migrate()
	for _, want := range []string{"items=0 reservations=0 reservation_lines=0", "payments=0 idempotency_keys=0", "orders=0"} {
		if !strings.Contains(out, want) {
			t.Errorf("second run output lacks %q:\n%s", want, out)
		}
	}
	if it, _ := inv.Item(ctx, "keyboard-001"); it.Stock != (inventory.Stock{Available: 90, Reserved: 8, Sold: 2}) {
		t.Errorf("keyboard stock after a second run = %+v, want PostgreSQL's kept", it.Stock)
	}
}

func TestMigrateUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no target", nil, exitUsage, "--to"},
		{"not postgres", []string{"--to", "var/x.db"}, exitUsage, "want a postgres:// URL"},
		{"unknown service", []string{"--to", "postgres://h/db", "--only", "shipping"}, exitUsage, "--only"},
		{"missing database", []string{"--to", "postgres://h/db", "--only", "order"}, exitFail, "no database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := Main(append([]string{"migrate", "--data", t.TempDir()}, tt.args...), &out, &errb); code != tt.code || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want %d mentioning %q", code, errb.String(), tt.code, tt.want)
			}
		})
	}
}
