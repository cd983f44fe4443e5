package assembled

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// stub answers GetItem for "kb-1" and NOT_FOUND for anything else.
type stub struct {
	inventoryv1.UnimplementedInventoryServiceServer
}

func (stub) GetItem(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
	if r.GetSku() == "kb-1" {
		return &inventoryv1.Item{Sku: "kb-1", Name: "Keyboard", Available: 3}, nil
	}
	return nil, status.Error(codes.NotFound, "no such item")
}

// newStack starts the stub on loopback and the assembled stack in front
// of it, with its access lines to access.
func newStack(t *testing.T, access io.Writer) *httptest.Server {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	inventoryv1.RegisterInventoryServiceServer(gs, stub{})
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	h, closeConn, err := Handler(t.Context(), lis.Addr().String(), access)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); closeConn() })
	return srv
}

// lines is the access log: the server writes it, the test reads it.
type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestStack(t *testing.T) {
	var access lines
	srv := newStack(t, &access)
	tests := []struct {
		name, method, path, token string
		status                    int
		code                      string // the problem's code; "" for a 200
		policy                    string // RateLimit-Policy; "" for none
	}{
		{"good", "GET", "/api/inventory/kb-1", "demo-read-token", 200, "",
			`"caller";q=1000000;w=1, "inventory-reads";q=1000000;w=1, "global";q=1000000;w=1`},
		{"no credential", "GET", "/api/inventory/kb-1", "", 401, "UNAUTHENTICATED", ""},
		{"unknown key", "GET", "/api/inventory/kb-1", "nope", 401, "UNAUTHENTICATED", ""},
		{"role not granted", "POST", "/api/inventory", "demo-read-token", 403, "FORBIDDEN",
			`"caller";q=1000000;w=1, "global";q=1000000;w=1`},
		{"upstream NOT_FOUND", "GET", "/api/inventory/kb-2", "demo-read-token", 404, "NOT_FOUND",
			`"caller";q=1000000;w=1, "inventory-reads";q=1000000;w=1, "global";q=1000000;w=1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader("{}"))
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %v", resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("RateLimit-Policy"); got != tt.policy {
				t.Errorf("RateLimit-Policy %q, want %q", got, tt.policy)
			}
			if got := resp.Header.Get("Cache-Control"); tt.status != 401 && got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
			if tt.code == "" {
				if body["sku"] != "kb-1" {
					t.Errorf("body %v, want the item", body)
				}
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" || body["code"] != tt.code {
				t.Errorf("Content-Type %s, body %v, want a problem with code %s", ct, body, tt.code)
			}
		})
	}
	if n := strings.Count(access.String(), `"msg":"request"`); n != len(tests) {
		t.Errorf("%d access lines, want %d:\n%s", n, len(tests), access.String())
	}
}
