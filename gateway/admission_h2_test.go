package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/tlsconfig"
	"github.com/portico-gateway/portico/internal/tlsconfig/tlstest"
)

// TestSlowBodiesDoNotStarveOthersHTTP2 is TestSlowBodiesDoNotStarveOthers
// over HTTP/2 (TLS, one connection): streams whose bodies trickle hold no
// slot, another request on the same connection is answered, and each slow
// stream gets 408 REQUEST_TIMEOUT once its body is too slow (the stream's
// read deadline).
func TestSlowBodiesDoNotStarveOthersHTTP2(t *testing.T) {
	const edgeCap, slow = 4, 6
	ca := tlstest.NewCA(t, "edge")
	cert, key := ca.Issue(t, "edge", "127.0.0.1")
	h := newHarness(t, setup{cfg: func(c *config.Config) {
		c.TLS = config.TLSConfig{CertFile: cert, KeyFile: key}
		c.Shed = config.ShedConfig{MaxInFlight: edgeCap}
		c.HTTP.BodyTimeout = time.Second
	}})
	h.inv.getItem = func(_ context.Context, r *inventoryv1.GetItemRequest) (*inventoryv1.Item, error) {
		return &inventoryv1.Item{Sku: r.GetSku()}, nil
	}
	clientTLS, _ := tlsconfig.Client(ca.File, "", "", "")
	// ExpectContinueTimeout: a stream sends its body only after the edge's
	// 100 Continue, the sign that a handler is reading it.
	tr := &http.Transport{TLSClientConfig: clientTLS, ForceAttemptHTTP2: true, ExpectContinueTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	_, addr := serveReloadable(t, h, h.cfg, "https", &http.Client{Transport: tr})
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	base := "https://" + addr

	type answer struct {
		status int
		code   any
		proto  int
		err    error
	}
	answers := make(chan answer, slow)
	reading := make(chan struct{}, slow)
	for range slow {
		pr, pw := io.Pipe()
		defer pw.Close()
		req, _ := http.NewRequest(http.MethodPost, base+"/api/orders", pr)
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "slow-h2")
		req.Header.Set("Expect", "100-continue")
		go func() {
			if _, err := pw.Write([]byte("{")); err == nil { // taken once the 100 Continue came
				reading <- struct{}{}
			}
		}()
		go func() {
			resp, err := client.Do(req)
			if err != nil {
				answers <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			var p map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&p)
			answers <- answer{status: resp.StatusCode, code: p["code"], proto: resp.ProtoMajor}
		}()
	}
	for range slow {
		select {
		case <-reading:
		case a := <-answers:
			t.Fatalf("a slow stream was answered before its body: %+v", a)
		case <-time.After(30 * time.Second):
			t.Fatal("slow streams' bodies were never read")
		}
	}

	for i := range 2 * edgeCap {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/inventory/kb-1", nil)
		req.Header.Set("Authorization", "Bearer "+readerToken)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			t.Fatalf("request %d of another caller during %d slow streams = %d over HTTP/%d, want 200 over HTTP/2",
				i+1, slow, resp.StatusCode, resp.ProtoMajor)
		}
	}
	for i := range slow {
		if a := <-answers; a.err != nil || a.status != http.StatusRequestTimeout || a.code != "REQUEST_TIMEOUT" {
			t.Errorf("slow stream %d = %+v, want 408 REQUEST_TIMEOUT", i, a)
		}
	}
}
