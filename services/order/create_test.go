package order

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

func unavailableErr(context.Context) error {
	return status.Error(codes.Unavailable, "connection refused")
}

// TestCreateOrderSaga runs one CreateOrder per case against the fakes and
// checks the answer, the stored order and what the dependencies saw.
func TestCreateOrderSaga(t *testing.T) {
	tests := []struct {
		name       string
		req        *orderv1.CreateOrderRequest
		within     time.Duration // the call's deadline; 0 means 5s
		setup      func(h *harness)
		wantCode   codes.Code
		wantReason string
		wantMeta   map[string]string // ErrorInfo metadata besides orderId
		wantStatus orderv1.Order_Status
		wantFail   string // stored failure_reason
		wantStored bool   // an order row is left
		wantRes    inventoryv1.Reservation_State
		wantCharge int // captured payments, refunded or not
		wantRefund int
	}{{
		name: "happy path", req: orderReq("pm_card_ok", "keyboard-001", 2, "mouse-001", 1),
		wantStatus: orderv1.Order_STATUS_CONFIRMED, wantStored: true,
		wantRes: inventoryv1.Reservation_STATE_COMMITTED, wantCharge: 1,
	}, {
		name: "insufficient stock", req: orderReq("pm_card_ok", "keyboard-001", 101),
		wantCode: codes.FailedPrecondition, wantReason: reasonInsufficientStock,
		wantMeta:   map[string]string{"sku": "keyboard-001", "requested": "101", "available": "100"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInsufficientStock, wantStored: true,
	}, {
		name: "unknown sku", req: orderReq("pm_card_ok", "no-such-sku", 1),
		wantCode: codes.NotFound, wantReason: reasonItemNotFound, wantMeta: map[string]string{"sku": "no-such-sku"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureItemNotFound, wantStored: true,
	}, {
		name: "card declined", req: orderReq("pm_card_declined", "keyboard-001", 1),
		wantCode: codes.FailedPrecondition, wantReason: reasonPaymentDeclined,
		wantMeta:   map[string]string{"declineReason": "CARD_DECLINED"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failurePaymentDeclined, wantStored: true,
		wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "insufficient funds", req: orderReq("pm_card_insufficient_funds", "keyboard-001", 1),
		wantCode: codes.FailedPrecondition, wantReason: reasonPaymentDeclined,
		wantMeta:   map[string]string{"declineReason": "INSUFFICIENT_FUNDS"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInsufficientFunds, wantStored: true,
		wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "inventory answers unavailable", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup: func(h *harness) {
			h.invStub.set(func(k *invHooks) {
				k.reserve = func(ctx context.Context, _ *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
					return nil, unavailableErr(ctx)
				}
			})
		},
		wantCode: codes.Unavailable, wantReason: reasonInventoryUnavailable,
	}, {
		name: "inventory listener closed", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    func(h *harness) { h.stopInventory() },
		wantCode: codes.Unavailable, wantReason: reasonInventoryUnavailable,
	}, {
		name: "inventory times out", req: orderReq("pm_card_ok", "keyboard-001", 1), within: 300 * time.Millisecond,
		setup: func(h *harness) {
			h.invStub.set(func(k *invHooks) {
				k.reserve = func(ctx context.Context, _ *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
					return nil, blockUntilDone(ctx)
				}
			})
		},
		wantStatus: orderv1.Order_STATUS_PENDING, wantStored: true,
	}, {
		name: "payment unavailable", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup: func(h *harness) {
			h.payStub.set(func(k *payHooks) {
				k.create = func(ctx context.Context, _ *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
					return nil, unavailableErr(ctx)
				}
			})
		},
		wantStatus: orderv1.Order_STATUS_PENDING, wantStored: true, wantRes: inventoryv1.Reservation_STATE_ACTIVE,
	}, {
		name: "reservation expires before commit", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup: func(h *harness) {
			h.payStub.set(func(k *payHooks) {
				k.create = func(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
					h.inv.expire(r.GetOrderId()) // the TTL runs out while the charge is made
					return h.pay.CreatePayment(ctx, r)
				}
			})
		},
		wantCode: codes.FailedPrecondition, wantReason: reasonReservationExpired,
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureReservationExpired, wantStored: true,
		wantRes: inventoryv1.Reservation_STATE_RELEASED, wantCharge: 1, wantRefund: 1,
	}}
	for _, tt := range tests {
		// In a bubble: the 300ms deadline of "inventory times out" is the
		// bubble's, so a loaded machine cannot make the answer late.
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				if tt.setup != nil {
					tt.setup(h)
				}
				within := tt.within
				if within == 0 {
					within = 5 * time.Second
				}
				o, err := h.client.CreateOrder(asWithin(t, within, "alice", "customer", "k1"), tt.req)
				checkErr(t, err, tt.wantCode, tt.wantReason, tt.wantMeta)
				recs := h.stored()
				if got := len(recs) == 1; got != tt.wantStored {
					t.Fatalf("stored orders = %d, want stored %v", len(recs), tt.wantStored)
				}
				if !tt.wantStored {
					if n, _ := h.pay.count(""); n != 0 {
						t.Errorf("payments = %d, want none", n)
					}
					return
				}
				rec := recs[0]
				if err == nil && o.GetId() != rec.Order.GetId() {
					t.Errorf("answered order %s, stored %s", o.GetId(), rec.Order.GetId())
				}
				if md := rpcerr.ErrorInfo(err).GetMetadata(); err != nil && md[MetaOrderID] != rec.Order.GetId() {
					t.Errorf("error orderId = %q, want %q", md[MetaOrderID], rec.Order.GetId())
				}
				checkStored(t, h, rec, tt.wantStatus, tt.wantFail, tt.wantRes, tt.wantCharge, tt.wantRefund)
			})
		})
	}
}

// checkErr checks err's code, reason and ErrorInfo metadata (orderId aside),
// and that UNAVAILABLE carries RetryInfo.
func checkErr(t *testing.T, err error, code codes.Code, reason string, meta map[string]string) {
	t.Helper()
	if got := status.Code(err); got != code {
		t.Fatalf("CreateOrder() code = %v (%v), want %v", got, err, code)
	}
	if got := rpcerr.Reason(err); got != reason {
		t.Errorf("CreateOrder() reason = %q, want %q", got, reason)
	}
	if info := rpcerr.ErrorInfo(err); info != nil {
		if info.GetDomain() != Domain {
			t.Errorf("domain = %q, want %q", info.GetDomain(), Domain)
		}
		got := map[string]string{}
		for k, v := range info.GetMetadata() {
			if k != MetaOrderID {
				got[k] = v
			}
		}
		if meta == nil {
			meta = map[string]string{}
		}
		if diff := cmp.Diff(meta, got); diff != "" {
			t.Errorf("ErrorInfo metadata mismatch (-want +got):\n%s", diff)
		}
	}
	if code == codes.Unavailable && retryInfo(err) == nil {
		t.Errorf("UNAVAILABLE without RetryInfo: %v", err)
	}
}

func retryInfo(err error) *errdetails.RetryInfo {
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri
		}
	}
	return nil
}

// checkStored checks a stored order against the fakes: the invariant is
// that CONFIRMED means a committed reservation and one capture.
func checkStored(t *testing.T, h *harness, rec *Record, st orderv1.Order_Status, fail string,
	res inventoryv1.Reservation_State, charges, refunds int) {
	t.Helper()
	o := rec.Order
	if o.GetStatus() != st || o.GetFailureReason() != fail {
		t.Errorf("stored %s = %v %q, want %v %q", o.GetId(), o.GetStatus(), o.GetFailureReason(), st, fail)
	}
	if got := h.inv.reservation(o.GetId()).GetState(); got != res {
		t.Errorf("reservation of %s = %v, want %v", o.GetId(), got, res)
	}
	if c, r := h.pay.charges(o.GetId()); c+r != charges || r != refunds {
		t.Errorf("payments of %s: captured %d refunded %d, want %d charges of which %d refunded", o.GetId(), c, r, charges, refunds)
	}
	if o.GetStatus() == orderv1.Order_STATUS_CONFIRMED {
		if o.GetReservationId() == "" || o.GetPaymentId() == "" {
			t.Errorf("CONFIRMED order %s lacks ids: %v", o.GetId(), o)
		}
		if _, calls := h.pay.count(PaymentKey(o.GetId())); calls == 0 {
			t.Errorf("no CreatePayment carried key %q", PaymentKey(o.GetId()))
		}
	}
	if o.GetUpdateTime() == nil || o.GetUpdateTime().AsTime().Before(o.GetCreateTime().AsTime()) {
		t.Errorf("update_time %v before create_time %v", o.GetUpdateTime(), o.GetCreateTime())
	}
}

// TestCreateOrderConfirmed checks the whole answer of the happy path.
func TestCreateOrderConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t)
		o, err := h.client.CreateOrder(alice(t, "k1"), orderReq("pm_card_ok", "keyboard-001", 2, "mouse-001", 1))
		if err != nil {
			t.Fatalf("CreateOrder: %v", err)
		}
		ts := time.Now()
		usd := func(m int64) *typev1.Money { return &typev1.Money{AmountMinor: m, Currency: "USD"} }
		want := &orderv1.Order{
			Id: o.GetId(), Customer: "alice", Status: orderv1.Order_STATUS_CONFIRMED,
			Lines: []*orderv1.OrderLine{
				{Sku: "keyboard-001", Quantity: 2, UnitPrice: usd(4999)},
				{Sku: "mouse-001", Quantity: 1, UnitPrice: usd(2499)},
			},
			Total: usd(2*4999 + 2499), ReservationId: "res-1", PaymentId: "pay-1", PaymentMethod: "pm_card_ok",
		}
		if diff := cmp.Diff(want, o, protocmp.Transform(), protocmp.IgnoreFields(&orderv1.Order{}, "create_time", "update_time", "etag")); diff != "" {
			t.Errorf("CreateOrder() mismatch (-want +got):\n%s", diff)
		}
		if !o.GetCreateTime().AsTime().Equal(ts) || !o.GetUpdateTime().AsTime().Equal(ts) {
			t.Errorf("times = %v, %v; want the bubble's now %v", o.GetCreateTime().AsTime(), o.GetUpdateTime().AsTime(), ts)
		}
		if got, _ := h.pay.count(""); got != 1 {
			t.Errorf("payments = %d, want 1", got)
		}
		if _, calls := h.pay.count("payment:" + o.GetId()); calls != 1 {
			t.Errorf("CreatePayment calls with key payment:%s = %d, want 1", o.GetId(), calls)
		}
		if it := h.inv.item("keyboard-001"); it.sold != 2 || it.available != 98 || it.reserved != 0 {
			t.Errorf("keyboard stock = %+v, want 2 sold, 98 available", it)
		}
	})
}
