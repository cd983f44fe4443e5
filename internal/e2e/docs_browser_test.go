package e2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/browsertest"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestDocsInBrowser opens /docs of a real `portico dev` in headless
// Chromium (package browsertest): the API reference renders the edge's
// operations, takes demo-read-token in Authorize, and "Try it out" on GET
// /api/inventory gets a 200 from the edge that served the page (not the
// localhost:43100 the document names). The page asks no other host for
// anything and logs no error (a CSP violation would be one). Screenshots:
// var/screenshots/TestDocsInBrowser/.
func TestDocsInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	b := browsertest.Find(t)
	base := testproc.FreePortRange(t, 10)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t))
	edge := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, edge+"/health")
	testproc.WaitDevReady(t, dev)

	res := b.Run(t, "testdata/browser/docs.mjs", browsertest.Options{
		URL:    edge + "/docs",
		Params: map[string]string{"token": "demo-read-token"},
		// Parsing Swagger UI's 1.7 MB bundle takes seconds on a busy
		// 2-core machine: each step may take a minute.
		StepTimeout: time.Minute,
		Timeout:     5 * time.Minute,
	})
	var got struct {
		Operations   int
		ProblemLinks int
		Status       string
		RequestURL   string
		Body         string
	}
	if err := json.Unmarshal(res.Data, &got); err != nil {
		t.Fatalf("scenario data %s: %v", res.Data, err)
	}
	if got.Operations < 12 {
		t.Errorf("%d operations rendered, want every one of /openapi.json (at least 12)", got.Operations)
	}
	if got.ProblemLinks == 0 {
		t.Error("no link to the problem type pages")
	}
	if got.Status != "200" || got.RequestURL != edge+"/api/inventory" || !strings.Contains(got.Body, `"sku"`) {
		t.Errorf("try it out: %s %s %.200s, want 200 from %s/api/inventory with items", got.Status, got.RequestURL, got.Body, edge)
	}
	if hosts := res.Hosts(); len(hosts) != 1 || hosts[0] != testproc.Addr(base) {
		t.Errorf("the page asked hosts %v, want only the edge %s", hosts, testproc.Addr(base))
	}
	var sawTry bool
	var firstLoad int64 // everything but the API call itself
	for _, q := range res.Requests {
		u, _ := url.Parse(q.URL)
		if q.Failure != "" || q.Status >= 400 {
			t.Errorf("%s %s: %d %s", q.Method, q.URL, q.Status, q.Failure)
		}
		if strings.HasPrefix(u.Path, "/api/") {
			sawTry = sawTry || (u.Path == "/api/inventory" && q.Status == 200)
		} else {
			firstLoad += q.Bytes
			t.Logf("%d %7d bytes %s", q.Status, q.Bytes, u.Path)
		}
	}
	if !sawTry {
		t.Errorf("no GET /api/inventory answered 200 among the page's requests: %+v", res.Requests)
	}
	for _, m := range res.Console {
		if strings.HasPrefix(m, "error") || strings.Contains(m, "Content Security Policy") {
			t.Errorf("console: %s", m)
		}
	}
	for _, e := range res.PageErrors {
		t.Errorf("page error: %s", e)
	}
	t.Logf("/docs: %d bytes transferred on first load, %d with the try-it call; screenshots %v",
		firstLoad, res.TransferredBytes(), res.Screenshots)
}
