package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/route"
)

// muxOutcome is what runtime.ServeMux made of a request: the RPC its
// handler called, or the status of its routing error.
type muxOutcome struct {
	rpc    string
	status int
}

type outcomeKey struct{}

// referenceMux is grpc-gateway's ServeMux with the edge's routing options
// and every generated handler of the registration list, over a client
// connection that never dials: an interceptor records the RPC a handler
// calls and fails the call.
func referenceMux(t testing.TB) *runtime.ServeMux {
	t.Helper()
	record := func(ctx context.Context, method string, _, _ any, _ *grpc.ClientConn, _ grpc.UnaryInvoker, _ ...grpc.CallOption) error {
		ctx.Value(outcomeKey{}).(*muxOutcome).rpc = method
		return status.Error(codes.Unimplemented, "reference mux")
	}
	recordStream := func(ctx context.Context, _ *grpc.StreamDesc, _ *grpc.ClientConn, method string, _ grpc.Streamer, _ ...grpc.CallOption) (grpc.ClientStream, error) {
		ctx.Value(outcomeKey{}).(*muxOutcome).rpc = method
		return nil, status.Error(codes.Unimplemented, "reference mux")
	}
	cc, err := grpc.NewClient("passthrough:///reference", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(record), grpc.WithStreamInterceptor(recordStream))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	mux := runtime.NewServeMux(
		runtime.WithRoutingErrorHandler(func(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, _ http.ResponseWriter, r *http.Request, code int) {
			r.Context().Value(outcomeKey{}).(*muxOutcome).status = code
		}),
		runtime.WithErrorHandler(func(context.Context, *runtime.ServeMux, runtime.Marshaler, http.ResponseWriter, *http.Request, error) {
		}),
		runtime.WithDisablePathLengthFallback(),
		runtime.WithDisableHTTPMethodOverride(),
	)
	for _, reg := range registrations {
		if err := reg.register(context.Background(), mux, cc); err != nil {
			t.Fatal(err)
		}
	}
	return mux
}

func routeMux(mux *runtime.ServeMux, method, path string) muxOutcome {
	var out muxOutcome
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r = r.WithContext(context.WithValue(r.Context(), outcomeKey{}, &out))
	r.Method, r.URL = method, &url.URL{Path: path}
	mux.ServeHTTP(httptest.NewRecorder(), r)
	return out
}

// FuzzRouteAgreesWithServeMux holds route.Table to runtime.ServeMux over
// the real registered routes: for any method and unescaped path, the edge
// picks the route whose RPC grpc-gateway's mux would call, or refuses as
// the mux does (404 without, 405 with routes of other methods). A
// disagreement would be a logged 404 ("grpc-gateway routing error") or a
// call of the wrong RPC. The intended differences are the exceptions
// below, each from route's package doc.
func FuzzRouteAgreesWithServeMux(f *testing.F) {
	table, _, err := buildRoutes(config.Dev(0), registrations)
	if err != nil {
		f.Fatal(err)
	}
	mux := referenceMux(f)
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	for _, r := range table.Routes() {
		filled := strings.NewReplacer("{", "", "}", "").Replace(r.Pattern)
		for i := range methods {
			f.Add(uint8(i), filled)
		}
		f.Add(uint8(0), filled+"/")
		f.Add(uint8(0), filled+":cancel")
		f.Add(uint8(2), strings.Replace(filled, "/api/", "/api//", 1))
	}
	for _, p := range []string{"/api/orders/", "/api/orders/:cancel", "/api/orders/a:b:cancel", "/api//orders", "/", "", "api/orders", "/api/orders/x/"} {
		f.Add(uint8(0), p)
		f.Add(uint8(2), p)
	}
	f.Fuzz(func(t *testing.T, m uint8, path string) {
		method := methods[int(m)%len(methods)]
		checkAgreement(t, table, mux, method, path)
	})
}

func checkAgreement(t *testing.T, table *route.Table, mux *runtime.ServeMux, method, path string) {
	rt, allow := table.Match(method, path)
	muxMethod := method
	if method == http.MethodHead {
		// Exception: HEAD runs the GET route (the mux has no HEAD handlers;
		// the edge forwards HEAD as GET).
		muxMethod = http.MethodGet
	}
	got := routeMux(mux, muxMethod, path)
	emptySegment := strings.HasPrefix(path, "/") && strings.Contains(path[1:]+"/", "//")
	switch {
	case rt != nil && got.rpc != rt.RPC:
		t.Fatalf("%s %q: the edge routes to %s (%s), the mux calls %q (status %d)", method, path, rt.RPC, rt.Pattern, got.rpc, got.status)
	case rt != nil:
		// Agreement.
	case got.rpc != "" && emptySegment:
		// Exception: a variable or wildcard never matches an empty segment
		// at the edge; the mux binds "" (GET /api/orders/ would be GetOrder
		// with id "").
	case got.rpc != "":
		t.Fatalf("%s %q: the edge matches nothing (allow %v), the mux calls %s", method, path, allow, got.rpc)
	case len(allow) > 0 && got.status != http.StatusMethodNotAllowed && !emptySegment:
		t.Fatalf("%s %q: the edge answers 405 (allow %v), the mux %d", method, path, allow, got.status)
	case len(allow) == 0 && got.status == http.StatusMethodNotAllowed && !emptySegment:
		t.Fatalf("%s %q: the edge answers 404, the mux 405", method, path)
	}
}
