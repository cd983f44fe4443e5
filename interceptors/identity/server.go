package identity

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	typev1 "github.com/portico-gateway/portico/gen/portico/type/v1"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Domain is the ErrorInfo domain of the refusals.
const Domain = "identity.portico.dev"

// openServices answer without an identity: probes and tooling.
var openServices = []string{
	"/grpc.health.v1.Health/",
	"/grpc.reflection.v1.ServerReflection/",
	"/grpc.reflection.v1alpha.ServerReflection/",
}

// Open reports whether a full method is served without an identity (health
// and reflection).
func Open(method string) bool {
	for _, p := range openServices {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}

// UnaryServerInterceptor refuses every call but health and reflection
// unless it carries exactly one assertion v verifies: UNAUTHENTICATED with
// reason UNAUTHENTICATED_CALLER, whatever other metadata the call carries.
// A nil v verifies nothing (a service started without keys refuses every
// call). On success the handler's context carries the claims (FromContext)
// and its incoming metadata carries the verified subject and role under
// callmeta.SubjectKey and RoleKey, replacing whatever the caller sent.
func UnaryServerInterceptor(v *Verifier) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if Open(info.FullMethod) {
			return h(ctx, req)
		}
		ctx, err := v.incoming(ctx)
		if err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
}

// StreamServerInterceptor is UnaryServerInterceptor for streams (Portico's
// APIs are unary; reflection and health watches stay open).
func StreamServerInterceptor(v *Verifier) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if Open(info.FullMethod) {
			return h(srv, ss)
		}
		ctx, err := v.incoming(ss.Context())
		if err != nil {
			return err
		}
		return h(srv, &stream{ServerStream: ss, ctx: ctx})
	}
}

type stream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *stream) Context() context.Context { return s.ctx }

// incoming verifies the call's assertion and returns the handler's context.
func (v *Verifier) incoming(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	toks := md.Get(callmeta.IdentityKey)
	if v == nil {
		return ctx, refuse(errors.New("this service has no identity keys, so it accepts no caller"))
	}
	if len(toks) > 1 {
		return ctx, refuse(ErrMalformed)
	}
	tok := ""
	if len(toks) == 1 {
		tok = toks[0]
	}
	c, err := v.Verify(tok)
	if err != nil {
		return ctx, refuse(err)
	}
	md = md.Copy()
	md.Set(callmeta.SubjectKey, c.Subject)
	md.Set(callmeta.RoleKey, c.Role)
	return NewContext(metadata.NewIncomingContext(ctx, md), c), nil
}

func refuse(err error) error {
	msg := strings.TrimPrefix(err.Error(), "identity: ")
	return rpcerr.Fail(Domain, typev1.Reason_REASON_UNAUTHENTICATED_CALLER, "no verified caller identity: "+msg)
}
