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

// idempotencyKey returns the call's key. A missing key is an error of its
// own (reason IDEMPOTENCY_KEY_MISSING, plus a BadRequest naming the field);
// an invalid one is recorded in v so it is reported with every other bad
// field.
func idempotencyKey(ctx context.Context, v *rpcerr.Violations) (string, error) {
	key := callmeta.IdempotencyKeyFromIncoming(ctx)
	if key == "" {
		st := status.New(codes.InvalidArgument, "the idempotency-key metadata is required")
		st, _ = st.WithDetails(
			&errdetails.ErrorInfo{Domain: Domain, Reason: reasonIdempotencyKeyMissing},
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
