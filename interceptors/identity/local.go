package identity

import (
	"context"
	"errors"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
)

// errRemote is the refusal of a remote caller by a service without keys.
var errRemote = errors.New("this service has no identity keys, so it trusts the caller metadata of local callers only")

// Local reports whether the call's peer is on this host: a loopback TCP
// address, a Unix socket or an in-process connection (bufconn). A call
// with no peer is not local.
func Local(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return false
	}
	switch a := p.Addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UDPAddr, *net.IPAddr:
		return false
	case *net.UnixAddr:
		return true
	}
	return p.Addr.Network() == "bufconn"
}

// TrustLocalUnaryServerInterceptor is the identity step of a service
// started without keys: a local caller (Local) is trusted as sent, as
// services behaved before identity keys existed; any other caller is
// UNAUTHENTICATED like one without an assertion. Health and reflection
// stay open.
func TrustLocalUnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if Open(info.FullMethod) || Local(ctx) {
			return h(ctx, req)
		}
		return nil, refuse(errRemote)
	}
}

// TrustLocalStreamServerInterceptor is TrustLocalUnaryServerInterceptor
// for streams.
func TrustLocalStreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if Open(info.FullMethod) || Local(ss.Context()) {
			return h(srv, ss)
		}
		return refuse(errRemote)
	}
}
