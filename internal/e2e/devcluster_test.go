package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/pgtest"
	"github.com/portico-gateway/portico/internal/testproc"
)

// TestDevCluster runs `portico dev --replicas 2 --postgres URL [--redis
// URL]`: both edges answer /health with three dependencies UP, an order
// made through one edge replays through the other, the generated configs
// share redis.url, and SIGTERM stops every child.
func TestDevCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	db := pgtest.New(t)
	base := testproc.FreePortRange(t, 20)
	dir := testproc.TempDir(t)
	args := []string{"dev", "--base-port", itoa(base), "--data", dir, "--replicas", "2", "--postgres", db}
	redis := os.Getenv("REDIS_URL")
	if redis != "" {
		args = append(args, "--redis", redis)
	} else {
		t.Log("REDIS_URL is not set: the edges keep their state in memory")
	}
	dev := testproc.Start(t, bin, "dev", args...)
	testproc.WaitDevReady(t, dev)
	edges := []string{"http://" + testproc.Addr(base), "http://" + testproc.Addr(base+10)}
	for _, e := range edges {
		testproc.WaitHTTP(t, dev, e+"/health")
		r := call(t, "GET", e+"/health", "", "")
		var h struct {
			Status       string
			Dependencies []struct{ Name, Status string }
		}
		err := json.Unmarshal(r.body, &h)
		up := map[string]bool{} // and redis, with REDIS_URL
		for _, d := range h.Dependencies {
			up[d.Name] = d.Status == "UP"
		}
		if err != nil || h.Status != "UP" || !up["inventory"] || !up["payment"] || !up["order"] {
			t.Errorf("GET %s/health = %d %s", e, r.status, r.body)
		}
	}
	var ids []string
	for _, e := range edges {
		r := call(t, "POST", e+"/api/orders", "demo-alice-token", orderBody, "Idempotency-Key: cluster-1")
		var o struct{ ID, Status string }
		_ = json.Unmarshal(r.body, &o)
		if r.status != 201 || o.Status != "CONFIRMED" {
			t.Fatalf("POST %s/api/orders = %d %s", e, r.status, r.body)
		}
		ids = append(ids, o.ID)
	}
	if ids[0] != ids[1] {
		t.Errorf("one key through two edges made orders %v, want one", ids)
	}
	for _, f := range []string{"gateway.dev.yaml", "gateway.dev.1.yaml"} {
		b, err := os.ReadFile(dir + "/" + f)
		if err != nil || redis != "" && !strings.Contains(string(b), redis) {
			t.Errorf("%s: %v; want redis.url %q in it", f, err, redis)
		}
	}
	pids := []int{childPid(t, dev.Output(), "order-1"), childPid(t, dev.Output(), "gateway-1"), childPid(t, dev.Output(), "inventory-0")}
	if err := dev.Stop(20 * time.Second); err != nil {
		t.Errorf("dev exit = %v, want clean", err)
	}
	for _, pid := range pids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("child %d still running after dev stopped", pid)
		}
	}
}
