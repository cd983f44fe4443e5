package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/testproc"
)

// edgeLimits are rate limits every request passes through (the caller's
// plan and the global limit, both kept in the shared Redis) set high enough
// never to refuse one: the benchmark measures their cost, not their limit.
const edgeLimits = `limits:
  plans: {default: {rate: 1000000, burst: 1000000}}
  default_plan: default
  global: {rate: 1000000, burst: 1000000}
`

// BenchmarkEdgeReplicasRedis measures GET /api/inventory/{sku} through 1, 2
// and 3 edge processes sharing one Redis (REDIS_URL; skipped when unset) for
// their rate limits, in front of one inventory, payment and order process:
// 16 closed-loop clients spread over the edges, each request passing the
// caller's and the global limit in Redis. Loopback only; b.N requests per
// run bound it.
//
//	REDIS_URL=redis://127.0.0.1:6379/0 \
//	  go test -run '^$' -bench EdgeReplicasRedis -benchtime 4000x ./internal/e2e
func BenchmarkEdgeReplicasRedis(b *testing.B) {
	redis := os.Getenv("REDIS_URL")
	if redis == "" {
		b.Skip("REDIS_URL is not set: edges sharing Redis need one")
	}
	c := startCluster(b)
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("edges=%d", n), func(b *testing.B) {
			var urls []string
			for k := range n {
				urls = append(urls, startRedisEdge(b, c, redis, k).url)
			}
			benchEdges(b, urls)
		})
	}
}

// startRedisEdge starts edge k of c with edgeLimits in redis.
func startRedisEdge(b *testing.B, c *cluster, redis string, k int) *edge {
	b.Helper()
	listen := testproc.Addr(testproc.FreePort(b))
	path := filepath.Join(c.dir, fmt.Sprintf("gateway-redis-%d.yaml", k))
	cfg := edgeConfig(c, listen, noBreaker, nil) + edgeLimits + "redis:\n  url: " + redis + "\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	p := testproc.Start(b, bin, fmt.Sprint("gateway-", k), "gateway", "--config", path)
	e := &edge{proc: p, url: "http://" + listen}
	testproc.WaitHTTP(b, p, e.url+"/healthz/ready")
	return e
}

// benchEdges sends b.N GETs from 16 clients, client i to urls[i%len(urls)],
// and reports requests/s and latencies; any answer but 200 fails b.
func benchEdges(b *testing.B, urls []string) {
	const clients = 16
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	get := func(url string) (time.Duration, error) {
		req, _ := http.NewRequest("GET", url+"/api/inventory/keyboard-001", nil)
		req.Header.Set("Authorization", "Bearer demo-read-token")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
		}
		return time.Since(start), nil
	}
	for _, u := range urls { // warm connections
		for range clients {
			if _, err := get(u); err != nil {
				b.Fatal(err)
			}
		}
	}
	var lat latencies
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				d, err := get(urls[i%len(urls)])
				if err != nil {
					if failed.Add(1) <= 3 {
						b.Error(err)
					}
					continue
				}
				lat.add(d)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	lat.report(b, elapsed, "req")
}
