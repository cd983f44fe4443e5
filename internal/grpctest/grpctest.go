// Package grpctest is the harness for testing a gRPC service in process:
// it serves a server (or a service's Run) on an in-memory bufconn listener
// for one test, dials it, stops it when the test ends, and reads the parts
// of a status that Portico's services promise (code, ErrorInfo reason and
// domain, BadRequest fields).
//
// Every wait is bounded (Timeout); nothing outlives the test.
package grpctest

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/rpcerr"
)

// Timeout bounds every call context (Context) and every wait for a server
// to stop.
const Timeout = 10 * time.Second

// Serve serves srv on a bufconn listener until the test ends and returns a
// client connection to it.
func Serve(t testing.TB, srv *grpc.Server) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn := Dial(t, lis)
	t.Cleanup(func() { srv.Stop(); <-done })
	return conn
}

// Run runs run (a service's Run, serving on the listener it is given) on a
// bufconn listener and returns a client connection to it and stop, which
// cancels run's context and waits (bounded) for it to return; the test
// fails if it returns an error. stop is idempotent and runs at test end.
func Run(t testing.TB, run func(ctx context.Context, lis net.Listener) error, opts ...grpc.DialOption) (conn *grpc.ClientConn, stop func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, lis)
		lis.Close() // a run that fails early must not leave clients dialing
		errc <- err
	}()
	conn = Dial(t, lis, opts...)
	stop = sync.OnceFunc(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run = %v, want nil after cancel", err)
			}
		case <-time.After(Timeout):
			t.Errorf("Run did not return within %v of cancel", Timeout)
		}
	})
	t.Cleanup(stop)
	return conn, stop
}

// Dial returns a client connection to lis, closed when the test ends; opts
// come after its own.
func Dial(t testing.TB, lis *bufconn.Listener, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///bufconn", append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// CallAs returns a verifier for a service named audience (its full gRPC
// name) and the dial option of a client that calls it as p with a valid
// identity assertion: what a test needs to get past the identity step of
// a service's Run.
func CallAs(t testing.TB, audience string, p callmeta.Principal) (*identity.Verifier, grpc.DialOption) {
	t.Helper()
	keys, err := identity.NewKeys(identity.GenerateKey("test"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := identity.NewVerifier(keys, audience)
	if err != nil {
		t.Fatal(err)
	}
	m, err := identity.NewMinter(keys)
	if err != nil {
		t.Fatal(err)
	}
	mint := identity.UnaryClientInterceptor(m)
	state := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if _, ok := callerStated(ctx); !ok {
			ctx = callmeta.WithPrincipal(ctx, p)
		}
		return mint(ctx, method, req, reply, cc, invoker, opts...)
	}
	return v, grpc.WithChainUnaryInterceptor(state)
}

// callerStated reports whether the call's context states a principal of
// its own (callmeta.WithPrincipal), which CallAs then signs instead of p.
func callerStated(ctx context.Context) (string, bool) {
	md, _ := metadata.FromOutgoingContext(ctx)
	if v := md.Get(callmeta.SubjectKey); len(v) > 0 {
		return v[0], true
	}
	return "", false
}

// Context returns a context for one call: it ends with the test or after
// Timeout.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// CheckError fails the test unless err has code and the ErrorInfo reason
// ("" for none) in domain.
func CheckError(t testing.TB, call string, err error, code codes.Code, domain, reason string) {
	t.Helper()
	if status.Code(err) != code || rpcerr.Reason(err) != reason {
		t.Errorf("%s = %v, want code %v reason %q", call, err, code, reason)
	}
	if reason != "" {
		if d := rpcerr.ErrorInfo(err).GetDomain(); d != domain {
			t.Errorf("%s ErrorInfo domain = %q, want %q", call, d, domain)
		}
	}
}

// BadFields returns the BadRequest field names of err, in order.
func BadFields(err error) []string {
	var out []string
	for _, d := range status.Convert(err).Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField())
			}
		}
	}
	return out
}

// Echoes reports whether err's message or any ErrorInfo metadata value
// contains s: a service must not echo what a client sent back as is.
func Echoes(err error, s string) bool {
	if strings.Contains(status.Convert(err).Message(), s) {
		return true
	}
	for _, v := range rpcerr.ErrorInfo(err).GetMetadata() {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}
