package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// probe is one request of the equivalence check between two edges.
type probe struct {
	name, method, path, token, body string
}

// probes cover what an edge adds: the good answer with its quota headers,
// 401 without a credential, 403 for a role the route is not granted, and
// an upstream error (NOT_FOUND) through the error handler.
var probes = []probe{
	{"good", http.MethodGet, "/api/inventory/" + benchSKU, "demo-read-token", ""},
	{"no credential", http.MethodGet, "/api/inventory/" + benchSKU, "", ""},
	{"unknown key", http.MethodGet, "/api/inventory/" + benchSKU, "not-a-key", ""},
	{"role not granted", http.MethodPost, "/api/inventory", "demo-read-token", `{"sku":"x","name":"y"}`},
	{"upstream NOT_FOUND", http.MethodGet, "/api/inventory/no-such-sku", "demo-read-token", ""},
}

// answer is what the check compares of one response.
type answer struct {
	status    int
	mediaType string
	body      any               // decoded JSON, zero values dropped; a problem: its type, title, status and code
	headers   map[string]string // the quota headers, and the challenge
}

// compared are the headers two edges must send alike.
var compared = []string{"RateLimit-Policy", "X-RateLimit-Limit", "WWW-Authenticate", "Cache-Control", "Location"}

// equivalentTo sends every probe to ref and s and reports whether the
// answers are the same (status, media type, body as JSON, the compared
// headers' presence and RateLimit-Policy's value), and the first
// difference.
func equivalentTo(ctx context.Context, ref, s *system) (bool, string) {
	base := func(sys *system) string { return sys.url[:strings.Index(sys.url, "/api/")] }
	for _, p := range probes {
		a, err := ask(ctx, base(ref)+p.path, p)
		if err != nil {
			return false, fmt.Sprintf("%s: (%s): %v", p.name, ref.Key, err)
		}
		b, err := ask(ctx, base(s)+p.path, p)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", p.name, err)
		}
		if d := answerDiff(a, b); d != "" {
			return false, fmt.Sprintf("%s: %s (want (%s)'s answer)", p.name, d, ref.Key)
		}
	}
	return true, ""
}

func answerDiff(a, b answer) string {
	switch {
	case a.status != b.status:
		return fmt.Sprintf("status %d, want %d", b.status, a.status)
	case a.mediaType != b.mediaType:
		return fmt.Sprintf("Content-Type %s, want %s", b.mediaType, a.mediaType)
	case !jsonEqual(a.body, b.body):
		return fmt.Sprintf("body %v, want %v", b.body, a.body)
	}
	for _, h := range compared {
		if (a.headers[h] == "") != (b.headers[h] == "") {
			return fmt.Sprintf("header %s %q, want %q", h, b.headers[h], a.headers[h])
		}
	}
	if a.headers["Location"] != b.headers["Location"] {
		return fmt.Sprintf("Location %q, want %q", b.headers["Location"], a.headers["Location"])
	}
	if a.headers["RateLimit-Policy"] != b.headers["RateLimit-Policy"] {
		return fmt.Sprintf("RateLimit-Policy %q, want %q", b.headers["RateLimit-Policy"], a.headers["RateLimit-Policy"])
	}
	return ""
}

// ask sends p to url, with the extra header pairs, and returns the answer.
func ask(ctx context.Context, url string, p probe, header ...string) (answer, error) {
	var body io.Reader
	if p.body != "" {
		body = strings.NewReader(p.body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, url, body)
	if err != nil {
		return answer{}, err
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	if p.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return answer{}, err
	}
	a := answer{status: resp.StatusCode, headers: map[string]string{}}
	a.mediaType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	for _, h := range compared {
		a.headers[h] = resp.Header.Get(h)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return a, fmt.Errorf("status %d, not JSON: %.200s", resp.StatusCode, raw)
	}
	if m, ok := v.(map[string]any); ok && a.mediaType == "application/problem+json" {
		v = map[string]any{"type": m["type"], "title": m["title"], "status": m["status"], "code": m["code"]}
	}
	a.body = dropZero(v)
	return a, nil
}
