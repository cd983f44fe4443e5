package order

import (
	"context"
	"testing"
	"time"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/sqlitedb"
)

func TestNew(t *testing.T) {
	store, err := OpenSQLite(context.Background(), sqlitedb.Memory)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	defer store.Close()
	inv, pay := inventoryv1.NewInventoryServiceClient(nil), paymentv1.NewPaymentServiceClient(nil)
	tests := []struct {
		name    string
		store   Store
		inv     Inventory
		pay     Payments
		opts    []Option
		wantErr bool
	}{
		{"complete", store, inv, pay, []Option{WithReconcileAfter(0), WithBudget(time.Second)}, false},
		{"no store", nil, inv, pay, nil, true},
		{"no inventory", store, nil, pay, nil, true},
		{"no payments", store, inv, nil, nil, true},
		{"nil option", store, inv, pay, []Option{nil}, true},
		{"nil logger", store, inv, pay, []Option{WithLogger(nil)}, true},
		{"zero budget", store, inv, pay, []Option{WithBudget(0)}, true},
		{"negative reconcile age", store, inv, pay, []Option{WithReconcileAfter(-time.Second)}, true},
		{"reconcile rounds and backoff", store, inv, pay, []Option{WithReconcileRounds(1), WithReconcileBackoff(time.Millisecond)}, false},
		{"zero reconcile rounds", store, inv, pay, []Option{WithReconcileRounds(0)}, true},
		{"zero reconcile backoff", store, inv, pay, []Option{WithReconcileBackoff(0)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.store, tt.inv, tt.pay, tt.opts...); (err != nil) != tt.wantErr {
				t.Errorf("New() error = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestAnswerSlice(t *testing.T) {
	tests := []struct {
		remaining, want time.Duration
	}{
		{10 * time.Second, 50 * time.Millisecond},
		{500 * time.Millisecond, 50 * time.Millisecond},
		{200 * time.Millisecond, 20 * time.Millisecond},
		{0, 0},
		{-time.Second, 0},
	}
	for _, tt := range tests {
		if got := answerSlice(tt.remaining); got != tt.want {
			t.Errorf("answerSlice(%v) = %v, want %v", tt.remaining, got, tt.want)
		}
	}
}
