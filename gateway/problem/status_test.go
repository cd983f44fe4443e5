package problem

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"
)

func st(c codes.Code, details ...protoadapt.MessageV1) *status.Status {
	s := status.New(c, "upstream says no")
	if len(details) > 0 {
		s, _ = s.WithDetails(details...)
	}
	return s
}

func info(reason string, kv ...string) *errdetails.ErrorInfo {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &errdetails.ErrorInfo{Reason: reason, Metadata: m}
}

func retry(d time.Duration) *errdetails.RetryInfo {
	return &errdetails.RetryInfo{RetryDelay: durationpb.New(d)}
}

func quota() *errdetails.QuotaFailure {
	return &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{Subject: "alice", Description: "100 calls a minute"}}}
}

func TestFromStatus(t *testing.T) {
	answered := Facts{Upstream: "order", Header: true, Trailer: true}
	trailersOnly := Facts{Upstream: "order", Trailer: true}
	silent := Facts{Upstream: "order"}
	tests := []struct {
		name        string
		st          *status.Status
		f           Facts
		wantStatus  int
		wantCode    string
		wantRetry   int
		wantHop     string
		wantGeneric bool // detail written by the edge, not the upstream's
	}{
		{"invalid argument", st(codes.InvalidArgument), trailersOnly, 400, "INVALID_ARGUMENT", 0, "", false},
		{"invalid argument with reason", st(codes.InvalidArgument, info("UNKNOWN_PAYMENT_METHOD")), trailersOnly, 400, "UNKNOWN_PAYMENT_METHOD", 0, "", false},
		{"lower-case reason ignored", st(codes.NotFound, info("not_found")), trailersOnly, 404, "NOT_FOUND", 0, "", false},
		{"out of range", st(codes.OutOfRange), trailersOnly, 400, "OUT_OF_RANGE", 0, "", false},
		{"unauthenticated", st(codes.Unauthenticated), trailersOnly, 401, "UNAUTHENTICATED", 0, "", false},
		{"permission denied", st(codes.PermissionDenied), trailersOnly, 403, "PERMISSION_DENIED", 0, "", false},
		{"not found", st(codes.NotFound, info("ORDER_NOT_FOUND")), trailersOnly, 404, "ORDER_NOT_FOUND", 0, "", false},
		{"already exists", st(codes.AlreadyExists), trailersOnly, 409, "ALREADY_EXISTS", 0, "", false},
		{"aborted", st(codes.Aborted), trailersOnly, 409, "ABORTED", 0, "", false},
		{"insufficient stock", st(codes.FailedPrecondition, info("INSUFFICIENT_STOCK")), trailersOnly, 409, "INSUFFICIENT_STOCK", 0, "", false},
		{"payment declined", st(codes.FailedPrecondition, info("PAYMENT_DECLINED")), trailersOnly, 422, "PAYMENT_DECLINED", 0, "", false},
		{"key reused", st(codes.FailedPrecondition, info("IDEMPOTENCY_KEY_REUSED")), trailersOnly, 422, "IDEMPOTENCY_KEY_REUSED", 0, "", false},
		{"invalid payment request", st(codes.FailedPrecondition, info("INVALID_PAYMENT_REQUEST")), trailersOnly, 422, "INVALID_PAYMENT_REQUEST", 0, "", false},
		{"invalid total", st(codes.FailedPrecondition, info("INVALID_TOTAL")), trailersOnly, 422, "INVALID_TOTAL", 0, "", false},
		{"key missing", st(codes.InvalidArgument, info("IDEMPOTENCY_KEY_MISSING")), trailersOnly, 400, "IDEMPOTENCY_KEY_MISSING", 0, "", false},
		{"order not cancellable", st(codes.FailedPrecondition, info("ORDER_NOT_CANCELLABLE")), trailersOnly, 409, "ORDER_NOT_CANCELLABLE", 0, "", false},
		{"unknown reason", st(codes.FailedPrecondition, info("SOMETHING_NEW")), trailersOnly, 409, "FAILED_PRECONDITION", 0, "", false},
		{"injected fault stands for the bare code", st(codes.NotFound, info("FAULT_INJECTED")), trailersOnly, 404, "NOT_FOUND", 0, "", false},
		{"failed precondition default", st(codes.FailedPrecondition), trailersOnly, 409, "FAILED_PRECONDITION", 0, "", false},
		{"quota with retry info", st(codes.ResourceExhausted, retry(1100*time.Millisecond)), answered, 429, "RESOURCE_EXHAUSTED", 2, "", false},
		{"quota failure", st(codes.ResourceExhausted, quota()), trailersOnly, 429, "RESOURCE_EXHAUSTED", 1, "", false},
		{"quota failure with unknown reason", st(codes.ResourceExhausted, info("DAILY_LIMIT"), quota()), trailersOnly, 429, "RESOURCE_EXHAUSTED", 1, "", false},
		{"upstream refused to send, trailers-only", st(codes.ResourceExhausted), trailersOnly, 503, "MESSAGE_TOO_LARGE", 0, "", true},
		{"response too large", st(codes.ResourceExhausted), Facts{Upstream: "order", Header: true}, 503, "MESSAGE_TOO_LARGE", 0, "", true},
		{"request too large", st(codes.ResourceExhausted), silent, 503, "MESSAGE_TOO_LARGE", 0, "", true},
		{"reason without quota details", st(codes.ResourceExhausted, info("TOO_BIG")), trailersOnly, 503, "MESSAGE_TOO_LARGE", 0, "", true},
		{"cancelled", st(codes.Canceled, info("WHATEVER")), silent, 499, "CLIENT_CLOSED_REQUEST", 0, "", true},
		{"unimplemented", st(codes.Unimplemented), trailersOnly, 501, "NOT_IMPLEMENTED", 0, "", true},
		{"deadline", st(codes.DeadlineExceeded), silent, 504, "UPSTREAM_TIMEOUT", 0, "order", true},
		{"deadline hop", st(codes.DeadlineExceeded, info("DEADLINE_BUDGET_EXHAUSTED", "hop", "inventory")), trailersOnly, 504, "UPSTREAM_TIMEOUT", 0, "inventory", true},
		{"circuit open", st(codes.Unavailable, info("CIRCUIT_OPEN", "upstream", "order", "retryAfterMs", "2001")), silent, 503, "CIRCUIT_OPEN", 3, "", true},
		{"circuit open retry info wins", st(codes.Unavailable, info("CIRCUIT_OPEN", "retryAfterMs", "9000"), retry(time.Second)), silent, 503, "CIRCUIT_OPEN", 1, "", true},
		{"overloaded", st(codes.Unavailable, info("OVERLOADED")), silent, 503, "OVERLOADED", 1, "", true},
		{"never answered", st(codes.Unavailable), silent, 502, "UPSTREAM_UNAVAILABLE", 0, "", true},
		{"answered unavailable", st(codes.Unavailable), trailersOnly, 503, "SERVICE_UNAVAILABLE", 1, "", true},
		{"answered with reason", st(codes.Unavailable, info("INVENTORY_UNAVAILABLE"), retry(4*time.Second)), answered, 503, "INVENTORY_UNAVAILABLE", 4, "", true},
		{"internal", st(codes.Internal), trailersOnly, 500, "INTERNAL", 0, "", true},
		{"unknown", st(codes.Unknown), trailersOnly, 500, "INTERNAL", 0, "", true},
		{"data loss", st(codes.DataLoss, info("TORN_PAGE")), trailersOnly, 500, "INTERNAL", 0, "", true},
		{"ok is not an error", st(codes.OK), trailersOnly, 500, "INTERNAL", 0, "", true},
		{"code outside the table", status.New(codes.Code(99), "x"), trailersOnly, 500, "INTERNAL", 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := FromStatus(tt.st, tt.f)
			if p.Status != tt.wantStatus || p.Code != tt.wantCode || p.RetryAfter != tt.wantRetry || p.Hop != tt.wantHop {
				t.Errorf("FromStatus() = {%d %s retry=%d hop=%q}, want {%d %s retry=%d hop=%q}",
					p.Status, p.Code, p.RetryAfter, p.Hop, tt.wantStatus, tt.wantCode, tt.wantRetry, tt.wantHop)
			}
			if generic := p.Detail != "upstream says no"; generic != tt.wantGeneric {
				t.Errorf("detail = %q; edge-written = %v, want %v", p.Detail, generic, tt.wantGeneric)
			}
			if p.Title == "" || p.Type != TypeURI(p.Code) {
				t.Errorf("title %q, type %q", p.Title, p.Type)
			}
			if (p.Status == 503 && p.Code != CodeMessageTooLarge || p.Status == 429) && p.RetryAfter < 1 {
				t.Errorf("%d without retryAfter", p.Status)
			}
		})
	}
}

// TestFromStatusKeepsGoAndGRPCStringsOut: a client that half-closes its
// connection after the request (or hangs up) gets a 499 whose status came
// from grpc-go's view of the request context, and an upstream without the
// method answers grpc-go's own message; neither may reach the body.
func TestFromStatusKeepsGoAndGRPCStringsOut(t *testing.T) {
	tests := []struct {
		name string
		st   *status.Status
		leak []string
	}{
		{"client half-closed: context canceled", status.New(codes.Canceled, "context canceled"), []string{"context"}},
		{"unknown service", status.New(codes.Unimplemented, "unknown service portico.order.v1.OrderService"), []string{"portico.", "unknown service"}},
		{"unknown method", status.New(codes.Unimplemented, "unknown method CancelOrder for service portico.order.v1.OrderService"), []string{"portico.", "CancelOrder"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := FromStatus(tt.st, Facts{Upstream: "order"})
			if p.Detail == "" {
				t.Fatal("empty detail")
			}
			for _, l := range tt.leak {
				if strings.Contains(p.Detail, l) {
					t.Errorf("detail %q repeats %q", p.Detail, l)
				}
			}
		})
	}
}

func TestFieldViolations(t *testing.T) {
	s := st(codes.InvalidArgument, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
		{Field: "payment_method", Description: "is required"},
	}})
	p := FromStatus(s, Facts{Field: func(f string) (string, string) { return "paymentMethod", "#/paymentMethod" }})
	want := FieldViolation{Field: "paymentMethod", Pointer: "#/paymentMethod", Detail: "is required"}
	if len(p.Errors) != 1 || p.Errors[0] != want {
		t.Errorf("errors = %+v, want [%+v]", p.Errors, want)
	}
}

func TestWrite(t *testing.T) {
	p := New(CodeMethodNotAllowed, "no <b>")
	p.Allow = []string{"GET", "HEAD"}
	p.RetryAfter = 2
	p.Challenge = "Bearer"
	rec := httptest.NewRecorder()
	p.Write(rec)
	want := map[string]string{"Content-Type": ContentType, "Allow": "GET, HEAD", "Retry-After": "2", "WWW-Authenticate": "Bearer", "Cache-Control": "no-store"}
	for k, v := range want {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	wantBody := `{"type":"/problems/method-not-allowed","title":"Method not allowed","status":405,"detail":"no <b>","code":"METHOD_NOT_ALLOWED","retryAfter":2}` + "\n"
	if rec.Code != http.StatusMethodNotAllowed || rec.Body.String() != wantBody {
		t.Errorf("Write() = %d %s, want 405 %s", rec.Code, rec.Body, wantBody)
	}
}

func TestCatalogue(t *testing.T) {
	for code, s := range Catalogue() {
		if !validCode(code) || s < 400 || s > 599 {
			t.Errorf("catalogue entry %s -> %d", code, s)
		}
		if p := New(code, ""); p.Code != code || p.Status != s {
			t.Errorf("New(%s) = %s %d", code, p.Code, p.Status)
		}
	}
	if p := New("NO_SUCH_CODE", ""); p.Status != 500 {
		t.Errorf("New(unknown) = %d, want 500", p.Status)
	}
}

// TestDeliberateUnavailableNamesTheDependency: a live upstream's UNAVAILABLE
// with a reason says something behind it is down, not the upstream itself.
func TestDeliberateUnavailableNamesTheDependency(t *testing.T) {
	p := FromStatus(st(codes.Unavailable, info("INVENTORY_UNAVAILABLE")), Facts{Upstream: "order", Trailer: true})
	if p.Status != 503 || p.Code != "INVENTORY_UNAVAILABLE" {
		t.Fatalf("FromStatus = %d %s, want 503 INVENTORY_UNAVAILABLE", p.Status, p.Code)
	}
	if !strings.Contains(p.Detail, "depends on") || !strings.Contains(p.Detail, "INVENTORY_UNAVAILABLE") {
		t.Errorf("detail = %q, want it to blame a dependency of order", p.Detail)
	}
}

// TestUnavailableCustomerLimit: a deliberate UNAVAILABLE whose ErrorInfo
// metadata has limit "customer" says the caller's waiting requests are at
// their limit; without it the detail does not.
func TestUnavailableCustomerLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		meta []string
		want bool
	}{
		{"customer limit", []string{"limit", "customer"}, true},
		{"no limit", nil, false},
		{"another limit", []string{"limit", "total"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := FromStatus(st(codes.Unavailable, info("INVENTORY_UNAVAILABLE", tt.meta...)), Facts{Upstream: "order", Trailer: true})
			if p.Status != 503 || p.Code != "INVENTORY_UNAVAILABLE" || p.RetryAfter < 1 {
				t.Fatalf("FromStatus = %d %s (Retry-After %d), want 503 INVENTORY_UNAVAILABLE with Retry-After", p.Status, p.Code, p.RetryAfter)
			}
			if got := strings.Contains(p.Detail, "at their limit"); got != tt.want {
				t.Errorf("detail = %q; names the limit: %v, want %v", p.Detail, got, tt.want)
			}
		})
	}
}

// TestETagMismatchCarriesTag: a service's 412 ETAG_MISMATCH whose ErrorInfo
// carries the resource's current etag is written with that ETag header, so
// a client retries without reading again; an absent or unsendable tag, or
// another reason, sends none.
func TestETagMismatchCarriesTag(t *testing.T) {
	for _, tt := range []struct {
		name   string
		reason string
		meta   []string
		want   string
	}{
		{"current tag", "ETAG_MISMATCH", []string{"etag", "tUCMmIMJrRwq5fkTYaqTew"}, `"tUCMmIMJrRwq5fkTYaqTew"`},
		{"no tag", "ETAG_MISMATCH", nil, ""},
		{"a quote in the tag", "ETAG_MISMATCH", []string{"etag", `a"b`}, ""},
		{"another reason", "INSUFFICIENT_STOCK", []string{"etag", "tUCMmIMJrRwq5fkTYaqTew"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := FromStatus(st(codes.FailedPrecondition, info(tt.reason, tt.meta...)), Facts{Upstream: "inventory"})
			rec := httptest.NewRecorder()
			p.Write(rec)
			if got := rec.Header().Get("ETag"); got != tt.want {
				t.Errorf("ETag = %q, want %q (status %d %s)", got, tt.want, p.Status, p.Code)
			}
		})
	}
}
