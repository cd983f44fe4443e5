package payment

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/pagebudget"
)

func TestCreatePaymentValidation(t *testing.T) {
	f := newFixture(t, "")
	tests := []struct {
		name       string
		key        string
		req        *paymentv1.CreatePaymentRequest
		wantReason string
		wantFields []string
	}{
		{"no order id", "k", charge("", 100, MethodCardOK), "", []string{"order_id"}},
		{"order id too long", "k", charge(strings.Repeat("o", 65), 100, MethodCardOK), "", []string{"order_id"}},
		{"order id outside the id alphabet", "k", charge("o 1/<x>", 100, MethodCardOK), "", []string{"order_id"}},
		{"amount above the cap", "k", charge("o1", MaxAmountMinor+1, MethodCardOK), "", []string{"amount.amount_minor"}},
		{"max int64 amount", "k", charge("o1", math.MaxInt64, MethodCardOK), "", []string{"amount.amount_minor"}},
		{"no amount", "k", &paymentv1.CreatePaymentRequest{OrderId: "o1", PaymentMethod: MethodCardOK}, "", []string{"amount"}},
		{"zero amount", "k", charge("o1", 0, MethodCardOK), "", []string{"amount"}},
		{"negative amount", "k", charge("o1", -5, MethodCardOK), "", []string{"amount", "amount.amount_minor"}},
		{"bad currency", "k", &paymentv1.CreatePaymentRequest{OrderId: "o1", Amount: &typev1.Money{AmountMinor: 1, Currency: "usd"}, PaymentMethod: MethodCardOK},
			"", []string{"amount.currency"}},
		{"no method", "k", charge("o1", 100, ""), "", []string{"payment_method"}},
		{"unknown method", "k", charge("o1", 100, "pm_card_gold"), reasonUnknownPaymentMethod, []string{"payment_method"}},
		{"500 KB method", "k", charge("o1", 100, strings.Repeat("m", 500_000)), "", []string{"payment_method"}},
		{"every field bad", "k", &paymentv1.CreatePaymentRequest{Amount: &typev1.Money{Currency: "EURO"}, PaymentMethod: "cash"},
			reasonUnknownPaymentMethod, []string{"order_id", "amount", "amount.currency", "payment_method"}},
		{"no key", "", charge("o1", 100, MethodCardOK), reasonIdempotencyKeyMissing, nil},
		{"blank key", "   ", charge("o1", 100, MethodCardOK), reasonIdempotencyKeyMissing, nil},
		{"key too long", strings.Repeat("k", 256), charge("o1", 100, MethodCardOK), reasonIdempotencyKeyMissing, nil},
		{"no key and bad fields", "", charge("", 0, "cash"), reasonIdempotencyKeyMissing,
			[]string{"order_id", "amount", "payment_method"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ctx(t)
			if tt.key != "" {
				c = keyed(t, tt.key)
			}
			_, err := f.client.CreatePayment(c, tt.req)
			checkErr(t, "CreatePayment", err, codes.InvalidArgument, tt.wantReason)
			if d := cmp.Diff(tt.wantFields, badFields(err)); d != "" {
				t.Errorf("CreatePayment bad fields (-want +got):\n%s", d)
			}
		})
	}
	if got := f.list(t, "o1"); len(got) != 0 {
		t.Errorf("payments after invalid requests = %v, want none", got)
	}
	// The key of a rejected request is not spent.
	if p := f.create(t, "k", charge("o1", 100, MethodCardOK)); p.GetStatus() != paymentv1.Payment_STATUS_CAPTURED {
		t.Errorf("CreatePayment after rejections = %v, want CAPTURED", p)
	}
	if p := f.create(t, "k-cap", charge("o2", MaxAmountMinor, MethodCardOK)); p.GetAmount().GetAmountMinor() != MaxAmountMinor {
		t.Errorf("CreatePayment(amount at the cap) = %v, want it charged", p)
	}
}

func TestCreatePaymentMethods(t *testing.T) {
	tests := []struct {
		method     string
		wantStatus paymentv1.Payment_Status
		wantReason string
	}{
		{MethodCardOK, paymentv1.Payment_STATUS_CAPTURED, ""},
		{MethodCardDeclined, paymentv1.Payment_STATUS_DECLINED, failureCardDeclined},
		{MethodCardInsufficientFunds, paymentv1.Payment_STATUS_DECLINED, failureInsufficientFunds},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, "")
				got := f.create(t, "key-1", charge("order-1", 4999, tt.method))
				want := &paymentv1.Payment{
					OrderId: "order-1", Amount: usd(4999), PaymentMethod: tt.method,
					Status: tt.wantStatus, FailureReason: tt.wantReason,
					CreateTime: timestamppb.New(time.Now()), UpdateTime: timestamppb.New(time.Now()),
				}
				if d := cmp.Diff(want, got, protocmp.Transform(), protocmp.IgnoreFields(&paymentv1.Payment{}, "id", "etag")); d != "" {
					t.Errorf("CreatePayment(%s) (-want +got):\n%s", tt.method, d)
				}
				if !strings.HasPrefix(got.GetId(), "pay-") {
					t.Errorf("payment id = %q, want pay-...", got.GetId())
				}
				stored, err := f.client.GetPayment(ctx(t), &paymentv1.GetPaymentRequest{Id: got.GetId()})
				if d := cmp.Diff(got, stored, protocmp.Transform()); err != nil || d != "" {
					t.Errorf("GetPayment = %v (-created +stored):\n%s", err, d)
				}
			})
		})
	}
}

func TestCreatePaymentIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "")
		first := f.create(t, "key-1", charge("order-1", 100, MethodCardDeclined))
		time.Sleep(time.Second)
		if again := f.create(t, "key-1", charge("order-1", 100, MethodCardDeclined)); !cmp.Equal(first, again, protocmp.Transform()) {
			t.Errorf("repeat a second later = %v, want the first result %v", again, first)
		}
	})
	f := newFixture(t, "")
	first := f.create(t, "key-1", charge("order-1", 100, MethodCardDeclined))
	tests := []struct {
		name string
		req  *paymentv1.CreatePaymentRequest
	}{
		{"other amount", charge("order-1", 101, MethodCardDeclined)},
		{"other order", charge("order-2", 100, MethodCardDeclined)},
		{"other method", charge("order-1", 100, MethodCardOK)},
		{"other currency", &paymentv1.CreatePaymentRequest{OrderId: "order-1", Amount: &typev1.Money{AmountMinor: 100, Currency: "EUR"}, PaymentMethod: MethodCardDeclined}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.CreatePayment(keyed(t, "key-1"), tt.req)
			checkErr(t, "CreatePayment", err, codes.FailedPrecondition, reasonIdempotencyKeyReused)
		})
	}
	if got := f.list(t, "order-1"); len(got) != 1 {
		t.Errorf("order-1 has %d payments, want 1", len(got))
	}
	// The repeat reports the payment as it is now.
	if _, err := f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: first.GetId()}); err == nil {
		t.Fatal("refunding a declined payment succeeded")
	}
	captured := f.create(t, "key-2", charge("order-1", 100, MethodCardOK))
	if _, err := f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: captured.GetId()}); err != nil {
		t.Fatal(err)
	}
	if again := f.create(t, "key-2", charge("order-1", 100, MethodCardOK)); again.GetId() != captured.GetId() || again.GetStatus() != paymentv1.Payment_STATUS_REFUNDED {
		t.Errorf("repeat after refund = %v, want %s REFUNDED", again, captured.GetId())
	}
}

func TestOrderAlreadyPaid(t *testing.T) {
	f := newFixture(t, "")
	declined := f.create(t, "key-0", charge("order-1", 100, MethodCardInsufficientFunds))
	paid := f.create(t, "key-1", charge("order-1", 100, MethodCardOK))
	tests := []struct {
		name, key string
		method    string
	}{
		{"second capture", "key-2", MethodCardOK},
		{"decline after capture", "key-3", MethodCardDeclined},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.CreatePayment(keyed(t, tt.key), charge("order-1", 100, tt.method))
			checkErr(t, "CreatePayment", err, codes.FailedPrecondition, reasonOrderAlreadyPaid)
		})
	}
	got := f.list(t, "order-1")
	if len(got) != 2 || got[0].GetId() != declined.GetId() || got[1].GetId() != paid.GetId() {
		t.Errorf("order-1 payments = %v, want the decline then the capture", got)
	}
	// A refund frees the order, and the key of the refused attempt still works.
	if _, err := f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: paid.GetId()}); err != nil {
		t.Fatal(err)
	}
	if p := f.create(t, "key-2", charge("order-1", 100, MethodCardOK)); p.GetStatus() != paymentv1.Payment_STATUS_CAPTURED {
		t.Errorf("capture after refund = %v, want CAPTURED", p)
	}
}

// TestListPaymentsPages: an order's payments list in pages bounded by count
// and by bytes (pagebudget.MaxBytes), even for payments whose method was
// stored before it was bounded, and the page tokens walk every payment once,
// oldest first, including payments that share a create time.
func TestListPaymentsPages(t *testing.T) {
	tests := []struct {
		name      string
		n         int
		method    string
		size      int32
		wantPages []int // nil: only check the byte budget
	}{
		{"default page of 50", 120, MethodCardDeclined, 0, []int{50, 50, 20}},
		{"page of 7", 20, MethodCardDeclined, 7, []int{7, 7, 6}},
		{"100 KB methods", 60, strings.Repeat("m", 100_000), 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFixture(t, "")
				var want []string
				for i := range tt.n {
					if i%3 == 0 {
						time.Sleep(time.Second) // others share a create time
					}
					id := fmt.Sprintf("pay-%03d", tt.n-i) // ids against insertion order
					p := Payment{ID: id, OrderID: "o1", Amount: Money{1, "USD"}, Method: tt.method, Status: StatusDeclined,
						CreateTime: time.Now(), UpdateTime: time.Now()}
					if err := f.store.InTx(ctx(t), func(tx Tx) error {
						return tx.InsertPayment(ctx(t), p, Key{Key: id, RequestHash: make([]byte, 32), PaymentID: id})
					}); err != nil {
						t.Fatal(err)
					}
					want = append(want, id)
				}
				var got []string
				var pages []int
				tok := ""
				for range tt.n + 1 {
					resp, err := f.client.ListPayments(ctx(t), &paymentv1.ListPaymentsRequest{OrderId: "o1", PageSize: tt.size, PageToken: tok})
					if err != nil {
						t.Fatalf("ListPayments(page %d) = %v", len(pages), err)
					}
					if n := proto.Size(resp); n > pagebudget.MaxBytes {
						t.Errorf("page %d encodes to %d bytes, want at most %d", len(pages), n, pagebudget.MaxBytes)
					}
					pages = append(pages, len(resp.GetPayments()))
					for _, p := range resp.GetPayments() {
						got = append(got, p.GetId())
					}
					if tok = resp.GetNextPageToken(); tok == "" {
						break
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("payments across pages (-want +got):\n%s", diff)
				}
				if tt.wantPages != nil {
					if diff := cmp.Diff(tt.wantPages, pages); diff != "" {
						t.Errorf("page sizes (-want +got):\n%s", diff)
					}
				}
			})
		})
	}
}

func TestListPaymentsInvalid(t *testing.T) {
	f := newFixture(t, "")
	tests := []struct {
		name      string
		req       *paymentv1.ListPaymentsRequest
		wantField string
	}{
		{"negative size", &paymentv1.ListPaymentsRequest{OrderId: "o1", PageSize: -1}, "page_size"},
		{"token not base64", &paymentv1.ListPaymentsRequest{OrderId: "o1", PageToken: "%%%"}, "page_token"},
		{"token with a bad id", &paymentv1.ListPaymentsRequest{OrderId: "o1", PageToken: "cGF5IDE"}, "page_token"}, // "pay 1"
		{"token far too long", &paymentv1.ListPaymentsRequest{OrderId: "o1", PageToken: strings.Repeat("A", 100_000)}, "page_token"},
		// A client cannot craft a token: the bare base64 of a payment id
		// ("pay-1") was accepted before tokens were signed.
		{"crafted token", &paymentv1.ListPaymentsRequest{OrderId: "o1", PageToken: "cGF5LTE"}, "page_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.ListPayments(ctx(t), tt.req)
			checkErr(t, "ListPayments", err, codes.InvalidArgument, "")
			if diff := cmp.Diff([]string{tt.wantField}, badFields(err)); diff != "" {
				t.Errorf("bad fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCreatePaymentReplayHeader: only a repeat with the same key answers
// with the replay marker, which the edge turns into Idempotent-Replayed.
func TestCreatePaymentReplayHeader(t *testing.T) {
	f := newFixture(t, "")
	for i, want := range []string{"", "true"} {
		var hdr metadata.MD
		if _, err := f.client.CreatePayment(keyed(t, "key-r"), charge("order-r", 100, MethodCardOK), grpc.Header(&hdr)); err != nil {
			t.Fatalf("CreatePayment #%d: %v", i+1, err)
		}
		if got := strings.Join(hdr.Get(callmeta.ReplayedKey), ","); got != want {
			t.Errorf("call #%d: %s = %q, want %q", i+1, callmeta.ReplayedKey, got, want)
		}
	}
}
