package gateway

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/console"
)

// consoleClock is a clock tests move by hand.
type consoleClock struct{ offset atomic.Int64 }

func (c *consoleClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *consoleClock) advance(d time.Duration) { c.offset.Add(int64(d)) }
func (c *consoleClock) option() Option          { return func(o *options) { o.consoleClock = c.now } }
func signInPage(body string) bool               { return strings.Contains(body, `src="/console/signin.js"`) }
func consolePage(body string) bool              { return strings.Contains(body, `src="/console/console.js"`) }
func cookieLine(resp *http.Response) string {
	return strings.Join(resp.Header.Values("Set-Cookie"), "\n")
}
func noCookie(resp *http.Response) bool { return len(resp.Header.Values("Set-Cookie")) == 0 }
func problemOf(resp *http.Response) bool {
	return resp.Header.Get("Content-Type") == "application/problem+json"
}
func sessionBound(resp *http.Response) bool {
	return resp.Header.Get("Cache-Control") == "no-store" && slices.Contains(resp.Header.Values("Vary"), "Cookie")
}

// consoleSignIn opens a console session with token and returns its cookie.
func consoleSignIn(t *testing.T, admin *httptest.Server, token string) *http.Cookie {
	t.Helper()
	resp, body := consoleDo(t, admin, http.MethodPost, "/admin/session", token, nil)
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusNoContent || len(cs) != 1 || cs[0].Name != console.Cookie {
		t.Fatalf("POST /admin/session = %d %s with cookies %v, want 204 and the session cookie", resp.StatusCode, body, cs)
	}
	return cs[0]
}

// TestConsoleNeedsSession: "/" is the console and its modules load only
// with a live console session whose token is still of role admin;
// otherwise "/" is the sign-in page and the modules a 401 problem. Each
// answer that depends on the cookie says so (Vary: Cookie) and is never
// stored.
func TestConsoleNeedsSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		// cookie returns the cookie to send (nil: none), after whatever
		// the case does to the edge.
		cookie func(t *testing.T, h *harness, admin *httptest.Server, clk *consoleClock) *http.Cookie
		signed bool
	}{
		{"no cookie", func(*testing.T, *harness, *httptest.Server, *consoleClock) *http.Cookie { return nil }, false},
		{"garbage cookie", func(*testing.T, *harness, *httptest.Server, *consoleClock) *http.Cookie {
			return &http.Cookie{Name: console.Cookie, Value: "not-a-session"}
		}, false},
		{"signed out", func(t *testing.T, _ *harness, admin *httptest.Server, _ *consoleClock) *http.Cookie {
			c := consoleSignIn(t, admin, adminToken)
			resp, _ := consoleDo(t, admin, http.MethodDelete, "/admin/session", "", c)
			if resp.StatusCode != http.StatusNoContent || !strings.Contains(cookieLine(resp), console.Cookie+"=;") || !strings.Contains(cookieLine(resp), "Max-Age=0") {
				t.Errorf("DELETE /admin/session = %d, Set-Cookie %q; want 204 clearing the cookie", resp.StatusCode, cookieLine(resp))
			}
			return c
		}, false},
		{"expired session", func(t *testing.T, _ *harness, admin *httptest.Server, clk *consoleClock) *http.Cookie {
			c := consoleSignIn(t, admin, adminToken)
			clk.advance(console.DefaultSessionTTL)
			return c
		}, false},
		{"token removed by a reload", func(t *testing.T, h *harness, admin *httptest.Server, _ *consoleClock) *http.Cookie {
			c := consoleSignIn(t, admin, adminToken)
			next := h.srv.snap.Load().cfg
			next.Auth.Tokens = slices.DeleteFunc(slices.Clone(next.Auth.Tokens), func(tc config.TokenConfig) bool { return tc.Token == adminToken })
			if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
				t.Fatal(err)
			}
			return c
		}, false},
		{"live session", func(t *testing.T, _ *harness, admin *httptest.Server, clk *consoleClock) *http.Cookie {
			c := consoleSignIn(t, admin, adminToken)
			clk.advance(console.DefaultSessionTTL - time.Second)
			return c
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := &consoleClock{}
			h, admin := consoleHarness(t, clk.option())
			c := tc.cookie(t, h, admin, clk)
			resp, body := consoleDo(t, admin, http.MethodGet, "/", "", c)
			if resp.StatusCode != http.StatusOK || consolePage(body) != tc.signed || signInPage(body) == tc.signed || !sessionBound(resp) {
				t.Errorf("GET / = %d %v (console page %v, sign-in page %v), want the console page %v, no-store and Vary: Cookie",
					resp.StatusCode, resp.Header, consolePage(body), signInPage(body), tc.signed)
			}
			if resp.Header.Get("Content-Security-Policy") != console.CSP {
				t.Errorf("GET / has no CSP")
			}
			for _, p := range []string{"/console/console.js", "/console/render.js", "/console/spark.js"} {
				resp, body := consoleDo(t, admin, http.MethodGet, p, "", c)
				want := http.StatusUnauthorized
				if tc.signed {
					want = http.StatusOK
				}
				if resp.StatusCode != want || (want != http.StatusOK) != problemOf(resp) || !sessionBound(resp) {
					t.Errorf("GET %s = %d %s %s, want %d, no-store and Vary: Cookie", p, resp.StatusCode, resp.Header, trim(body), want)
				}
			}
			for _, p := range []string{"/console/signin.js", "/console/console.css"} {
				if resp, _ := consoleDo(t, admin, http.MethodGet, p, "", c); resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-cache" {
					t.Errorf("GET %s = %d %q, want 200 no-cache to anyone", p, resp.StatusCode, resp.Header.Get("Cache-Control"))
				}
			}
		})
	}
}

func trim(s string) string { return s[:min(len(s), 200)] }

// TestConsoleSignIn: POST /admin/session authenticates as the admin API
// does: no or a wrong token is 401, a reader's 403, each a problem and no
// cookie; the admin's token is a 204 with the session cookie, HttpOnly,
// SameSite=Strict, for the whole listener and 8 hours, Secure only on
// TLS. Other methods are 405.
func TestConsoleSignIn(t *testing.T) {
	_, admin := consoleHarness(t)
	for _, tc := range []struct {
		token string
		want  int
	}{
		{"", http.StatusUnauthorized},
		{"wrong-token", http.StatusUnauthorized},
		{readerToken, http.StatusForbidden},
		{aliceToken, http.StatusForbidden},
	} {
		resp, body := consoleDo(t, admin, http.MethodPost, "/admin/session", tc.token, nil)
		if resp.StatusCode != tc.want || !problemOf(resp) || !noCookie(resp) {
			t.Errorf("POST /admin/session with %q = %d %s, Set-Cookie %q; want a %d problem and no cookie", tc.token, resp.StatusCode, trim(body), cookieLine(resp), tc.want)
		}
	}
	if resp, _ := consoleDo(t, admin, http.MethodGet, "/admin/session", adminToken, nil); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST, DELETE" {
		t.Errorf("GET /admin/session = %d Allow %q, want 405 Allow: POST, DELETE", resp.StatusCode, resp.Header.Get("Allow"))
	}
	tls := httptest.NewTLSServer(admin.Config.Handler)
	t.Cleanup(tls.Close)
	for _, srv := range []*httptest.Server{admin, tls} {
		resp, body := consoleDo(t, srv, http.MethodPost, "/admin/session", adminToken, nil)
		line := cookieLine(resp)
		cs := resp.Cookies()
		if resp.StatusCode != http.StatusNoContent || len(cs) != 1 || len(cs[0].Value) != 43 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("POST /admin/session = %d %s, Set-Cookie %q; want 204 with a 256-bit id", resp.StatusCode, body, line)
		}
		for _, attr := range []string{console.Cookie + "=", "Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=28800"} {
			if !strings.Contains(line, attr) {
				t.Errorf("Set-Cookie %q lacks %s", line, attr)
			}
		}
		if secure := srv == tls; strings.Contains(line, "Secure") != secure {
			t.Errorf("Set-Cookie %q: Secure %v, want %v", line, !secure, secure)
		}
	}
}

// TestConsoleSessionCap: the edge keeps console.DefaultMaxSessions
// sessions; one more ends the oldest, and the others stay.
func TestConsoleSessionCap(t *testing.T) {
	clk := &consoleClock{}
	_, admin := consoleHarness(t, clk.option())
	var cookies []*http.Cookie
	for range console.DefaultMaxSessions + 1 {
		cookies = append(cookies, consoleSignIn(t, admin, adminToken))
		clk.advance(time.Millisecond) // distinct creation times: "oldest" is well defined
	}
	for i, c := range []*http.Cookie{cookies[0], cookies[1], cookies[len(cookies)-1]} {
		resp, _ := consoleDo(t, admin, http.MethodGet, "/console/console.js", "", c)
		if want := []int{401, 200, 200}[i]; resp.StatusCode != want {
			t.Errorf("session %d of %d: GET /console/console.js = %d, want %d", []int{1, 2, len(cookies)}[i], len(cookies), resp.StatusCode, want)
		}
	}
}

// TestConsoleSignInAgain: signing in with a cookie ends the old session.
func TestConsoleSignInAgain(t *testing.T) {
	_, admin := consoleHarness(t)
	old := consoleSignIn(t, admin, adminToken)
	resp, _ := consoleDo(t, admin, http.MethodPost, "/admin/session", adminToken, old)
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("POST /admin/session again = %d", resp.StatusCode)
	}
	if resp, _ := consoleDo(t, admin, http.MethodGet, "/console/console.js", "", old); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the replaced session still loads the console: %d", resp.StatusCode)
	}
}
