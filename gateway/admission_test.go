package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/auth/authtest"
	"github.com/portico-gateway/portico/gateway/config"
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
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlight: edgeCap}
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

// readProblem reads one answer from br and its problem body.
func readProblem(t *testing.T, br *bufio.Reader) (*http.Response, map[string]any) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatalf("answer %d: body: %v", resp.StatusCode, err)
	}
	return resp, p
}

// TestInFlightPerClientCap: an address with max_in_flight_per_client
// bodies arriving gets 429 TOO_MANY_IN_FLIGHT for the next at once, without
// the edge waiting for (or reading) its body, and the connection is closed.
func TestInFlightPerClientCap(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlightPerClient: 2, RetryAfter: 2 * time.Second}
		c.HTTP.BodyTimeout = time.Second
	}})
	addr := strings.TrimPrefix(h.http.URL, "http://")
	held := []*slowClient{openSlow(t, addr, slowHeaders("token", 1)), openSlow(t, addr, slowHeaders("signed", 2))}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, strings.Replace(slowHeaders("token", 3), "Expect: 100-continue\r\n", "", 1)); err != nil {
		t.Fatal(err)
	}
	resp, p := readProblem(t, bufio.NewReader(conn)) // no body byte sent: the answer must not wait for one
	if resp.StatusCode != http.StatusTooManyRequests || p["code"] != "TOO_MANY_IN_FLIGHT" ||
		resp.Header.Get("Retry-After") != "2" || !resp.Close {
		t.Errorf("third body from the address = %d %v, Retry-After %q, close %v; want 429 TOO_MANY_IN_FLIGHT, 2, true",
			resp.StatusCode, p["code"], resp.Header.Get("Retry-After"), resp.Close)
	}
	for i, c := range held {
		if resp, p := readProblem(t, c.br); resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("held client %d = %d %v, want 408", i, resp.StatusCode, p["code"])
		}
	}
	if res := h.do(http.MethodGet, "/api/inventory/kb-1", "", ""); res.status != http.StatusUnauthorized {
		t.Errorf("a request once the bodies are gone = %d, want 401 (not capped)", res.status)
	}
}

// TestInFlightPerCallerCap: a caller with max_in_flight_per_caller
// requests in flight gets 429 TOO_MANY_IN_FLIGHT for the next; other
// callers are not affected, and the slot comes back.
func TestInFlightPerCallerCap(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlightPerCaller: 2, RetryAfter: 2 * time.Second}
	}})
	h.inv.listItems = func(context.Context, *inventoryv1.ListItemsRequest) (*inventoryv1.ListItemsResponse, error) {
		return &inventoryv1.ListItemsResponse{}, nil
	}
	hi := holdGetItem(h)
	held := hi.hold(t, h, 2) // the reader token's two requests wait at the upstream

	res := h.do(http.MethodGet, "/api/inventory", readerToken, "")
	if p := res.json(t); res.status != http.StatusTooManyRequests || p["code"] != "TOO_MANY_IN_FLIGHT" || res.header.Get("Retry-After") != "2" {
		t.Errorf("the caller's third request = %d %v, Retry-After %q; want 429 TOO_MANY_IN_FLIGHT, 2", res.status, p["code"], res.header.Get("Retry-After"))
	}
	if res := h.do(http.MethodGet, "/api/inventory", adminToken, ""); res.status != http.StatusOK {
		t.Errorf("another caller's request = %d, want 200", res.status)
	}
	hi.releaseAll()
	for range 2 {
		if s := <-held; s != http.StatusOK {
			t.Errorf("held request = %d, want 200", s)
		}
	}
	if res := h.do(http.MethodGet, "/api/inventory", readerToken, ""); res.status != http.StatusOK {
		t.Errorf("the caller's request after its slots came back = %d, want 200", res.status)
	}
	if got := h.srv.callers.Keys(); got != 0 {
		t.Errorf("callers in flight at rest = %d, want 0", got)
	}
}

// TestAdminLimitsPerClient: /admin/limits shows the client address's cap
// while a body is held, and counts the 429 TOO_MANY_IN_FLIGHT it answers.
func TestAdminLimitsPerClient(t *testing.T) {
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.Shed = config.ShedConfig{MaxInFlightPerClient: 1, MaxInFlightPerCaller: 5}
		c.HTTP.BodyTimeout, c.HTTP.MinBodyRate = 30*time.Second, -1 // the held body stays held
	}})
	admin := httptest.NewServer(h.srv.AdminHandler())
	t.Cleanup(admin.Close)
	addr := strings.TrimPrefix(h.http.URL, "http://")
	openSlow(t, addr, slowHeaders("token", 1)) // its 100 Continue: the slot is held

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, strings.Replace(slowHeaders("token", 2), "Expect: 100-continue\r\n", "", 1)); err != nil {
		t.Fatal(err)
	}
	if resp, p := readProblem(t, bufio.NewReader(conn)); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second body from the address = %d %v, want 429", resp.StatusCode, p["code"])
	}
	var got LimitsInfo
	adminGet(t, admin, "/admin/limits", &got)
	want := []ShedKeyInfo{
		{Name: "client", Setting: "shed.max_in_flight_per_client", MaxInFlight: 1, Holders: 1, Largest: 1, Refused: 1},
		{Name: "caller", Setting: "shed.max_in_flight_per_caller", MaxInFlight: 5},
	}
	if !slices.Equal(got.Shedding.PerKey, want) {
		t.Errorf("shedding.perKey = %+v, want %+v", got.Shedding.PerKey, want)
	}
}
