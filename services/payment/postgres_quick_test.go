package payment

import (
	"bytes"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/pgtest"
)

// TestQuickCreate: the quick path stores a new key's payment whole, and
// leaves a known key or a paid order to the general path, storing nothing.
func TestQuickCreate(t *testing.T) {
	store, err := OpenPostgres(t.Context(), pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	now := time.Now()
	pay := func(id, order string, st Status) Payment {
		return Payment{ID: id, OrderID: order, Amount: Money{100, "USD"}, Method: "pm_card_ok", Status: st, CreateTime: now, UpdateTime: now}
	}
	hash := bytes.Repeat([]byte{1}, 32)
	for _, tc := range []struct {
		name string
		p    Payment
		key  string
		want bool
	}{
		{"new key", pay("pay-1", "order-1", StatusCaptured), "k1", true},
		{"known key", pay("pay-2", "order-2", StatusCaptured), "k1", false},
		{"paid order, other key", pay("pay-3", "order-1", StatusCaptured), "k3", false},
		{"declined", pay("pay-4", "order-4", StatusDeclined), "k4", true},
		{"capture after a decline", pay("pay-5", "order-4", StatusCaptured), "k5", true},
	} {
		done := store.QuickCreate(t.Context(), tc.p, Key{Key: tc.key, RequestHash: hash, PaymentID: tc.p.ID})
		_, err := store.Payment(t.Context(), tc.p.ID)
		if done != tc.want || (err == nil) != tc.want {
			t.Errorf("%s: QuickCreate = %v, payment stored: %v; want %v", tc.name, done, err == nil, tc.want)
		}
	}
	var keys int
	if err := store.QueryRow(t.Context(), `SELECT count(*) FROM idempotency_keys`).Scan(&keys); err != nil || keys != 3 {
		t.Errorf("%d keys stored (%v), want 3", keys, err)
	}
}
