package payment

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	paymentv1 "github.com/portico-gateway/portico/gen/portico/payment/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// TestRefundPaymentEtag: a refund with an etag (field or if-match
// metadata) goes ahead only while the etag is current, on both store
// backends; a refunded payment is answered whatever the etag (RFC 9110
// section 13.1.1: the change was applied).
func TestRefundPaymentEtag(t *testing.T) {
	tests := []struct {
		name        string
		field, meta string // "current" is the payment's etag
		wantCode    codes.Code
	}{
		{name: "stale field", field: "stale", wantCode: codes.FailedPrecondition},
		{name: "stale metadata", meta: "stale", wantCode: codes.FailedPrecondition},
		{name: "current field", field: "current"},
		{name: "current metadata", meta: "current"},
	}
	backends(t, func(t *testing.T, db string) {
		f := newFixture(t, db)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := f.create(t, "key-"+tt.name, charge("order-"+strings.ReplaceAll(tt.name, " ", "-"), 100, MethodCardOK))
				if p.GetEtag() == "" {
					t.Fatalf("CreatePayment answered no etag: %v", p)
				}
				pick := map[string]string{"current": p.GetEtag(), "stale": "stale", "": ""}
				c := ctx(t)
				if tt.meta != "" {
					c = metadata.AppendToOutgoingContext(c, callmeta.IfMatchKey, pick[tt.meta])
				}
				got, err := f.client.RefundPayment(c, &paymentv1.RefundPaymentRequest{Id: p.GetId(), Etag: pick[tt.field]})
				checkErr(t, "RefundPayment", err, tt.wantCode, map[bool]string{true: "ETAG_MISMATCH"}[tt.wantCode != codes.OK])
				read, rerr := f.client.GetPayment(ctx(t), &paymentv1.GetPaymentRequest{Id: p.GetId()})
				if rerr != nil {
					t.Fatal(rerr)
				}
				if err != nil {
					if read.GetStatus() != paymentv1.Payment_STATUS_CAPTURED || rpcerr.ErrorInfo(err).GetMetadata()["etag"] != p.GetEtag() {
						t.Errorf("after a refused refund: %v, error metadata %v; want CAPTURED and the current etag", read.GetStatus(), rpcerr.ErrorInfo(err).GetMetadata())
					}
					return
				}
				if read.GetStatus() != paymentv1.Payment_STATUS_REFUNDED || got.GetEtag() != read.GetEtag() || got.GetEtag() == p.GetEtag() {
					t.Errorf("refund answered etag %q, read %v %q, before %q: want REFUNDED with a new etag", got.GetEtag(), read.GetStatus(), read.GetEtag(), p.GetEtag())
				}
				again, err := f.client.RefundPayment(ctx(t), &paymentv1.RefundPaymentRequest{Id: p.GetId(), Etag: p.GetEtag()})
				if err != nil || again.GetStatus() != paymentv1.Payment_STATUS_REFUNDED {
					t.Errorf("RefundPayment again with the old etag = %v, %v; want the REFUNDED payment", again.GetStatus(), err)
				}
			})
		}
	})
}
