package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/testproc"
)

// edge is a running `portico gateway` in front of a cluster.
type edge struct {
	proc *testproc.Proc
	url  string
}

// edgeConfig renders a gateway config for c. upstreamYAML is appended to
// every upstream entry (indented 4 spaces), e.g. a resilience block;
// perUpstream, when set, overrides it for the named upstream, and may
// replace the upstream's addresses.
func edgeConfig(c *cluster, listen, upstreamYAML string, perUpstream map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nupstreams:\n", listen)
	for _, u := range []struct{ name, addr, svc string }{
		{"inventory", c.invAddr, "portico.inventory.v1.InventoryService"},
		{"payment", c.payAddr, "portico.payment.v1.PaymentService"},
		{"order", c.orderAddr, "portico.order.v1.OrderService"},
	} {
		extra := upstreamYAML
		if v, ok := perUpstream[u.name]; ok {
			extra = v
		}
		fmt.Fprintf(&b, "  - name: %s\n    health_service: %s\n", u.name, u.svc)
		if !strings.Contains(extra, "addresses:") {
			fmt.Fprintf(&b, "    addresses: [%s]\n", u.addr)
		}
		b.WriteString(indent(extra, "    "))
	}
	b.WriteString(`auth:
  tokens:
    - {token: demo-admin-token, subject: course-admin, role: admin}
    - {token: demo-read-token, subject: course-reader, role: reader}
    - {token: demo-alice-token, subject: alice, role: customer}
    - {token: demo-bob-token, subject: bob, role: customer}
`)
	fmt.Fprintf(&b, "identity:\n  keys_file: %s\n", c.keysFile)
	return b.String()
}

func indent(s, prefix string) string {
	if s == "" {
		return ""
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// noBreaker keeps the breaker out of tests about other behaviour.
const noBreaker = "resilience:\n  breaker: {consecutive_failures: 100000, min_calls: 100000}\n"

func startEdge(t testing.TB, c *cluster, upstreamYAML string, perUpstream map[string]string) *edge {
	t.Helper()
	listen := testproc.Addr(testproc.FreePort(t))
	path := filepath.Join(c.dir, "gateway.yaml")
	if err := os.WriteFile(path, []byte(edgeConfig(c, listen, upstreamYAML, perUpstream)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testproc.Start(t, bin, "gateway", "gateway", "--config", path)
	e := &edge{proc: p, url: "http://" + listen}
	testproc.WaitHTTP(t, p, e.url+"/healthz/ready")
	return e
}

// reply is one HTTP exchange's outcome.
type reply struct {
	url     string // the request's
	status  int
	header  http.Header
	body    []byte
	problem map[string]any
}

func (r reply) code() string { s, _ := r.problem["code"].(string); return s }

// call sends method url with token (none when ""), optional JSON body and
// extra headers ("Name: value"), bounded by 15s.
func call(t testing.TB, method, url, token, body string, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	client := &http.Client{Timeout: 15 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{url: url, status: resp.StatusCode, header: resp.Header, body: b}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		if err := json.Unmarshal(b, &r.problem); err != nil {
			t.Errorf("%s %s: problem body is not JSON: %q", method, url, b)
		}
	}
	return r
}

// checkProblem asserts the RFC 9457 shape every error must have.
func checkProblem(t testing.TB, r reply, path string) {
	t.Helper()
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") {
		t.Fatalf("status %d Content-Type = %q, want application/problem+json; body %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	for _, k := range []string{"type", "title", "status", "detail", "instance", "code", "traceId"} {
		if _, ok := r.problem[k]; !ok {
			t.Errorf("problem lacks %q: %s", k, r.body)
		}
	}
	if got, _ := r.problem["status"].(float64); int(got) != r.status {
		t.Errorf("problem status %v != HTTP status %d", r.problem["status"], r.status)
	}
	if r.problem["instance"] != path {
		t.Errorf("instance = %v, want %s", r.problem["instance"], path)
	}
	if tid := r.header.Get("X-Trace-Id"); tid == "" || r.problem["traceId"] != tid {
		t.Errorf("traceId %v does not match X-Trace-Id %q", r.problem["traceId"], tid)
	}
	checkTypeResolves(t, r)
}

// checkTypeResolves asserts that the problem's type, resolved against the
// request URL (RFC 9457 section 3.1.1), is a page the edge serves to anyone.
func checkTypeResolves(t testing.TB, r reply) {
	t.Helper()
	typ, _ := r.problem["type"].(string)
	base, err := neturl.Parse(r.url)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := neturl.Parse(typ)
	if err != nil || !strings.HasPrefix(typ, "/problems/") {
		t.Fatalf("type %q, want /problems/<slug>", typ)
	}
	page := call(t, http.MethodGet, base.ResolveReference(ref).String(), "", "")
	if page.status != http.StatusOK || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
		t.Errorf("type %q: GET %s = %d %q, want 200 text/html", typ, base.ResolveReference(ref), page.status, page.header.Get("Content-Type"))
	}
}

const orderBody = `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_ok"}`

func orderBodyFor(sku string, qty int, method string) string {
	return fmt.Sprintf(`{"lines":[{"sku":%q,"quantity":%d}],"paymentMethod":%q}`, sku, qty, method)
}

type ctxT = context.Context

func itoa(i int) string { return strconv.Itoa(i) }
