package payment_test

import (
	"context"
	"fmt"

	"google.golang.org/grpc/metadata"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
	"github.com/portico-gateway/portico/internal/sqlitedb"
	"github.com/portico-gateway/portico/services/payment"
)

// A decline is a result, and an idempotency key replays its first result.
func Example() {
	ctx := context.Background()
	store, err := payment.OpenSQLite(ctx, sqlitedb.Memory)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	svc, err := payment.New(store)
	if err != nil {
		panic(err)
	}
	// Called in-process, the key arrives as incoming metadata.
	withKey := func(key string) context.Context {
		return metadata.NewIncomingContext(ctx, metadata.Pairs(callmeta.IdempotencyKey, key))
	}
	req := func(method string) *paymentv1.CreatePaymentRequest {
		return &paymentv1.CreatePaymentRequest{
			OrderId: "order-1", Amount: &typev1.Money{AmountMinor: 4999, Currency: "USD"}, PaymentMethod: method,
		}
	}
	declined, _ := svc.CreatePayment(withKey("k1"), req(payment.MethodCardDeclined))
	fmt.Println(declined.GetStatus(), declined.GetFailureReason())
	captured, _ := svc.CreatePayment(withKey("k2"), req(payment.MethodCardOK))
	replay, _ := svc.CreatePayment(withKey("k2"), req(payment.MethodCardOK))
	fmt.Println(captured.GetStatus(), replay.GetId() == captured.GetId())
	_, err = svc.CreatePayment(withKey("k2"), req(payment.MethodCardDeclined))
	fmt.Println(rpcerr.Reason(err))
	// Output:
	// STATUS_DECLINED CARD_DECLINED
	// STATUS_CAPTURED true
	// IDEMPOTENCY_KEY_REUSED
}
