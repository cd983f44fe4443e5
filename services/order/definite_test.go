package order

import (
	"context"
	"math"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/services/payment"
)

// Hooks for the stubs: a dependency answering a definite error.
func reserveAnswers(err error) func(h *harness) {
	return func(h *harness) {
		h.invStub.set(func(k *invHooks) {
			k.reserve = func(context.Context, *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
				return nil, err
			}
		})
	}
}

func chargeAnswers(err error) func(h *harness) {
	return func(h *harness) {
		h.payStub.set(func(k *payHooks) {
			k.create = func(context.Context, *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
				return nil, err
			}
		})
	}
}

func commitAnswers(err error) func(h *harness) {
	return func(h *harness) {
		h.invStub.set(func(k *invHooks) {
			k.commit = func(context.Context, *inventoryv1.CommitReservationRequest) (*inventoryv1.Reservation, error) {
				return nil, err
			}
		})
	}
}

// TestCreateOrderDefiniteFailures: every definite answer settles the order.
// Only unknown outcomes leave it PENDING; a definite error without a
// business rule of its own compensates (refund captures, release stock) and
// fails it, and an invalid total never reaches the payment service.
func TestCreateOrderDefiniteFailures(t *testing.T) {
	const big = 1_000_000_000_000 // inventory's largest unit price
	tests := []struct {
		name       string
		req        *orderv1.CreateOrderRequest
		setup      func(h *harness)
		wantCode   codes.Code
		wantReason string
		wantMeta   map[string]string
		wantStatus orderv1.Order_Status
		wantFail   string
		wantRes    inventoryv1.Reservation_State
		wantCharge int
		wantRefund int
		wantTotal  int64 // checked when not 0
	}{{
		name: "price times quantity overflows", req: orderReq("pm_card_ok", "gold-001", 2),
		setup:    func(h *harness) { h.inv.setStock("gold-001", math.MaxInt64, 10) },
		wantCode: codes.FailedPrecondition, wantReason: reasonInvalidTotal, wantMeta: map[string]string{MetaCause: causeOverflow},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidTotal, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "sum of lines overflows", req: orderReq("pm_card_ok", "gold-001", 1, "gold-002", 1),
		setup: func(h *harness) {
			h.inv.setStock("gold-001", math.MaxInt64-1, 10)
			h.inv.setStock("gold-002", 2, 10)
		},
		wantCode: codes.FailedPrecondition, wantReason: reasonInvalidTotal, wantMeta: map[string]string{MetaCause: causeOverflow},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidTotal, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "total at the payment limit", req: orderReq("pm_card_ok", "big-001", 1000),
		setup:      func(h *harness) { h.inv.setStock("big-001", big, 5000) },
		wantStatus: orderv1.Order_STATUS_CONFIRMED, wantRes: inventoryv1.Reservation_STATE_COMMITTED, wantCharge: 1,
		wantTotal: payment.MaxAmountMinor,
	}, {
		name: "total above the payment limit", req: orderReq("pm_card_ok", "big-001", 1000, "big-002", 1),
		setup: func(h *harness) {
			h.inv.setStock("big-001", big, 5000)
			h.inv.setStock("big-002", 1, 5000)
		},
		wantCode: codes.FailedPrecondition, wantReason: reasonInvalidTotal, wantMeta: map[string]string{MetaCause: causeAboveLimit},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidTotal, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "zero total", req: orderReq("pm_card_ok", "free-001", 3),
		setup:    func(h *harness) { h.inv.setStock("free-001", 0, 10) },
		wantCode: codes.FailedPrecondition, wantReason: reasonInvalidTotal, wantMeta: map[string]string{MetaCause: causeZeroTotal},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidTotal, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "mixed currencies", req: orderReq("pm_card_ok", "keyboard-001", 1, "mouse-001", 1),
		setup: func(h *harness) {
			h.invStub.set(func(k *invHooks) {
				k.reserve = func(ctx context.Context, r *inventoryv1.ReserveStockRequest) (*inventoryv1.Reservation, error) {
					res, err := h.inv.ReserveStock(ctx, r)
					if err == nil {
						res.GetLines()[1].GetUnitPrice().Currency = "EUR"
					}
					return res, err
				}
			})
		},
		wantCode: codes.FailedPrecondition, wantReason: reasonInvalidTotal, wantMeta: map[string]string{MetaCause: causeMixedCurrencies},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidTotal, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "unknown payment method", req: orderReq("pm_bogus", "keyboard-001", 1),
		wantCode: codes.FailedPrecondition, wantReason: reasonInvalidPaymentRequest,
		wantMeta:   map[string]string{MetaStep: stepCharge, MetaUpstreamCode: "INVALID_ARGUMENT", MetaUpstreamReason: "UNKNOWN_PAYMENT_METHOD"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureInvalidPaymentRequest, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "payment permission denied", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    chargeAnswers(status.Error(codes.PermissionDenied, "no")),
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepCharge, MetaUpstreamCode: "PERMISSION_DENIED"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "payment unimplemented", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    chargeAnswers(status.Error(codes.Unimplemented, "no")),
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepCharge, MetaUpstreamCode: "UNIMPLEMENTED"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected, wantRes: inventoryv1.Reservation_STATE_RELEASED,
	}, {
		name: "order paid under another key is refunded", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup: func(h *harness) {
			h.payStub.set(func(k *payHooks) {
				k.create = func(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
					other := metadata.NewIncomingContext(ctx, metadata.Pairs("idempotency-key", "elsewhere"))
					if _, err := h.pay.CreatePayment(other, r); err != nil {
						return nil, err
					}
					return nil, payErr(codes.FailedPrecondition, "ORDER_ALREADY_PAID")
				}
			})
		},
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepCharge, MetaUpstreamCode: "FAILED_PRECONDITION", MetaUpstreamReason: "ORDER_ALREADY_PAID"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected, wantRes: inventoryv1.Reservation_STATE_RELEASED,
		wantCharge: 1, wantRefund: 1,
	}, {
		name: "charge comes back refunded", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup: func(h *harness) {
			h.payStub.set(func(k *payHooks) {
				k.create = func(ctx context.Context, r *paymentv1.CreatePaymentRequest) (*paymentv1.Payment, error) {
					p, err := h.pay.CreatePayment(ctx, r)
					if err != nil {
						return nil, err
					}
					return h.pay.RefundPayment(ctx, &paymentv1.RefundPaymentRequest{Id: p.GetId()})
				}
			})
		},
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepCharge, MetaPaymentStatus: "REFUNDED"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected, wantRes: inventoryv1.Reservation_STATE_RELEASED,
		wantCharge: 1, wantRefund: 1,
	}, {
		name: "inventory rejects the reservation request", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    reserveAnswers(invErr(codes.InvalidArgument, "")),
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepReserve, MetaUpstreamCode: "INVALID_ARGUMENT"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected,
	}, {
		name: "inventory precondition without a rule", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    reserveAnswers(invErr(codes.FailedPrecondition, "SOMETHING_NEW")),
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepReserve, MetaUpstreamCode: "FAILED_PRECONDITION", MetaUpstreamReason: "SOMETHING_NEW"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected,
	}, {
		name: "commit finds no reservation: refund and release", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    commitAnswers(invErr(codes.NotFound, "RESERVATION_NOT_FOUND")),
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepCommit, MetaUpstreamCode: "NOT_FOUND", MetaUpstreamReason: "RESERVATION_NOT_FOUND"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected, wantRes: inventoryv1.Reservation_STATE_RELEASED,
		wantCharge: 1, wantRefund: 1,
	}, {
		name: "commit out of range", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup:    commitAnswers(status.Error(codes.OutOfRange, "no")),
		wantCode: codes.FailedPrecondition, wantReason: reasonUpstreamRejected,
		wantMeta:   map[string]string{MetaStep: stepCommit, MetaUpstreamCode: "OUT_OF_RANGE"},
		wantStatus: orderv1.Order_STATUS_FAILED, wantFail: failureUpstreamRejected, wantRes: inventoryv1.Reservation_STATE_RELEASED,
		wantCharge: 1, wantRefund: 1,
	}, {
		// A capture that cannot be given back is never hidden behind FAILED.
		name: "refund refused while compensating stays pending", req: orderReq("pm_card_ok", "keyboard-001", 1),
		setup: func(h *harness) {
			commitAnswers(invErr(codes.NotFound, "RESERVATION_NOT_FOUND"))(h)
			h.payStub.set(func(k *payHooks) {
				k.refund = func(context.Context, *paymentv1.RefundPaymentRequest) (*paymentv1.Payment, error) {
					return nil, status.Error(codes.PermissionDenied, "no")
				}
			})
		},
		wantStatus: orderv1.Order_STATUS_PENDING, wantRes: inventoryv1.Reservation_STATE_ACTIVE, wantCharge: 1,
	}, {
		name: "payments unlisted while compensating stays pending", req: orderReq("pm_bogus", "keyboard-001", 1),
		setup: func(h *harness) {
			h.payStub.set(func(k *payHooks) {
				k.list = func(ctx context.Context, _ *paymentv1.ListPaymentsRequest) (*paymentv1.ListPaymentsResponse, error) {
					return nil, unavailableErr(ctx)
				}
			})
		},
		wantStatus: orderv1.Order_STATUS_PENDING, wantRes: inventoryv1.Reservation_STATE_ACTIVE,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.setup != nil {
				tt.setup(h)
			}
			o, err := h.client.CreateOrder(alice(t, "k1"), tt.req)
			checkErr(t, err, tt.wantCode, tt.wantReason, tt.wantMeta)
			recs := h.stored()
			if len(recs) != 1 {
				t.Fatalf("stored orders = %d, want 1", len(recs))
			}
			rec := recs[0]
			checkStored(t, h, rec, tt.wantStatus, tt.wantFail, tt.wantRes, tt.wantCharge, tt.wantRefund)
			if err == nil && o.GetStatus() != tt.wantStatus {
				t.Errorf("CreateOrder() status = %v, want %v", o.GetStatus(), tt.wantStatus)
			}
			if tt.wantTotal != 0 && rec.Order.GetTotal().GetAmountMinor() != tt.wantTotal {
				t.Errorf("total = %v, want %d", rec.Order.GetTotal(), tt.wantTotal)
			}
			if tt.wantFail == failureInvalidTotal && h.payStub.creates.Load() != 0 {
				t.Errorf("CreatePayment calls = %d, want none for an invalid total", h.payStub.creates.Load())
			}
			if got := rec.Order.GetTotal().GetAmountMinor(); got < 0 {
				t.Errorf("stored total = %d, want never negative", got)
			}
		})
	}
}
