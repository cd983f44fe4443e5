package gateway

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// captureConn is an upstream connection as the edge's handlers call it
// (the generated ones and the descriptor path's, transcode): each unary
// call's request message is recorded in the exchange's stale capture, so
// a copy is keyed by the message the upstream was sent, bound once by
// grpc-gateway. It wraps the connection, whatever DialFunc made it, so
// it runs before every layer of the connection's chain: a call a breaker,
// bulkhead or retry budget refuses has its message too, and its copy is
// answered. It records a reference, not a marshalled copy: the key is
// worked out only when a copy is kept or looked for (staleCapture.key).
type captureConn struct{ cc *grpc.ClientConn }

var _ grpc.ClientConnInterface = captureConn{}

// Invoke records req (captureRequest), then calls.
func (c captureConn) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	captureRequest(ctx, req)
	return c.cc.Invoke(ctx, method, req, reply, opts...)
}

// captureRequest hands req to the stale capture of ctx's exchange, when
// its request keeps copies.
func captureRequest(ctx context.Context, req any) {
	if ex := exchangeFrom(ctx); ex.stale != nil {
		if msg, ok := req.(proto.Message); ok {
			ex.stale.msg = msg
		}
	}
}

// NewStream is the connection's: streams keep no copies.
func (c captureConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.cc.NewStream(ctx, desc, method, opts...)
}
