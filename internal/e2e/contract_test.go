package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/portico-gateway/portico/internal/testproc"
)

// TestResponsesMatchSchema calls every operation of the /openapi.json a
// real `portico dev` serves, and checks each request against the document
// (kin-openapi's openapi3filter) before sending it (the document refuses
// exactly the requests the edge answers 400), and each answer, the
// successes and the problems, against the operation's response: its
// status is declared, its body has every required member (the edge writes
// every member, EmitUnpopulated) and, with every object schema closed for
// the check, no member the document does not name.
func TestResponsesMatchSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	base := testproc.FreePortRange(t, 10)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", testproc.TempDir(t))
	url := "http://" + testproc.Addr(base)
	testproc.WaitHTTP(t, dev, url+"/health")
	testproc.WaitDevReady(t, dev)
	doc, err := openapi3.NewLoader().LoadFromData(fetchOpenAPI3(t, url))
	if err != nil {
		t.Fatal(err)
	}
	closeObjects(doc)
	doc.Servers = openapi3.Servers{{URL: url}}
	c := &contractClient{t: t, url: url, doc: doc, seen: map[string]bool{}}

	const admin, alice = "demo-admin-token", "demo-alice-token"
	c.do(admin, "GET", "/api/inventory?pageSize=2", "", 200)
	c.do(admin, "GET", "/api/inventory/keyboard-001", "", 200)
	c.do(admin, "POST", "/api/inventory", `{"sku":"pad-901","name":"Desk Pad","unitPrice":{"amountMinor":"1500","currency":"USD"},"available":"10"}`, 201)
	c.do(admin, "PATCH", "/api/inventory/pad-901", `{"available":"25","unitPrice":{"amountMinor":"1700","currency":"USD"}}`, 200)
	c.do(admin, "PATCH", "/api/inventory/pad-901?updateMask=name,available", `{"name":"Desk Pad 2","available":"30"}`, 200)
	res := c.do(admin, "POST", "/api/reservations", `{"orderId":"manual-901","lines":[{"sku":"pad-901","quantity":1}]}`, 201)["id"]
	c.do(admin, "GET", "/api/reservations/"+res, "", 200)
	c.do(admin, "POST", "/api/reservations/"+res+":commit", `{}`, 200)
	res2 := c.do(admin, "POST", "/api/reservations", `{"orderId":"manual-902","lines":[{"sku":"pad-901","quantity":2}]}`, 201)["id"]
	c.do(admin, "POST", "/api/reservations/"+res2+":release", `{}`, 200)
	order := c.do(alice, "POST", "/api/orders", `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_ok"}`, 201,
		"Idempotency-Key: contract-1")["id"]
	c.do(alice, "GET", "/api/orders/"+order, "", 200)
	c.do(alice, "GET", "/api/orders?pageSize=5", "", 200)
	pay := c.do(admin, "POST", "/api/payments", `{"orderId":"manual-903","amount":{"amountMinor":"1200","currency":"USD"},"paymentMethod":"pm_card_ok"}`, 201,
		"Idempotency-Key: contract-2")["id"]
	c.do(admin, "GET", "/api/payments/"+pay, "", 200)
	c.do(admin, "GET", "/api/payments?orderId=manual-903", "", 200)
	c.do(admin, "POST", "/api/payments/"+pay+":refund", `{}`, 200)
	// Streams answer lines, not one document: each is checked for its
	// status and a media type the document declares for it.
	c.stream(alice, "/api/orders/"+order+":watch", "GET /api/orders/{id}:watch", "text/event-stream")
	c.stream(alice, "/api/orders:export", "GET /api/orders:export", "application/x-ndjson")
	// A stream ticket, and the watch it opens without Authorization (as a
	// browser's EventSource does).
	tk := c.do(alice, "POST", "/api/stream-tickets", `{"path":"/api/orders/`+order+`:watch"}`, 200)["url"]
	c.stream("", tk, "GET /api/orders/{id}:watch", "text/event-stream")
	c.do(alice, "POST", "/api/stream-tickets", `{"path":"/api/orders/`+order+`"}`, 404)
	c.do(alice, "POST", "/api/orders/"+order+":cancel", `{}`, 200)
	// Problems: 404, 409, 422 (a declined card), 400.
	c.do(admin, "GET", "/api/orders/ord-missing", "", 404)
	c.do(admin, "POST", "/api/reservations/"+res+":release", `{}`, 409)
	c.do(alice, "POST", "/api/orders", `{"lines":[{"sku":"keyboard-001","quantity":1}],"paymentMethod":"pm_card_declined"}`, 422,
		"Idempotency-Key: contract-3")
	// 400s the document predicts: a bound, an unknown member, a number in
	// the other JSON type (protojson would take it; the edge reads one
	// representation, the document's), an update mask's proto name.
	c.do(admin, "GET", "/api/inventory?pageSize=-1", "", 400)
	c.do(admin, "POST", "/api/reservations", `{"orderId":"manual-904","lines":[{"sku":"pad-901","quantity":1}],"colour":"red"}`, 400)
	c.do(admin, "POST", "/api/inventory", `{"sku":"pad-902","name":"Pad","unitPrice":{"amountMinor":"1500","currency":"USD"},"available":10}`, 400)
	c.do(alice, "POST", "/api/orders", `{"lines":[{"sku":"keyboard-001","quantity":"1"}],"paymentMethod":"pm_card_ok"}`, 400,
		"Idempotency-Key: contract-4")
	c.do(admin, "PATCH", "/api/inventory/pad-901?updateMask=unit_price", `{"unitPrice":{"amountMinor":"1","currency":"USD"}}`, 400)
	c.do(admin, "PATCH", "/api/inventory/pad-901", `{"unitPrice":{"currency":"USD"}}`, 400)

	for _, route := range doc.Paths.InMatchingOrder() {
		for method := range doc.Paths.Value(route).Operations() {
			if !c.seen[method+" "+route] {
				t.Errorf("%s %s: no call; every operation's answers are checked", method, route)
			}
		}
	}
}

// closeObjects sets additionalProperties: false on every object schema of
// doc that names its properties, so that a member the edge writes and the
// document does not name fails the check.
func closeObjects(doc *openapi3.T) {
	// An allOf member that adds a bound to one property (rules' CEL
	// bounds) is a part of its object, not the whole: it stays open.
	parts := map[*openapi3.Schema]bool{}
	seen := map[*openapi3.Schema]bool{}
	var walk func(r *openapi3.SchemaRef, part bool)
	walk = func(r *openapi3.SchemaRef, part bool) {
		if r == nil || r.Value == nil {
			return
		}
		if part && r.Ref == "" {
			parts[r.Value] = true
		}
		if seen[r.Value] {
			return
		}
		seen[r.Value] = true
		s := r.Value
		for _, p := range s.Properties {
			walk(p, false)
		}
		walk(s.Items, false)
		for i, x := range s.AllOf {
			walk(x, i > 0)
		}
		for _, g := range []openapi3.SchemaRefs{s.AnyOf, s.OneOf} {
			for _, x := range g {
				walk(x, false)
			}
		}
	}
	for _, s := range doc.Components.Schemas {
		walk(s, false)
	}
	for s := range seen {
		if !parts[s] && len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			s.AdditionalProperties = openapi3.AdditionalProperties{Has: openapi3.Ptr(false)}
		}
	}
}

// contractClient sends requests the document allows and checks the answers
// against it.
type contractClient struct {
	t    *testing.T
	url  string
	doc  *openapi3.T
	seen map[string]bool // "METHOD /route" called
}

// do sends one request, checks it and its answer against the document and
// that the status is want, and returns the answer's top-level string
// members.
// stream GETs path with accept and checks the answer is a 200 of a media
// type the document declares for op ("METHOD /template").
func (c *contractClient) stream(token, path, op, accept string) {
	t := c.t
	t.Helper()
	method, tmpl, _ := strings.Cut(op, " ")
	item := c.doc.Paths.Value(tmpl)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("%s: no operation in the document", op)
	}
	c.seen[op] = true
	req, err := http.NewRequestWithContext(t.Context(), method, c.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" { // "": the path carries a stream ticket
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	ok := item.GetOperation(method).Responses.Value("200")
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	if resp.StatusCode != 200 || ok == nil || ok.Value.Content.Get(ct) == nil {
		t.Errorf("%s: %d %s; the document declares %v for 200", op, resp.StatusCode, ct, ok)
	}
}

func (c *contractClient) do(token, method, path, body string, want int, headers ...string) map[string]string {
	t := c.t
	t.Helper()
	newReq := func() *http.Request {
		req, err := http.NewRequestWithContext(t.Context(), method, c.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ":")
			req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		return req
	}
	req := newReq()
	route, params := c.find(req)
	if route == nil {
		t.Fatalf("%s %s: no operation in the document", method, path)
	}
	c.seen[method+" "+route.Path] = true
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	// A 400 is the edge refusing the request's shape or a field rule: the
	// document must refuse it too; every other request is one it allows.
	switch err := openapi3filter.ValidateRequest(t.Context(), in); {
	case want == 400 && err == nil:
		t.Errorf("%s %s %s: the document allows the request the edge refuses", method, path, body)
	case want != 400 && err != nil:
		t.Errorf("%s %s: the request does not match the document: %v", method, path, err)
	}
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(newReq())
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(raw)), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	if err := openapi3filter.ValidateResponse(t.Context(), out); err != nil {
		t.Errorf("%s %s = %d: the answer does not match the document: %v\nbody: %s", method, path, resp.StatusCode, err, raw)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	strs := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			strs[k] = s
		}
	}
	return strs
}

var pathVar = regexp.MustCompile(`\\\{([A-Za-z0-9_]+)\\\}`)

// find matches req to the document's operation by its path template
// ("/api/orders/{id}:cancel": kin-openapi's routers do not take a custom
// verb after a variable).
func (c *contractClient) find(req *http.Request) (*routers.Route, map[string]string) {
	for _, p := range c.doc.Paths.InMatchingOrder() {
		item := c.doc.Paths.Value(p)
		op := item.GetOperation(req.Method)
		if op == nil {
			continue
		}
		re := regexp.MustCompile("^" + pathVar.ReplaceAllString(regexp.QuoteMeta(p), `(?P<$1>[^/:]+)`) + "$")
		m := re.FindStringSubmatch(req.URL.Path)
		if m == nil {
			continue
		}
		params := map[string]string{}
		for i, name := range re.SubexpNames() {
			if name != "" {
				params[name] = m[i]
			}
		}
		return &routers.Route{Spec: c.doc, Path: p, PathItem: item, Method: req.Method, Operation: op}, params
	}
	return nil, nil
}
