package assembled

import (
	"context"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
)

// principal is who a bearer API key is.
type principal struct {
	subject string
	roles   []string
}

// keys are the dev profile's API keys (gateway.DevConfig).
var keys = map[string]principal{
	"demo-admin-token": {"course-admin", []string{"admin"}},
	"demo-read-token":  {"course-reader", []string{"reader"}},
	"demo-alice-token": {"alice", []string{"customer"}},
	"demo-bob-token":   {"bob", []string{"customer"}},
}

// rule grants roles the requests whose method is method ("" any) and
// whose path starts with prefix: the edge's built-in policy for the
// inventory routes.
type rule struct {
	method, prefix string
	roles          []string
}

var policy = []rule{
	{"", "/", []string{"admin"}},
	{http.MethodGet, "/", []string{"reader"}},
	{http.MethodGet, "/api/inventory/", []string{"customer"}},
}

type principalKey struct{}

// fail answers err through the mux's error handler.
func fail(mux *runtime.ServeMux, w http.ResponseWriter, r *http.Request, err error) {
	_, out := runtime.MarshalerForRequest(mux, r)
	problemHandler(r.Context(), mux, out, w, r, err)
}

// authenticate checks the bearer API key, answering 401 through the mux's
// error handler; the principal goes on the context.
func authenticate(mux *runtime.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p, known := keys[token]
		if !ok || !known {
			fail(mux, w, r, errorWithReason(codes.Unauthenticated, "UNAUTHENTICATED", "The request carries no valid credential."))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// authorize checks the principal's roles against the policy, answering
// 403 through the mux's error handler. It runs after the rate limits, as
// the edge's does: a refused caller still spends its quota.
func authorize(mux *runtime.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := r.Context().Value(principalKey{}).(principal)
		if !allowed(p, r) {
			fail(mux, w, r, errorWithReason(codes.PermissionDenied, "FORBIDDEN", "None of the credential's roles may use this operation."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func allowed(p principal, r *http.Request) bool {
	for _, ru := range policy {
		if (ru.method == "" || ru.method == r.Method) && strings.HasPrefix(r.URL.Path, ru.prefix) {
			for _, want := range ru.roles {
				for _, have := range p.roles {
					if want == have {
						return true
					}
				}
			}
		}
	}
	return false
}
