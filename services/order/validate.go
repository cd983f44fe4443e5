package order

import (
	"context"
	"crypto/sha256"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Request limits, from the proto contract.
const (
	maxLines    = 50
	maxSKULen   = 64
	maxQuantity = 1000
	maxIDLen    = 64
)

// idempotencyKey returns the call's key. A missing key is an error of its
// own (reason IDEMPOTENCY_KEY_MISSING, plus a BadRequest naming the field);
// an invalid one is recorded in v so it is reported with every other bad
// field.
func idempotencyKey(ctx context.Context, v *rpcerr.Violations) (string, error) {
	key := callmeta.IdempotencyKeyFromIncoming(ctx)
	if key == "" {
		st := status.New(codes.InvalidArgument, "the idempotency-key metadata is required")
		st, _ = st.WithDetails(
			&errdetails.ErrorInfo{Domain: Domain, Reason: ReasonIdempotencyKeyMissing},
			&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{
				Field: "idempotency_key", Description: "required (gRPC metadata idempotency-key)",
			}}},
		)
		return "", st.Err()
	}
	if !callmeta.ValidIdempotencyKey(key) {
		v.Add("idempotency_key", fmt.Sprintf("must be 1-%d printable ASCII characters", callmeta.MaxIdempotencyKeyLen))
	}
	return key, nil
}

// validateCreate records every bad field of req in v.
func validateCreate(req *orderv1.CreateOrderRequest, v *rpcerr.Violations) {
	switch n := len(req.GetLines()); {
	case n == 0:
		v.Add("lines", "at least one line is required")
	case n > maxLines:
		v.Add("lines", fmt.Sprintf("at most %d lines, got %d", maxLines, n))
	}
	first := make(map[string]int, len(req.GetLines()))
	for i, l := range req.GetLines() {
		field := fmt.Sprintf("lines[%d]", i)
		if !validSKU(l.GetSku()) {
			v.Add(field+".sku", fmt.Sprintf("must be 1-%d characters of [a-z0-9-]", maxSKULen))
		} else if j, dup := first[l.GetSku()]; dup {
			v.Add(field+".sku", fmt.Sprintf("duplicates lines[%d].sku; each SKU at most once", j))
		} else {
			first[l.GetSku()] = i
		}
		if q := l.GetQuantity(); q < 1 || q > maxQuantity {
			v.Add(field+".quantity", fmt.Sprintf("must be 1-%d, got %d", maxQuantity, q))
		}
	}
	if req.GetPaymentMethod() == "" {
		v.Add("payment_method", "required")
	}
}

func validSKU(s string) bool {
	if s == "" || len(s) > maxSKULen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validOrderID reports whether id is 1-64 characters of the id alphabet
// [A-Za-z0-9_-], which covers every id this service makes ("ord-<hex>").
// Ids are checked before any lookup, so a NOT_FOUND echoes at most 64 safe
// characters.
func validOrderID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// hashRequest is the SHA-256 of the deterministic marshalling of req with
// its output-only fields (unit prices) cleared, so a client echoing a price
// it was shown still replays rather than conflicting.
func hashRequest(req *orderv1.CreateOrderRequest) []byte {
	c := proto.Clone(req).(*orderv1.CreateOrderRequest)
	for _, l := range c.GetLines() {
		l.UnitPrice = nil
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c) // a valid message always marshals
	sum := sha256.Sum256(b)
	return sum[:]
}
