package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	orderv1 "github.com/portico-gateway/portico/gen/portico/order/v1"
)

// ticketFor asks POST /api/stream-tickets for path as token and returns the
// answer's url, failing the test on any other status.
func ticketFor(t *testing.T, h *harness, token, path string) string {
	t.Helper()
	resp := h.do("POST", TicketsPath, token, `{"path":"`+path+`"}`)
	var a ticketAnswer
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &a) != nil || a.Ticket == "" || a.ExpireTime == "" {
		t.Fatalf("POST %s %s = %d %s, want 200 and a ticket", TicketsPath, path, resp.status, resp.body)
	}
	if resp.header.Get("Cache-Control") != "no-store" {
		t.Errorf("ticket answer Cache-Control = %q, want no-store", resp.header.Get("Cache-Control"))
	}
	return a.URL
}

func TestStreamTicketOpensOneStream(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.watchOrder = watchSends(nil, orderv1.Order_STATUS_PENDING, orderv1.Order_STATUS_CONFIRMED)
	u := ticketFor(t, h, aliceToken, "/api/orders/ord-1:watch")
	if !strings.HasPrefix(u, "/api/orders/ord-1:watch?ticket=") {
		t.Fatalf("ticket url = %q", u)
	}
	resp := h.do("GET", u, "", "", "Accept: text/event-stream")
	if resp.status != http.StatusOK {
		t.Fatalf("GET %s = %d %s, want 200", u, resp.status, resp.body)
	}
	if got := streamSummary(t, "text/event-stream", resp.body); got != "message PENDING\nmessage CONFIRMED\nend {}\n" {
		t.Errorf("stream = %q", got)
	}
	if md, _ := h.order.last(); strings.Join(md.Get("x-portico-subject"), ",") != "alice" {
		t.Errorf("upstream subject %v, want alice", md.Get("x-portico-subject"))
	}
	if logs := h.logs.String(); strings.Contains(logs, "ticket=") || strings.Contains(logs, "pst1.") {
		t.Errorf("the ticket reached the logs:\n%s", logs)
	}
	again := h.do("GET", u, "", "", "Accept: text/event-stream")
	if again.status != http.StatusUnauthorized || !strings.Contains(string(again.body), "REQUEST_REPLAYED") {
		t.Errorf("second GET with the same ticket = %d %s, want 401 REQUEST_REPLAYED", again.status, again.body)
	}
}

func TestStreamTicketRefusals(t *testing.T) {
	h := newHarness(t, setup{})
	h.order.watchOrder = watchSends(nil, orderv1.Order_STATUS_PENDING)
	valid := ticketFor(t, h, aliceToken, "/api/orders/ord-1:watch")
	tk := strings.TrimPrefix(valid, "/api/orders/ord-1:watch?ticket=")
	forged := tk[:len(tk)-4] + "AAAA"
	tests := []struct {
		name, method, path, token, body string
		header                          []string
		status                          int
		code                            string
	}{
		{"another path", "GET", "/api/orders/ord-2:watch?ticket=" + tk, "", "", nil, 401, "UNAUTHENTICATED"},
		{"forged", "GET", "/api/orders/ord-1:watch?ticket=" + forged, "", "", nil, 401, "UNAUTHENTICATED"},
		{"garbage", "GET", "/api/orders/ord-1:watch?ticket=x", "", "", nil, 401, "UNAUTHENTICATED"},
		{"two tickets", "GET", "/api/orders/ord-1:watch?ticket=" + tk + "&ticket=" + tk, "", "", nil, 400, "MALFORMED_CREDENTIALS"},
		{"beside a token", "GET", "/api/orders/ord-1:watch?ticket=" + tk, aliceToken, "", nil, 400, "MALFORMED_CREDENTIALS"},
		{"on a POST", "POST", "/api/orders/ord-1:cancel?ticket=" + tk, "", "{}", nil, 400, "MALFORMED_CREDENTIALS"},
		{"issue without credentials", "POST", TicketsPath, "", `{"path":"/api/orders/ord-1:watch"}`, nil, 401, "UNAUTHENTICATED"},
		{"issue for a unary route", "POST", TicketsPath, aliceToken, `{"path":"/api/orders/ord-1"}`, nil, 404, "ROUTE_NOT_FOUND"},
		{"issue with a query", "POST", TicketsPath, aliceToken, `{"path":"/api/orders/ord-1:watch?x=1"}`, nil, 400, "INVALID_ARGUMENT"},
		{"issue with no path", "POST", TicketsPath, aliceToken, `{}`, nil, 400, "INVALID_ARGUMENT"},
		{"issue by GET", "GET", TicketsPath, aliceToken, "", nil, 405, "METHOD_NOT_ALLOWED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(tt.method, tt.path, tt.token, tt.body, tt.header...)
			var p struct{ Code string }
			_ = json.Unmarshal(resp.body, &p)
			if resp.status != tt.status || p.Code != tt.code {
				t.Errorf("%s %s = %d %s, want %d %s", tt.method, tt.path, resp.status, resp.body, tt.status, tt.code)
			}
		})
	}
	// The refusals above used none of it: the valid ticket still opens
	// its stream once.
	if resp := h.do("GET", valid, "", ""); resp.status != http.StatusOK {
		t.Errorf("GET %s after the refusals = %d %s, want 200", valid, resp.status, resp.body)
	}
}

// TestStreamTicketBody checks that POST /api/stream-tickets reads its body
// by the rules of every other JSON body: 413, 415, and 400 whose errors[]
// names the field.
func TestStreamTicketBody(t *testing.T) {
	h := newHarness(t, setup{})
	big := `{"path":"/api/orders/ord-1:watch","x":"` + strings.Repeat("a", 2<<20) + `"}`
	tests := []struct {
		name, body string
		header     []string
		status     int
		code       string
		pointer    string // errors[0].pointer, "" for no errors[]
	}{
		{"unknown field", `{"path":"/api/orders/ord-1:watch","ttl":600}`, nil, 400, "INVALID_ARGUMENT", "#/ttl"},
		{"text/plain", `{"path":"/api/orders/ord-1:watch"}`, []string{"Content-Type: text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"no content type", `{"path":"/api/orders/ord-1:watch"}`, []string{"Content-Type: "}, 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"2 MB", big, nil, 413, "CONTENT_TOO_LARGE", ""},
		{"bad JSON", `{"path":`, nil, 400, "INVALID_JSON", ""},
		{"empty object", `{}`, nil, 400, "INVALID_ARGUMENT", "#/path"},
		{"number", `{"path":5}`, nil, 400, "INVALID_ARGUMENT", "#/path"},
		{"outside /api", `{"path":"/admin/x:watch"}`, nil, 400, "INVALID_ARGUMENT", "#/path"},
		{"absolute URL", `{"path":"https://edge.example/api/orders/ord-1:watch"}`, nil, 400, "INVALID_ARGUMENT", "#/path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do("POST", TicketsPath, aliceToken, tt.body, tt.header...)
			var p struct {
				Code   string
				Errors []struct{ Field, Pointer string }
			}
			_ = json.Unmarshal(resp.body, &p)
			ptr := ""
			if len(p.Errors) > 0 {
				ptr = p.Errors[0].Pointer
			}
			if resp.status != tt.status || p.Code != tt.code || ptr != tt.pointer {
				t.Errorf("POST %s = %d %.300s, want %d %s errors[0].pointer %q", tt.body[:min(len(tt.body), 60)], resp.status, resp.body, tt.status, tt.code, tt.pointer)
			}
		})
	}
}
