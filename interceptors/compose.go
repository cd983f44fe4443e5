package interceptors

import (
	"context"

	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/interceptors/call"
)

// compose returns one interceptor that runs layers outermost first, as
// grpc.WithChainUnaryInterceptor(layers...) would. grpc-go's chain makes a
// closure per layer for every call; compose makes one step per call,
// whose invoke method is every layer's next.
//
// compose is the chain's top: the step holds the call's state (package
// call), which it puts in the call's context once, so every layer shares
// it, and a call made with a context from inside another call starts
// afresh.
//
// A step is a cursor over the layers, so each layer must call its next
// synchronously, and again only after the last call returned (as retry
// does): all of Portico's layers do.
func compose(layers []grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	if len(layers) == 1 {
		return layers[0]
	}
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		s := &step{layers: layers, final: invoker}
		s.next = s.invoke
		return s.invoke(call.NewContext(ctx, &s.state), method, req, reply, cc, opts...)
	}
}

// step is one call's place in the layers.
type step struct {
	layers []grpc.UnaryClientInterceptor
	final  grpc.UnaryInvoker
	next   grpc.UnaryInvoker // invoke, made once per call
	i      int               // the layer invoke runs next
	state  call.State        // the call's, shared by its layers
}

// invoke runs layer i with invoke as its next, or the final invoker past
// the last layer; i is restored when the layer returns, so a layer that
// calls next again (a retry) runs the layers after it again.
func (s *step) invoke(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
	i := s.i
	if i == len(s.layers) {
		return s.final(ctx, method, req, reply, cc, opts...)
	}
	s.i = i + 1
	err := s.layers[i](ctx, method, req, reply, cc, s.next, opts...)
	s.i = i
	return err
}
