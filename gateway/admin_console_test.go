package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/console"
)

// consoleHarness is an edge with debug logs in h.logs and its admin API on
// a test server.
func consoleHarness(t *testing.T, opts ...Option) (*harness, *httptest.Server) {
	h := newHarness(t, setup{opts: opts})
	okStubs(h)
	admin := httptest.NewServer(h.srv.AdminHandler())
	t.Cleanup(admin.Close)
	return h, admin
}

func consoleGet(t *testing.T, admin *httptest.Server, path, token string) (*http.Response, string) {
	t.Helper()
	return consoleDo(t, admin, http.MethodGet, path, token, nil)
}

// consoleDo sends method path to admin with token as a bearer (none when
// "") and the cookie (none when nil).
func consoleDo(t *testing.T, admin *httptest.Server, method, path, token string, c *http.Cookie) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, admin.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := admin.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestConsoleFiles: the console's files are served with their type and
// the security headers (the sign-in page's script and the stylesheet to
// anyone, the page and its modules to a console session); the admin
// API's answers carry the headers too.
func TestConsoleFiles(t *testing.T) {
	_, admin := consoleHarness(t)
	c := consoleSignIn(t, admin, adminToken)
	types := map[string]string{".css": "text/css", ".js": "text/javascript", "/": "text/html"}
	paths := append(console.Paths(), "/admin/versions")
	for _, p := range paths {
		t.Run(p, func(t *testing.T) {
			resp, body := consoleDo(t, admin, http.MethodGet, p, "", c)
			want := http.StatusOK
			if strings.HasPrefix(p, "/admin/") {
				want = http.StatusUnauthorized // the cookie is no credential for the admin API
			} else {
				var ct string
				for suffix, typ := range types {
					if strings.HasSuffix(p, suffix) {
						ct = typ
					}
				}
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || body == "" {
					t.Errorf("Content-Type %q with %d bytes, want %s and the file", resp.Header.Get("Content-Type"), len(body), ct)
				}
			}
			if resp.StatusCode != want {
				t.Errorf("status %d, want %d", resp.StatusCode, want)
			}
			for k, v := range map[string]string{"Content-Security-Policy": console.CSP, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	if !strings.Contains(console.CSP, "frame-ancestors 'none'") || strings.Contains(console.CSP, "unsafe") || strings.Contains(console.CSP, "http") {
		t.Errorf("CSP %q is not strict: want frame-ancestors 'none', no unsafe-*, no outside host", console.CSP)
	}
}

// TestConsoleFilesAreStrict: no inline script, style or handler, and no
// outside host, in any console file or the sign-in page (the CSP would
// block them; this says which line).
func TestConsoleFilesAreStrict(t *testing.T) {
	_, admin := consoleHarness(t)
	c := consoleSignIn(t, admin, adminToken)
	bad := []*regexp.Regexp{
		regexp.MustCompile(`(?i)\son[a-z]+\s*=`), // onclick= and the like
		regexp.MustCompile(`(?i)\sstyle\s*=`),
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`), // an outside host
		regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|eval\(|new Function`),
	}
	bodies := map[string]string{}
	for _, p := range console.Paths() {
		_, bodies[p] = consoleDo(t, admin, http.MethodGet, p, "", c)
	}
	_, bodies["/ (sign-in page)"] = consoleGet(t, admin, "/", "")
	for p, body := range bodies {
		for _, tag := range regexp.MustCompile(`(?i)<script[^>]*>`).FindAllString(body, -1) {
			if !strings.Contains(tag, " src=") {
				t.Errorf("%s: inline script %q", p, tag)
			}
		}
		for i, line := range strings.Split(body, "\n") {
			for _, re := range bad {
				if m := re.FindString(line); m != "" && !strings.Contains(line, "www.w3.org/2000/svg") {
					t.Errorf("%s:%d: %q matches %s", p, i+1, m, re)
				}
			}
		}
	}
}

// TestAdminTraffic: the traffic history needs the admin role, bounds its
// parameter, and shows an upstream's answers once sampled.
func TestAdminTraffic(t *testing.T) {
	h, admin := consoleHarness(t)
	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/admin/traffic", "", http.StatusUnauthorized},
		{"/admin/traffic", "wrong", http.StatusUnauthorized},
		{"/admin/traffic", readerToken, http.StatusForbidden},
		{"/admin/traffic?minutes=0", adminToken, http.StatusBadRequest},
		{"/admin/traffic?minutes=61", adminToken, http.StatusBadRequest},
		{"/admin/traffic?minutes=" + strings.Repeat("9", 100), adminToken, http.StatusBadRequest},
		{"/admin/traffic?minutes=5", adminToken, http.StatusOK},
	} {
		resp, body := consoleGet(t, admin, tc.path, tc.token)
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s with %q = %d %s, want %d", tc.path, tc.token, resp.StatusCode, body, tc.want)
		}
		if tc.want != http.StatusOK && resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("GET %s: Content-Type %q, want a problem", tc.path, resp.Header.Get("Content-Type"))
		}
		if len(body) > 2000 && tc.want != http.StatusOK {
			t.Errorf("GET %s: a %d-byte problem echoes too much", tc.path, len(body))
		}
	}
	now := time.Now()
	h.srv.trend.Sample(now.Add(-10 * time.Second))
	for range 3 {
		h.do("GET", "/api/inventory/sku-1", adminToken, "")
	}
	h.srv.trend.Sample(now)
	_, body := consoleGet(t, admin, "/admin/traffic", adminToken)
	var got struct {
		Upstreams []struct {
			Name    string
			Summary struct{ Requests float64 }
			Recent  []struct{ Rate float64 }
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	for _, u := range got.Upstreams {
		if u.Name == "inventory" {
			if u.Summary.Requests != 3 || len(u.Recent) != 1 || u.Recent[0].Rate <= 0 {
				t.Errorf("inventory = %+v, want 3 requests and one point", u)
			}
			return
		}
	}
	t.Errorf("/admin/traffic = %s, want inventory's traffic", body)
}

// TestAdminTrafficMinutes: ?minutes= absent is the default span; given,
// it must be one whole number from 1 to 60, else a 400 problem naming
// the parameter (an empty or repeated value is not read as the default or
// as its first value).
func TestAdminTrafficMinutes(t *testing.T) {
	_, admin := consoleHarness(t)
	for _, tc := range []struct {
		name, query string
		want        int
	}{
		{"absent", "", http.StatusOK},
		{"one", "?minutes=1", http.StatusOK},
		{"most", "?minutes=60", http.StatusOK},
		{"leading zero", "?minutes=015", http.StatusOK},
		{"empty", "?minutes=", http.StatusBadRequest},
		{"bare", "?minutes", http.StatusBadRequest},
		{"repeated", "?minutes=5&minutes=10", http.StatusBadRequest},
		{"repeated same", "?minutes=5&minutes=5", http.StatusBadRequest},
		{"repeated empty", "?minutes=5&minutes=", http.StatusBadRequest},
		{"not a number", "?minutes=five", http.StatusBadRequest},
		{"fraction", "?minutes=1.5", http.StatusBadRequest},
		{"plus sign", "?minutes=%2B5", http.StatusBadRequest},
		{"space", "?minutes=%205", http.StatusBadRequest},
		{"negative", "?minutes=-5", http.StatusBadRequest},
		{"zero", "?minutes=0", http.StatusBadRequest},
		{"too large", "?minutes=61", http.StatusBadRequest},
		{"overflows int", "?minutes=" + strings.Repeat("9", 40), http.StatusBadRequest},
		{"semicolon", "?minutes=1;x", http.StatusBadRequest},
		{"bad escape", "?minutes=%zz", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := consoleGet(t, admin, "/admin/traffic"+tc.query, adminToken)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET /admin/traffic%s = %d %s, want %d", tc.query, resp.StatusCode, body, tc.want)
			}
			if tc.want == http.StatusOK {
				return
			}
			var p struct {
				Status       int
				Code, Detail string
			}
			if err := json.Unmarshal([]byte(body), &p); err != nil || resp.Header.Get("Content-Type") != "application/problem+json" ||
				p.Status != http.StatusBadRequest || !strings.Contains(p.Detail, "minutes must be given once") {
				t.Errorf("GET /admin/traffic%s = %s %s, want a 400 problem about minutes", tc.query, resp.Header.Get("Content-Type"), body)
			}
			if len(body) > 1000 {
				t.Errorf("GET /admin/traffic%s: a %d-byte problem echoes too much", tc.query, len(body))
			}
		})
	}
}

// TestConsoleKeepsTokensOutOfLogs: signing in and out (with a good token,
// a reader's and a wrong one), the console's files and every data
// endpoint the console polls log no token.
func TestConsoleKeepsTokensOutOfLogs(t *testing.T) {
	h, admin := consoleHarness(t)
	const wrong = "wrong-but-secret-token-1234"
	for _, tok := range []string{adminToken, readerToken, wrong} {
		resp, _ := consoleDo(t, admin, http.MethodPost, "/admin/session", tok, nil)
		var c *http.Cookie
		if cs := resp.Cookies(); len(cs) == 1 {
			c = cs[0]
		}
		for _, p := range []string{"/", "/console/console.js", "/admin/versions", "/admin/upstreams", "/admin/traffic", "/admin/limits", "/admin/audit", "/admin/config"} {
			consoleDo(t, admin, http.MethodGet, p, tok, c)
		}
		consoleDo(t, admin, http.MethodDelete, "/admin/session", "", c)
	}
	logs := h.logs.String()
	if logs == "" {
		t.Log("no log lines at all")
	}
	for _, tok := range []string{adminToken, readerToken, wrong} {
		if strings.Contains(logs, tok) {
			t.Errorf("the logs show token %s", tok)
		}
	}
}

// TestAdminDataHasNoSecrets: no data endpoint the console reads shows a
// token or a Redis password.
func TestAdminDataHasNoSecrets(t *testing.T) {
	cfg := config.Dev(0)
	cfg.Redis.URL = "redis://user:redis-pass-1234@127.0.0.1:6379/0"
	b, err := json.Marshal(config.Redacted(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "redis-pass-1234") {
		t.Errorf("the redacted config shows the Redis password: %s", b)
	}
	_, admin := consoleHarness(t)
	for _, p := range []string{"/admin/config", "/admin/versions", "/admin/upstreams", "/admin/traffic", "/admin/limits", "/admin/audit", "/admin/routes"} {
		_, body := consoleGet(t, admin, p, adminToken)
		for _, tok := range []string{adminToken, readerToken, aliceToken, bobToken} {
			if strings.Contains(body, tok) {
				t.Errorf("%s shows token %s", p, tok)
			}
		}
	}
}
