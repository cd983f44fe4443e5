package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/portico-gateway/portico/gateway/auth/authtest"
	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/callmeta"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestSecretsNeverLeak runs `portico dev`, sends every kind of secret a
// client may send (a valid and an unknown bearer token, a JWT-shaped
// token, a token in the query string, a signed request with its app
// secret, signature and a tampered replay, an idempotency key), and greps
// the captured logs of all four processes, every answer and /metrics for
// each raw secret.
func TestSecretsNeverLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	base := testproc.FreePortRange(t, 10)
	data := testproc.TempDir(t)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", data)
	url := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, url+"/health")
	testproc.WaitDevReady(t, dev)

	const (
		unknownToken = "leaky-bearer-e2e-0001"
		jwtShaped    = "eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWUyZQ"
		queryToken   = "query-secret-e2e-0001"
		idemKey      = "idem-secret-e2e-0001"
		appSecret    = "demo-app-secret-0001"
		nonce        = "nonce-secret-e2e-0001"
	)
	ts := time.Now().Unix()
	signed := authtest.SignedHeadersWithKey(appSecret, "demo-app", "POST", "/api/orders", "", []byte(orderBody), ts, nonce, idemKey+"-2")
	signature := strings.TrimPrefix(signed[3], "X-Signature: ")
	secrets := []string{"demo-alice-token", unknownToken, jwtShaped, queryToken, idemKey, appSecret, signature}

	replies := []reply{
		call(t, "POST", url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: "+idemKey),
		call(t, "GET", url+"/api/inventory", unknownToken, ""),
		call(t, "GET", url+"/api/inventory", jwtShaped, ""),
		call(t, "GET", url+"/api/inventory?access_token="+queryToken, "", ""),
		call(t, "POST", url+"/api/orders", "", orderBody, signed...),
		call(t, "POST", url+"/api/orders", "", orderBody, append(signed[:4:4], "Idempotency-Key: "+idemKey+"-3")...), // replay
		call(t, "POST", url+"/api/orders", "", `{"lines":[]}`, append(signed[:3], "X-Signature: "+signature, "Idempotency-Key: x")...),
	}
	wantStatus := []int{201, 401, 401, 400, 201, 401, 401}
	for i, r := range replies {
		if r.status != wantStatus[i] {
			t.Errorf("request %d = %d %s, want %d", i, r.status, r.body, wantStatus[i])
		}
	}
	marker := "trace-secrets-" + strconv.FormatInt(ts, 10)
	call(t, "GET", url+"/api/inventory", "demo-read-token", "", "X-Trace-Id: "+marker)
	if !dev.WaitOutput(t.Context(), 10*time.Second, func(out string) bool {
		return servicesWithTrace(out, marker)["inventory"] && servicesWithTrace(out, marker)["gateway"]
	}) {
		t.Fatal("the marker request never reached the logs")
	}
	secrets = append(secrets, directAssertions(t, data, testproc.Addr(base+1))...)
	metrics := call(t, "GET", url+"/metrics", "", "")
	for _, s := range secrets {
		if strings.Contains(dev.Output(), s) {
			t.Errorf("a process logged the secret %.12s…", s)
		}
		for i, r := range replies {
			if strings.Contains(string(r.body), s) || strings.Contains(strings.Join(flatten(r.header), "\n"), s) {
				t.Errorf("answer %d holds the secret %.12s…", i, s)
			}
		}
		if strings.Contains(string(metrics.body), s) {
			t.Errorf("/metrics holds the secret %.12s…", s)
		}
	}
}

func flatten(h map[string][]string) []string {
	var out []string
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, k+": "+v)
		}
	}
	return out
}

// directAssertions calls the inventory service at addr directly with
// identity assertions minted under the dev run's keys (in dir): one valid
// for a missing item (NOT_FOUND) and one for another audience
// (UNAUTHENTICATED), and returns both, secrets the logs must not hold.
func directAssertions(t *testing.T, dir, addr string) []string {
	t.Helper()
	keys, _, err := identity.LoadKeys(filepath.Join(dir, "identity.keys"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := identity.NewMinter(keys)
	if err != nil {
		t.Fatal(err)
	}
	alice := callmeta.Principal{Subject: "alice", Role: "customer"}
	valid, _ := m.Mint("portico.inventory.v1.InventoryService", alice, "")
	other, _ := m.Mint("portico.payment.v1.PaymentService", alice, "")
	inv := inventoryv1.NewInventoryServiceClient(testproc.Dial(t, addr))
	for tok, want := range map[string]codes.Code{valid: codes.NotFound, other: codes.Unauthenticated} {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := inv.GetItem(metadata.AppendToOutgoingContext(ctx, callmeta.IdentityKey, tok), &inventoryv1.GetItemRequest{Sku: "no-such-sku-001"})
		cancel()
		if status.Code(err) != want {
			t.Errorf("GetItem with an assertion = %v, want %v", err, want)
		}
	}
	return []string{valid, other}
}
