package gateway

import (
	"cmp"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/auth/authtest"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/internal/redistest"
)

// TestReloadRedisURLBackAndForth: reloads that move redis.url from A to B
// and back to A keep signed requests working (a fresh nonce is accepted,
// every nonce claimed before a move is still a replay), also when A and B
// name one server. Once the handover has passed, a reload lets go of the
// store left behind and closes its client; none is left open once the
// edge is closed.
func TestReloadRedisURLBackAndForth(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t, goleak.IgnoreCurrent()) }) // runs last
	srvA, srvB := redistest.Private(t), redistest.Private(t)
	tests := []struct{ name, a, b string }{
		{"two servers", srvA.URL, srvB.URL},
		{"one server under two names", srvA.URL, srvA.URL + "?dial_timeout=1s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &frozenClock{now: time.Now()}
			h := newHarness(t, setup{
				cfg:  func(c *config.Config) { c.Redis.URL = tc.a },
				opts: []Option{func(o *options) { o.nonceClock = clock.Now }},
			})
			okStubs(h)
			prefix := redistest.Random()
			get := func(nonce string) response {
				hdr := authtest.SignedHeaders(appSecret, "demo-app", "GET", "/api/inventory/a", "", nil, time.Now().Unix(), prefix+nonce)
				return h.do("GET", "/api/inventory/a", "", "", hdr...)
			}
			reload := func(url string) {
				t.Helper()
				next := h.srv.Config()
				next.Redis.URL = url
				if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
					t.Fatalf("Reload(redis.url) = %v", err)
				}
			}
			steps := []struct {
				name, nonce string
				move        string // reload to this url first, when set
				want        int
			}{
				{"on A", "nonce-on-a-0001", "", 200},
				{"fresh on B", "nonce-on-b-0001", tc.b, 200},
				{"claimed on A, replayed on B", "nonce-on-a-0001", "", 401},
				{"fresh back on A", "nonce-on-a-0002", tc.a, 200},
				{"claimed on B, replayed back on A", "nonce-on-b-0001", "", 401},
				{"claimed on A, replayed back on A", "nonce-on-a-0001", "", 401},
				{"claimed back on A, replayed", "nonce-on-a-0002", "", 401},
				{"fresh again on B", "nonce-on-b-0002", tc.b, 200},
			}
			for _, st := range steps {
				if st.move != "" {
					reload(st.move)
				}
				if r := get(st.nonce); r.status != st.want {
					t.Errorf("%s: %d %s, want %d", st.name, r.status, r.body, st.want)
				}
			}
			if n := h.srv.nonces.open(); n != 2 {
				t.Errorf("after moves between two urls %d nonce stores are open, want 2", n)
			}
			aClient := h.srv.nonces.byURL[tc.a].client // B is live, A left behind
			clock.Add(noncesHandover + time.Second)
			next := h.srv.Config()
			next.Health.Timeout += time.Second // any change: a new snapshot
			if _, err := h.srv.Reload(t.Context(), next, SourceAdmin); err != nil {
				t.Fatalf("Reload = %v", err)
			}
			if n := h.srv.nonces.open(); n != 1 {
				t.Errorf("after the handover %d nonce stores are open, want 1", n)
			}
			if err := aClient.Ping(t.Context()).Err(); !errors.Is(err, redis.ErrClosed) {
				t.Errorf("the client of the store left behind: Ping() = %v, want %v", err, redis.ErrClosed)
			}
			if r := get("nonce-after-handover-01"); r.status != 200 {
				t.Errorf("after the handover: %d %s, want 200", r.status, r.body)
			}
		})
	}
}

// TestSignedReplayAfterRedisDataLoss: a signed request replayed after
// Redis lost its data (FLUSHALL) is refused, not served a second time:
// 503 saying why, with a Retry-After of the hold (twice the signature
// window), and nothing reaches the service.
func TestSignedReplayAfterRedisDataLoss(t *testing.T) {
	srv := redistest.Private(t)
	h, _ := limitHarness(t, config.LimitsConfig{}, func(c *config.Config) { c.Redis.URL = srv.URL })
	hdr := authtest.SignedHeaders(appSecret, "demo-app", "GET", "/api/inventory/a", "", nil, time.Now().Unix(), "nonce-before-loss-01")
	if r := h.do("GET", "/api/inventory/a", "", "", hdr...); r.status != 200 {
		t.Fatalf("signed request: %d %s", r.status, r.body)
	}
	if err := srv.Client(t).FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	r := h.do("GET", "/api/inventory/a", "", "", hdr...)
	if r.status != 503 || r.json(t)["code"] != "SERVICE_UNAVAILABLE" || !strings.Contains(r.json(t)["detail"].(string), "lost its data") {
		t.Fatalf("replay after the loss: %d %s, want 503 SERVICE_UNAVAILABLE saying the store lost its data", r.status, r.body)
	}
	window := cmp.Or(h.srv.Config().Auth.SignedApps.Window, auth.DefaultSignatureWindow)
	if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra < int(window.Seconds()) || ra > int(2*window.Seconds()) {
		t.Errorf("Retry-After = %q, want the rest of the hold (%s to %s)", r.header.Get("Retry-After"), window, 2*window)
	}
	if _, n := h.inv.last(); n != 1 {
		t.Errorf("inventory saw %d calls, want 1", n)
	}
}
