package interceptors_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors"
	"github.com/portico-gateway/portico/interceptors/call"
	"github.com/portico-gateway/portico/interceptors/deadline"
)

// TestChainSharesOneState: the layers of an edge-like chain (an address
// list, no timeout of its own) talk to each other through one call state
// only: below the chain a call's context holds exactly one value more than
// the caller's (the state, whatever the deadline's owner and with a
// per-attempt timeout too), and the only call option the layers add is
// the eject layer's own grpc.Peer. A context's String names each of its
// values, which is what is counted.
func TestChainSharesOneState(t *testing.T) {
	tests := []struct {
		name      string
		marked    bool // deadline.WithUpstreamDeadline: the edge's route deadline
		attempt   time.Duration
		wantOwner call.Owner
	}{
		{"the edge's route deadline", true, 0, call.Upstream},
		{"a client's shorter deadline", false, 0, call.Caller},
		{"a client's deadline and a per-attempt timeout", false, time.Minute, call.Upstream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newInstanceSet(t, serving)
			var values, owner, opts string
			bottom := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, callOpts ...grpc.CallOption) error {
				values = fmt.Sprint(strings.Count(fmt.Sprint(ctx), ".WithValue("))
				owner = call.From(ctx).Owner().String()
				var types []string
				for _, o := range callOpts {
					types = append(types, fmt.Sprintf("%T", o))
				}
				opts = strings.Join(types, " ")
				return invoker(ctx, method, req, reply, cc, callOpts...)
			}
			up, err := interceptors.NewUpstream("", interceptors.WithConfig(interceptors.Config{
				Name: "order", Addresses: s.addrs, Timeout: interceptors.NoTimeout,
				Retry: interceptors.RetryConfig{AttemptTimeout: tt.attempt},
			}), interceptors.WithDialOptions(s.net.DialOption(), grpc.WithChainUnaryInterceptor(bottom)), quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer up.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			if tt.marked {
				ctx = deadline.WithUpstreamDeadline(ctx)
			}
			top := strings.Count(fmt.Sprint(ctx), ".WithValue(")
			if _, err := inventoryv1.NewInventoryServiceClient(up.Conn()).GetItem(ctx, &inventoryv1.GetItemRequest{}); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprint(top + 1); values != want {
				t.Errorf("context values below the chain = %s, want %s (the caller's and the call's state)", values, want)
			}
			if owner != tt.wantOwner.String() {
				t.Errorf("deadline owner during the attempt = %s, want %s", owner, tt.wantOwner)
			}
			if want := "grpc.StaticMethodCallOption grpc.PeerCallOption"; opts != want {
				t.Errorf("call options below the chain = %s, want %s", opts, want)
			}
		})
	}
}
