package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/interceptors/identity"
	"github.com/portico-gateway/portico/internal/logging"
	"github.com/portico-gateway/portico/internal/testproc"
)

// slowGet is inventory's GetItem slowed down, so a call is in flight long
// enough to be caught by a SIGTERM.
const slowGet = "delay=1500ms,method=/portico.inventory.v1.InventoryService/GetItem"

// TestEdgeSIGTERMDrains: a request in flight at the edge when SIGTERM
// arrives completes with 200, the edge exits 0, and a request afterwards
// is refused at connect. The test learns the request is in flight from
// the admin API (the upstream's inFlight), not from the clock. The edge
// buffers its access lines as in production (logging.BufferEnv unset):
// the in-flight request's line, logged while the edge stops, is written
// before it exits.
func TestEdgeSIGTERMDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startClusterWith(t, []string{"--faults", slowGet}, nil)
	listen := testproc.Addr(testproc.FreePort(t))
	admin := "http://" + testproc.Addr(testproc.FreePort(t))
	path := filepath.Join(c.dir, "gateway.yaml")
	cfg := edgeConfig(c, listen, "", nil) + "admin_listen: " + strings.TrimPrefix(admin, "http://") + "\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testproc.StartEnv(t, bin, "gateway", []string{logging.BufferEnv + "="}, "gateway", "--config", path)
	url := "http://" + listen
	testproc.WaitHTTP(t, p, url+"/healthz/ready")

	got := make(chan int, 1)
	go func() { got <- status200(url+"/api/inventory/keyboard-001", "demo-read-token") }()
	if !testproc.WaitFor(t.Context(), 10*time.Second, func(context.Context) bool { return inFlight(admin, "inventory") > 0 }) {
		t.Fatalf("the request never got in flight:\n%s", p.Output())
	}
	if err := p.Stop(20 * time.Second); err != nil {
		t.Errorf("edge exit after SIGTERM = %v, want 0\n%s", err, p.Output())
	}
	if code := <-got; code != 200 {
		t.Errorf("request in flight at SIGTERM = %d, want 200", code)
	}
	if n := len(records(p.Output(), func(r map[string]any) bool {
		return r["msg"] == "request" && r["path"] == "/api/inventory/keyboard-001" && r["status"] == 200.0
	})); n != 1 {
		t.Errorf("access lines of the request in flight at SIGTERM = %d, want 1 (the buffered log flushed at exit)\n%s", n, p.Output())
	}
	_, err := http.Get(url + "/healthz/live")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("request after the drain = %v, want connection refused", err)
	}
}

// TestServiceSIGTERMDrains: for each service, a call in flight at SIGTERM
// completes OK (the service serves on through --drain-delay, then lets it
// finish), the process exits 0, and a later call is UNAVAILABLE.
func TestServiceSIGTERMDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	dir := testproc.TempDir(t)
	addr := testproc.Addr(testproc.FreePort(t))
	p := testproc.Start(t, bin, "inventory", "inventory", "--listen", addr, "--db", filepath.Join(dir, "inv.db"),
		"--faults", slowGet, "--drain-delay", "500ms", "--shutdown-grace", "10s")
	testproc.WaitServing(t, p, addr)
	client := inventoryv1.NewInventoryServiceClient(testproc.Dial(t, addr, grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(asService))))
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := client.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
		done <- err
	}()
	// The call is in flight or arrives within the drain delay, which still
	// serves: either way it must complete.
	if err := p.Stop(20 * time.Second); err != nil {
		t.Errorf("inventory exit after SIGTERM = %v, want 0\n%s", err, p.Output())
	}
	if err := <-done; err != nil {
		t.Errorf("call in flight at SIGTERM = %v, want OK", err)
	}
	late := inventoryv1.NewInventoryServiceClient(testproc.Dial(t, addr, grpc.WithChainUnaryInterceptor(identity.UnaryClientInterceptor(asService))))
	lctx, lcancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer lcancel()
	if _, err := late.GetItem(lctx, &inventoryv1.GetItemRequest{Sku: "keyboard-001"}); status.Code(err) != codes.Unavailable {
		t.Errorf("call after the stop = %v, want UNAVAILABLE", err)
	}
}

// status200 GETs url and returns the status, 0 when there was none.
func status200(url, token string) int {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// inFlight reads an upstream's calls in flight from the admin API.
func inFlight(admin, upstream string) int64 {
	req, _ := http.NewRequest(http.MethodGet, admin+"/admin/upstreams", nil)
	req.Header.Set("Authorization", "Bearer demo-admin-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var body struct {
		Upstreams []struct {
			Name  string
			Chain struct{ InFlight int64 }
		}
	}
	if json.NewDecoder(resp.Body).Decode(&body) != nil {
		return 0
	}
	for _, u := range body.Upstreams {
		if u.Name == upstream {
			return u.Chain.InFlight
		}
	}
	return 0
}

// TestReloadStormUnderLoad: a burst of SIGHUPs while the config file flips
// between two versions and clients keep calling: every request succeeds,
// and the edge ends on the file's last content.
func TestReloadStormUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	c := startCluster(t)
	e := startEdge(t, c, "", nil)
	path := filepath.Join(c.dir, "gateway.yaml")
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	versions := [][]byte{base, append(append([]byte{}, base...), "routes: {max_body_bytes: 4096}\n"...)}
	codes := make(chan int, 200)
	go func() {
		defer close(codes)
		for range 150 { // bounded: 150 requests, each with a 15s client timeout
			codes <- status200(e.url+"/api/inventory/keyboard-001", "demo-read-token")
		}
	}()
	for i := range 60 {
		if err := os.WriteFile(path, versions[i%2], 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(e.proc.Pid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	failed := 0
	for code := range codes {
		if code != 200 {
			failed++
		}
	}
	if failed > 0 {
		t.Errorf("%d requests failed during the reload storm\n%s", failed, e.proc.Output())
	}
	if e.proc.Exited() {
		t.Fatalf("the edge died during the storm:\n%s", e.proc.Output())
	}
	if r := call(t, "GET", e.url+"/healthz/ready", "", ""); r.status != 200 {
		t.Errorf("ready after the storm = %d", r.status)
	}
}
