package identity

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/internal/callmeta"
)

// UnaryClientInterceptor mints an assertion for every call, with the called
// method's service as audience, and sends it as callmeta.IdentityKey. Who
// it names depends on the Minter: a service (WithService) calls as itself on
// behalf of its own verified caller; otherwise the principal the caller
// states with callmeta.WithPrincipal is signed, and its plain subject and
// role keys are dropped from the outgoing metadata. A call that states no
// principal goes without an assertion (the callee refuses it).
func UnaryClientInterceptor(m *Minter) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		ctx, err := m.Outgoing(ctx, method)
		if err != nil {
			return err
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

// Outgoing returns ctx with an assertion for a call of method (a full gRPC
// method, "/portico.inventory.v1.InventoryService/ReserveStock") in its
// outgoing metadata; see UnaryClientInterceptor.
func (m *Minter) Outgoing(ctx context.Context, method string) (context.Context, error) {
	aud := Audience(method)
	if m.s.service != "" {
		var forSubject string
		if c, ok := FromContext(ctx); ok {
			forSubject = c.Subject
			if c.Role == callmeta.RoleService {
				forSubject = c.For
			}
		}
		tok, err := m.Mint(aud, callmeta.Principal{Subject: m.s.service, Role: callmeta.RoleService}, forSubject)
		if err != nil {
			return ctx, status.Error(codes.Internal, err.Error())
		}
		return metadata.AppendToOutgoingContext(ctx, callmeta.IdentityKey, tok), nil
	}
	md, _ := metadata.FromOutgoingContext(ctx) // a copy
	subs, roles := md.Get(callmeta.SubjectKey), md.Get(callmeta.RoleKey)
	if len(subs) == 0 {
		return ctx, nil
	}
	p := callmeta.Principal{Subject: subs[0]}
	if len(roles) > 0 {
		p.Role = roles[0]
	}
	tok, err := m.Mint(aud, p, "")
	if err != nil {
		return ctx, status.Error(codes.Internal, err.Error())
	}
	md.Delete(callmeta.SubjectKey)
	md.Delete(callmeta.RoleKey)
	md.Set(callmeta.IdentityKey, tok)
	return metadata.NewOutgoingContext(ctx, md), nil
}

// Audience returns the service of a full gRPC method name:
// "/portico.order.v1.OrderService/GetOrder" -> "portico.order.v1.OrderService".
func Audience(method string) string {
	s := strings.TrimPrefix(method, "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	return s
}
