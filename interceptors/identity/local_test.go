package identity

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

type addr struct{ network string }

func (a addr) Network() string { return a.network }
func (a addr) String() string  { return "x" }

func TestTrustLocal(t *testing.T) {
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 5000} }
	tests := []struct {
		name   string
		addr   net.Addr // nil: no peer in the context
		method string
		want   codes.Code // OK: the handler ran
	}{
		{"loopback v4", tcp("127.0.0.1"), "/portico.order.v1.OrderService/CreateOrder", codes.OK},
		{"loopback v4 other", tcp("127.9.8.7"), "/portico.order.v1.OrderService/CreateOrder", codes.OK},
		{"loopback v6", tcp("::1"), "/portico.order.v1.OrderService/CreateOrder", codes.OK},
		{"unix socket", &net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, "/portico.order.v1.OrderService/CreateOrder", codes.OK},
		{"in-process", addr{"bufconn"}, "/portico.order.v1.OrderService/CreateOrder", codes.OK},
		{"private v4", tcp("10.0.0.7"), "/portico.order.v1.OrderService/CreateOrder", codes.Unauthenticated},
		{"public v6", tcp("2001:db8::1"), "/portico.order.v1.OrderService/CreateOrder", codes.Unauthenticated},
		{"v4-mapped public", tcp("::ffff:192.0.2.1"), "/portico.order.v1.OrderService/CreateOrder", codes.Unauthenticated},
		{"unspecified", tcp("0.0.0.0"), "/portico.order.v1.OrderService/CreateOrder", codes.Unauthenticated},
		{"other network", addr{"pipe"}, "/portico.order.v1.OrderService/CreateOrder", codes.Unauthenticated},
		{"no peer", nil, "/portico.order.v1.OrderService/CreateOrder", codes.Unauthenticated},
		{"health stays open", tcp("10.0.0.7"), "/grpc.health.v1.Health/Check", codes.OK},
		{"reflection stays open", tcp("10.0.0.7"), "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", codes.OK},
	}
	unary := TrustLocalUnaryServerInterceptor()
	stream := TrustLocalStreamServerInterceptor()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.addr != nil {
				ctx = peer.NewContext(ctx, &peer.Peer{Addr: tt.addr})
			}
			ran := false
			_, err := unary(ctx, nil, &grpc.UnaryServerInfo{FullMethod: tt.method}, func(context.Context, any) (any, error) {
				ran = true
				return nil, nil
			})
			if got := status.Code(err); got != tt.want || ran != (tt.want == codes.OK) {
				t.Errorf("unary: code %v, handler ran %v; want %v", got, ran, tt.want)
			}
			ran = false
			err = stream(nil, &fakeStream{ctx: ctx}, &grpc.StreamServerInfo{FullMethod: tt.method}, func(any, grpc.ServerStream) error {
				ran = true
				return nil
			})
			if got := status.Code(err); got != tt.want || ran != (tt.want == codes.OK) {
				t.Errorf("stream: code %v, handler ran %v; want %v", got, ran, tt.want)
			}
		})
	}
}

type fakeStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *fakeStream) Context() context.Context { return s.ctx }
