package payment

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/testing/protocmp"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func TestGetPayment(t *testing.T) {
	f := newFixture(t, "")
	p := f.create(t, "key-1", charge("order-1", 100, MethodCardOK))
	tests := []struct {
		name       string
		id         string
		want       *paymentv1.Payment
		wantCode   codes.Code
		wantReason string
		wantFields []string
	}{
		{name: "found", id: p.GetId(), want: p},
		{name: "unknown", id: "pay-nope", wantCode: codes.NotFound, wantReason: reasonPaymentNotFound},
		{name: "empty id", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "64 character id", id: "pay-" + strings.Repeat("a", 60), wantCode: codes.NotFound, wantReason: reasonPaymentNotFound},
		{name: "65 character id", id: "pay-" + strings.Repeat("a", 61), wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "5000 character id", id: strings.Repeat("p", 5000), wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
		{name: "id outside the alphabet", id: "pay 1/<b>", wantCode: codes.InvalidArgument, wantFields: []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.client.GetPayment(ctx(t), &paymentv1.GetPaymentRequest{Id: tt.id})
			checkErr(t, "GetPayment", err, tt.wantCode, tt.wantReason)
			if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
				t.Errorf("GetPayment bad fields (-want +got):\n%s", d)
			}
			if tt.wantCode == codes.InvalidArgument && tt.id != "" && echoes(err, tt.id) {
				t.Errorf("GetPayment(%.20q...) echoes the invalid id: %v", tt.id, err)
			}
			if d := cmp.Diff(tt.want, got, protocmp.Transform()); d != "" {
				t.Errorf("GetPayment(%q) (-want +got):\n%s", tt.id, d)
			}
		})
	}
}

func TestListPayments(t *testing.T) {
	f := newFixture(t, "")
	var want []string
	for i, m := range []string{MethodCardDeclined, MethodCardInsufficientFunds, MethodCardDeclined, MethodCardOK} {
		if i != 2 {
			want = append(want, f.create(t, fmt.Sprintf("key-%d", i), charge("order-1", 100, m)).GetId())
			continue
		}
		// Stored third but created an hour earlier (as after a clock step
		// back): create_time, not insertion, orders the list.
		id, at := newID(), time.Now().Add(-time.Hour)
		p := Payment{ID: id, OrderID: "order-1", Amount: Money{100, "USD"}, Method: m, Status: StatusDeclined, CreateTime: at, UpdateTime: at}
		if err := f.store.InTx(ctx(t), func(tx Tx) error {
			return tx.InsertPayment(ctx(t), p, Key{Key: "key-2", RequestHash: make([]byte, 32), PaymentID: id})
		}); err != nil {
			t.Fatal(err)
		}
		want = append([]string{id}, want...)
	}
	f.create(t, "other", charge("order-2", 100, MethodCardOK))
	var got []string
	for _, p := range f.list(t, "order-1") {
		got = append(got, p.GetId())
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ListPayments(order-1) ids, oldest first (-want +got):\n%s", d)
	}
	if got := f.list(t, "order-9"); len(got) != 0 {
		t.Errorf("ListPayments(unknown order) = %v, want none", got)
	}
	for _, bad := range []string{"", strings.Repeat("o", 65), strings.Repeat("o", 5000), "order 1/<b>"} {
		_, err := f.client.ListPayments(ctx(t), &paymentv1.ListPaymentsRequest{OrderId: bad})
		checkErr(t, "ListPayments(bad order id)", err, codes.InvalidArgument, "")
		if d := cmp.Diff([]string{"order_id"}, badFields(err)); d != "" {
			t.Errorf("ListPayments(%.20q) bad fields (-want +got):\n%s", bad, d)
		}
		if bad != "" && echoes(err, bad) {
			t.Errorf("ListPayments(%.20q) echoes the invalid order id: %v", bad, err)
		}
	}
}

func TestRefundPayment(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		refunds    int // before the checked one
		wantStatus paymentv1.Payment_Status
		wantCode   codes.Code
		wantReason string
	}{
		{"captured", MethodCardOK, 0, paymentv1.Payment_STATUS_REFUNDED, codes.OK, ""},
		{"refunded", MethodCardOK, 1, paymentv1.Payment_STATUS_REFUNDED, codes.OK, ""},
		{"declined", MethodCardDeclined, 0, paymentv1.Payment_STATUS_DECLINED, codes.FailedPrecondition, reasonPaymentNotCaptured},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, "")
				start := time.Now()
				p := f.create(t, "key-1", charge("order-1", 100, tt.method))
				var prev *paymentv1.Payment
				for range tt.refunds {
					time.Sleep(time.Second)
					var err error
					if prev, err = f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: p.GetId()}); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Second)
				got, err := f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: p.GetId()})
				checkErr(t, "RefundPayment", err, tt.wantCode, tt.wantReason)
				if err == nil {
					wantUpdate := start.Add(time.Second)
					if prev != nil && !cmp.Equal(prev, got, protocmp.Transform()) {
						t.Errorf("second refund = %v, want unchanged %v", got, prev)
					}
					if !got.GetUpdateTime().AsTime().Equal(wantUpdate) {
						t.Errorf("update_time = %v, want %v", got.GetUpdateTime().AsTime(), wantUpdate)
					}
				}
				stored, err := f.client.GetPayment(ctx(t), &paymentv1.GetPaymentRequest{Id: p.GetId()})
				if err != nil || stored.GetStatus() != tt.wantStatus {
					t.Errorf("stored status = %v, %v; want %v", stored.GetStatus(), err, tt.wantStatus)
				}
			})
		})
	}
	f := newFixture(t, "")
	_, err := f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: "pay-nope"})
	checkErr(t, "RefundPayment(unknown)", err, codes.NotFound, reasonPaymentNotFound)
	for _, bad := range []string{"", strings.Repeat("p", 65), strings.Repeat("p", 5000), "pay 1/<b>", "pay-1\n"} {
		_, err = f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: bad})
		checkErr(t, "RefundPayment(bad id)", err, codes.InvalidArgument, "")
		if d := cmp.Diff([]string{"id"}, badFields(err)); d != "" {
			t.Errorf("RefundPayment(%.20q) bad fields (-want +got):\n%s", bad, d)
		}
		if bad != "" && echoes(err, bad) {
			t.Errorf("RefundPayment(%.20q) echoes the invalid id: %v", bad, err)
		}
	}
}

// TestConcurrentOneKey: 20 racing first uses of one key make one payment.
// Each backend gives each call its own connection.
func TestConcurrentOneKey(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		f := newFixture(t, db)
		const n = 20
		ids := make([]string, n)
		errs := make([]error, n)
		c := keyed(t, "the-key")
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				p, err := f.client.CreatePayment(c, charge("order-1", 100, MethodCardOK))
				ids[i], errs[i] = p.GetId(), err
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Errorf("CreatePayment %d = %q, %v; want %q", i, ids[i], errs[i], ids[0])
			}
		}
		if got := f.list(t, "order-1"); len(got) != 1 {
			t.Errorf("order-1 has %d payments, want 1", len(got))
		}
	})
}

// TestConcurrentCaptures: 20 keys race to capture one order; one wins.
func TestConcurrentCaptures(t *testing.T) {
	backends(t, func(t *testing.T, db string) {
		f := newFixture(t, db)
		const n = 20
		errs := make([]error, n)
		c := ctx(t)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = f.client.CreatePayment(withKey(c, fmt.Sprintf("key-%d", i)), charge("order-1", 100, MethodCardOK))
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case rpcerr.Reason(err) != reasonOrderAlreadyPaid:
				t.Errorf("CreatePayment %d = %v, want success or ORDER_ALREADY_PAID", i, err)
			}
		}
		if got := f.list(t, "order-1"); won != 1 || len(got) != 1 {
			t.Errorf("%d captures won, %d payments stored; want 1 and 1", won, len(got))
		}
	})
}
