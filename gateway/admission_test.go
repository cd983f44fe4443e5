package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/auth/authtest"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
)

// slowClient is a raw connection that sent a request's headers and the
// first byte of its body, and sends no more.
type slowClient struct {
	conn net.Conn
	br   *bufio.Reader
}

// slowHeaders are the headers of a POST whose 100-byte body will trickle:
// signed by a known app (the edge must read the body to check the
// signature) or with a valid token (it must read the body to forward it).
func slowHeaders(kind string, i int) string {
	h := "POST /api/orders HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nContent-Length: 100\r\n" +
		"Expect: 100-continue\r\nIdempotency-Key: slow-" + fmt.Sprint(i) + "\r\n"
	switch kind {
	case "signed":
		for _, kv := range authtest.SignedHeaders(appSecret, "demo-app", "POST", "/api/orders", "", []byte("{}"),
			time.Now().Unix(), fmt.Sprintf("slow-nonce-%016d", i)) {
			h += kv + "\r\n"
		}
	default:
		h += "Authorization: Bearer " + aliceToken + "\r\n"
	}
	return h + "\r\n"
}

// openSlow connects to addr, sends headers and waits for the edge's 100
// Continue, the sign that a handler is reading the body; then it sends
// one byte of it.
func openSlow(t *testing.T, addr, headers string) *slowClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // bounds every wait below
	if _, err := io.WriteString(conn, headers); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("waiting for 100 Continue: %q, %v", line, err)
	}
	if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after 100 Continue: %q, %v", blank, err)
	}
	if _, err := io.WriteString(conn, "{"); err != nil {
		t.Fatal(err)
	}
	return &slowClient{conn: conn, br: br}
}

// TestSlowBodiesDoNotStarveOthers: more requests than the edge's cap,
// each signed by a known app or carrying a valid token, send their headers
// and then trickle their bodies. They hold no slot while their bodies
// arrive, so other callers keep getting answers; and each gets 408
// REQUEST_TIMEOUT with its connection closed once the body is too slow.
func TestSlowBodiesDoNotStarveOthers(t *testing.T) {
	const edgeCap, slow = 8, 12
	h := newHarness(t, setup{cfg: func(c *Config) {
		c.Shed = ShedConfig{MaxInFlight: edgeCap}
		c.HTTP.BodyTimeout = time.Second
	}})
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: r.GetSku()}, nil
	}
	addr := strings.TrimPrefix(h.http.URL, "http://")
	var clients []*slowClient
	for i := range slow {
		kind := []string{"signed", "token"}[i%2]
		clients = append(clients, openSlow(t, addr, slowHeaders(kind, i)))
	}

	for i := range 2 * edgeCap {
		if res := h.do(http.MethodGet, "/api/inventory/kb-1", readerToken, ""); res.status != http.StatusOK {
			t.Fatalf("request %d of another caller during %d slow bodies = %d %s, want 200", i+1, slow, res.status, res.body)
		}
	}

	for i, c := range clients {
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		var p map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout || p["code"] != "REQUEST_TIMEOUT" || !resp.Close {
			t.Errorf("slow client %d = %d %v (close %v), want 408 REQUEST_TIMEOUT and the connection closed",
				i, resp.StatusCode, p["code"], resp.Close)
		}
		if _, err := c.br.ReadByte(); err != io.EOF {
			t.Errorf("slow client %d: after the 408 read %v, want EOF (connection closed)", i, err)
		}
	}
	if got := h.srv.bodies.Keys(); got != 0 {
		t.Errorf("client addresses with bodies in flight at rest = %d, want 0", got)
	}
}
