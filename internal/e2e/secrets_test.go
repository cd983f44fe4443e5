package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/auth/authtest"
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
	base := testproc.FreePortRange(t, 4)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t))
	url := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, url+"/health")

	const (
		unknownToken = "leaky-bearer-e2e-0001"
		jwtShaped    = "eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWUyZQ"
		queryToken   = "query-secret-e2e-0001"
		idemKey      = "idem-secret-e2e-0001"
		appSecret    = "demo-app-secret-0001"
		nonce        = "nonce-secret-e2e-0001"
	)
	ts := time.Now().Unix()
	signed := authtest.SignedHeaders(appSecret, "demo-app", "POST", "/api/orders", "", []byte(orderBody), ts, nonce)
	signature := strings.TrimPrefix(signed[3], "X-Signature: ")
	secrets := []string{"demo-alice-token", unknownToken, jwtShaped, queryToken, idemKey, appSecret, signature}

	replies := []reply{
		call(t, "POST", url+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: "+idemKey),
		call(t, "GET", url+"/api/inventory", unknownToken, ""),
		call(t, "GET", url+"/api/inventory", jwtShaped, ""),
		call(t, "GET", url+"/api/inventory?access_token="+queryToken, "", ""),
		call(t, "POST", url+"/api/orders", "", orderBody, append(signed, "Idempotency-Key: "+idemKey+"-2")...),
		call(t, "POST", url+"/api/orders", "", orderBody, append(signed, "Idempotency-Key: "+idemKey+"-3")...), // replay
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
