package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/portico-gateway/portico/internal/browsertest"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestConsoleInBrowser drives the admin console of a real `portico dev` in
// headless Chromium: before sign-in "/" is the sign-in page and the
// console's modules answer 401; a reader's token is refused (still 401),
// the admin's opens a console session and "/" becomes the console;
// inventory killed turns DOWN with its breaker open; a rate limit shows;
// a config reload shows its new version and diff; a rollback from the
// page (with its confirmation, which says the file on disk is unchanged)
// brings the first version back, listed as "via rollback by" the admin's
// subject. The trend labels name what they compare. Sign-out ends the
// session (the modules are 401 again) and forgets the token. Screenshots
// of each state go to the harness's folder (var/screenshots/...). It also
// measures the page's weight on first load and checks that nothing came
// from another host and no token went into a URL.
func TestConsoleInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	b := browsertest.Find(t)
	base := testproc.FreePortRange(t, 10)
	dir := testproc.TempDir(t)
	dev := testproc.Start(t, bin, "dev", "dev", "--base-port", itoa(base), "--data", dir)
	edge, admin := "http://"+testproc.Addr(base), "http://"+testproc.Addr(base+4)
	testproc.WaitHTTP(t, dev, edge+"/health")
	testproc.WaitDevReady(t, dev)

	asks := &consoleAsks{dev: dev, edge: edge, admin: admin, config: filepath.Join(dir, "gateway.dev.yaml"), ctx: t.Context()}
	defer asks.stopTraffic()
	res := b.Run(t, "testdata/browser/console.mjs", browsertest.Options{
		URL:    admin + "/",
		Params: map[string]string{"token": "demo-admin-token", "readToken": "demo-read-token", "subject": "course-admin"},
		Ask:    asks.answer,
	})
	var data struct {
		First, Second string
		DownMillis    int64
		Modules       struct{ Before, Refused, During, After int }
		TokenLeft     int
	}
	if err := json.Unmarshal(res.Data, &data); err != nil || data.First == "" || data.First == data.Second {
		t.Errorf("scenario data = %s (%v), want two different versions", res.Data, err)
	}
	if m := data.Modules; m.Before != 401 || m.Refused != 401 || m.During != 200 || m.After != 401 || data.TokenLeft != 0 {
		t.Errorf("console.js answered %+v (before sign-in, after a reader's, signed in, signed out) and %d items stayed in sessionStorage; want 401, 401, 200, 401 and none",
			m, data.TokenLeft)
	}
	t.Logf("inventory shown DOWN with its breaker open %d ms after the kill", data.DownMillis)
	if hosts := res.Hosts(); len(hosts) != 1 || hosts[0] != testproc.Addr(base+4) {
		t.Errorf("the page asked hosts %v, want the admin listener alone", hosts)
	}
	for _, q := range res.Requests {
		if strings.Contains(q.URL, "demo-") {
			t.Errorf("a request URL carries a token: %s", q.URL)
		}
	}
	if len(res.PageErrors) > 0 {
		t.Errorf("page errors: %v", res.PageErrors)
	}
	for _, c := range res.Console {
		if strings.Contains(c, "Content Security Policy") {
			t.Errorf("CSP violation: %s", c)
		}
	}
	signIn, shell, first := firstLoad(res.Requests)
	t.Logf("page weight: %d bytes for the sign-in page and its files; %d bytes for the console's page and its files, %d bytes with the first data load (%d requests in all, %d bytes)",
		signIn, shell, first, len(res.Requests), res.TransferredBytes())
	if out := os.Getenv("PORTICO_CONSOLE_WEIGHT"); out != "" {
		_ = os.WriteFile(out, fmt.Appendf(nil, "%d %d\n", shell, first), 0o644)
	}
}

// firstLoad sums the bytes of the sign-in page's files (each path's first
// request before a sign-in succeeds) and, after it, of the console's
// files (each path's first request) and, with them, of the first answer
// of each admin endpoint.
func firstLoad(reqs []browsertest.Request) (signIn, shell, first int64) {
	seen := map[string]bool{}
	signedIn := false
	for _, q := range reqs {
		u, err := url.Parse(q.URL)
		if err != nil {
			continue
		}
		if u.Path == "/admin/session" && q.Method == http.MethodPost && q.Status == http.StatusNoContent && !signedIn {
			signedIn, seen = true, map[string]bool{}
		}
		if seen[u.Path] || q.Method != http.MethodGet || q.Status != http.StatusOK { // not the scenario's 401 probes
			continue
		}
		seen[u.Path] = true
		switch {
		case !signedIn:
			signIn += q.Bytes
		case !strings.HasPrefix(u.Path, "/admin/"):
			shell += q.Bytes
			first += q.Bytes
		default:
			first += q.Bytes
		}
	}
	return signIn, shell, first
}

// consoleAsks are what the scenario asks the test to do.
type consoleAsks struct {
	dev                 *testproc.Proc
	edge, admin, config string
	ctx                 context.Context
	traffic             chan struct{} // closed when the background calls stop; nil before
	stop                context.CancelFunc
}

func (a *consoleAsks) answer(name string, _ json.RawMessage) (any, error) {
	switch name {
	case "kill-inventory":
		return a.killInventory()
	case "rate-limit":
		return a.rateLimit()
	case "stop-traffic":
		a.stopTraffic()
		return nil, nil
	case "edit-config":
		return nil, a.editConfig()
	}
	return nil, fmt.Errorf("unknown ask %q", name)
}

// killInventory kills the inventory process, then calls it through the
// edge until a breaker of inventory opens (at most 60 calls), and keeps
// calling it every 100 ms (at most 600 calls, until stopTraffic) so the
// breaker, whose cool-down is 800 ms, is open again after each probe.
func (a *consoleAsks) killInventory() (any, error) {
	pid, err := childPidOf(a.dev.Output(), "inventory")
	if err != nil {
		return nil, err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return nil, err
	}
	for i := range 60 {
		if _, _, err := a.get(a.edge+"/api/inventory/keyboard-001", "demo-read-token"); err != nil {
			return nil, err
		}
		_, body, err := a.get(a.admin+"/admin/upstreams", "demo-admin-token")
		if err != nil {
			return nil, err
		}
		if strings.Contains(body, `"state":"open"`) {
			a.startTraffic()
			return map[string]int{"calls": i + 1}, nil
		}
	}
	return nil, errors.New("no inventory breaker opened after 60 calls")
}

func (a *consoleAsks) startTraffic() {
	ctx, cancel := context.WithCancel(a.ctx)
	a.stop, a.traffic = cancel, make(chan struct{})
	go func() {
		defer close(a.traffic)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range 600 {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_, _, _ = a.get(a.edge+"/api/inventory/keyboard-001", "demo-read-token")
			}
		}
	}()
}

// stopTraffic stops the background calls and waits for them.
func (a *consoleAsks) stopTraffic() {
	if a.traffic != nil {
		a.stop()
		<-a.traffic
	}
}

// rateLimit sends calls with a wrong token until the failed-authentication
// limit (20 a minute in the dev profile) refuses one with 429.
func (a *consoleAsks) rateLimit() (any, error) {
	for i := range 40 {
		status, _, err := a.get(a.edge+"/api/orders", "not-a-token")
		if err != nil {
			return nil, err
		}
		if status == http.StatusTooManyRequests {
			return map[string]int{"calls": i + 1}, nil
		}
	}
	return nil, errors.New("no 429 after 40 calls with a wrong token")
}

// editConfig lowers the default plan's rate in the dev config file (the
// page then reloads it).
func (a *consoleAsks) editConfig() error {
	b, err := os.ReadFile(a.config)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return err
	}
	limits, _ := cfg["limits"].(map[string]any)
	plans, _ := limits["plans"].(map[string]any)
	plan, _ := plans["default"].(map[string]any)
	if plan == nil {
		return fmt.Errorf("%s has no limits.plans.default", a.config)
	}
	plan["rate"] = 40
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(a.config, out, 0o600)
}

func (a *consoleAsks) get(u, token string) (int, string, error) {
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body), err
}

// childPidOf is childPid without a testing.TB, for the asks.
func childPidOf(out, child string) (int, error) {
	for _, line := range strings.Split(out, "\n") {
		var l struct {
			Msg, Child string
			Pid        int
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "child started" && l.Child == child {
			return l.Pid, nil
		}
	}
	return 0, fmt.Errorf("no child started line for %s", child)
}
