package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
	"github.com/portico-gateway/portico/internal/procstat"
	"github.com/portico-gateway/portico/internal/testproc"
)

// latencies records call durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

// report adds ops/s, p50 and p99 (milliseconds) to b's output.
func (l *latencies) report(b *testing.B, elapsed time.Duration, unit string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	pct := func(p float64) float64 {
		return float64(l.d[int(float64(len(l.d)-1)*p)].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(l.d))/elapsed.Seconds(), unit+"/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkCreateOrder measures CreateOrder through the three real service
// processes (order -> inventory, payment over loopback gRPC, SQLite WAL).
//
//	go test -run '^$' -bench CreateOrder -benchtime 2000x ./internal/e2e
func BenchmarkCreateOrder(b *testing.B) {
	c := startCluster(b)
	admin := as(b, "admin", "admin", "")
	_, err := c.Inventory.UpdateItem(admin, &inventoryv1.UpdateItemRequest{
		Item:       &inventoryv1.Item{Sku: "keyboard-001", Available: 1_000_000_000},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"available"}},
	})
	if err != nil {
		b.Fatalf("UpdateItem: %v", err)
	}
	var lat latencies
	var n, failed atomic.Int64
	cpu := startCPU(b, c.inv, c.pay, c.ord)
	b.SetParallelism(8) // 8 x GOMAXPROCS concurrent clients
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			ctx, cancel := context.WithTimeout(as(b, "alice", "customer", fmt.Sprintf("bench-%d", i)), 10*time.Second)
			t0 := time.Now()
			_, err := c.Order.CreateOrder(ctx, orderReq("keyboard-001", 1, "pm_card_ok"))
			lat.add(time.Since(t0))
			cancel()
			if err != nil {
				failed.Add(1)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Errorf("%d of %d orders failed", f, n.Load())
	}
	lat.report(b, elapsed, "orders")
	cpu.report(b, n.Load(), "order")
}

// cpuMeter measures the CPU time a benchmark's service processes use: a
// figure the machine's other load does not change, unlike orders/s.
type cpuMeter struct {
	procs []*testproc.Proc
	start time.Duration
}

func startCPU(b *testing.B, procs ...*testproc.Proc) *cpuMeter {
	m := &cpuMeter{procs: procs}
	m.start = m.total(b)
	return m
}

func (m *cpuMeter) total(b *testing.B) time.Duration {
	var sum time.Duration
	for _, p := range m.procs {
		d, err := procstat.CPU(p.Pid())
		if err != nil {
			b.Fatalf("CPU of pid %d: %v", p.Pid(), err)
		}
		sum += d
	}
	return sum
}

// report adds the processes' CPU microseconds per op (unit names the op).
func (m *cpuMeter) report(b *testing.B, ops int64, unit string) {
	if ops > 0 {
		b.ReportMetric(float64((m.total(b)-m.start).Microseconds())/float64(ops), "cpu-µs/"+unit)
	}
}

// BenchmarkGetItem compares GET /api/inventory/{sku} through the edge with
// a direct gRPC GetItem against the same inventory process, both with 16
// concurrent clients; the difference is the edge's cost (HTTP parsing,
// auth, transcoding, the client chain, one more loopback hop).
//
//	go test -run '^$' -bench GetItem -benchtime 20000x ./internal/e2e
func BenchmarkGetItem(b *testing.B) {
	c := startCluster(b)
	e := startEdge(b, c, "", nil)
	b.Run("direct", func(b *testing.B) {
		var lat latencies
		b.SetParallelism(8)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				t0 := time.Now()
				_, err := c.Inventory.GetItem(ctx, &inventoryv1.GetItemRequest{Sku: "keyboard-001"})
				lat.add(time.Since(t0))
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		lat.report(b, time.Since(start), "req")
	})
	b.Run("edge", func(b *testing.B) {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 10 * time.Second}
		url := e.url + "/api/inventory/keyboard-001"
		var lat latencies
		b.SetParallelism(8)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req, _ := http.NewRequest("GET", url, nil)
				req.Header.Set("Authorization", "Bearer demo-read-token")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat.add(time.Since(t0))
				if resp.StatusCode != 200 {
					b.Errorf("status %d", resp.StatusCode)
					return
				}
			}
		})
		lat.report(b, time.Since(start), "req")
	})
}

// BenchmarkCreateOrderPostgres is BenchmarkCreateOrder on PostgreSQL
// (DATABASE_URL) with one inventory and one payment process and 1 or 2
// order replicas, the clients spread over the order replicas.
//
//	DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run '^$' -bench CreateOrderPostgres -benchtime 2000x ./internal/e2e
func BenchmarkCreateOrderPostgres(b *testing.B) {
	for _, replicas := range []int{1, 2} {
		b.Run(fmt.Sprintf("order-replicas=%d", replicas), func(b *testing.B) {
			c := startPGCluster(b, 1, 1, replicas)
			c.setStock(b, "keyboard-001", 1_000_000_000)
			var lat latencies
			var n, failed atomic.Int64
			cpu := startCPU(b, c.procs()...)
			db := c.startBackendCPU(b)
			b.SetParallelism(8) // 8 x GOMAXPROCS concurrent clients
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					ctx, cancel := context.WithTimeout(as(b, "alice", "customer", fmt.Sprintf("bench-%d", i)), 10*time.Second)
					t0 := time.Now()
					_, err := c.Orders[int(i)%replicas].CreateOrder(ctx, orderReq("keyboard-001", 1, "pm_card_ok"))
					lat.add(time.Since(t0))
					cancel()
					if err != nil {
						failed.Add(1)
					}
				}
			})
			elapsed := time.Since(start)
			b.StopTimer()
			if f := failed.Load(); f > 0 {
				b.Errorf("%d of %d orders failed", f, n.Load())
			}
			lat.report(b, elapsed, "orders")
			cpu.report(b, n.Load(), "order")
			db.report(b, n.Load())
		})
	}
}

// procs returns every service process of the cluster.
func (c *pgCluster) procs() []*testproc.Proc {
	var out []*testproc.Proc
	for _, r := range []*replicaSet{c.inv, c.pay, c.ord} {
		out = append(out, r.procs...)
	}
	return out
}

// backendCPU measures the CPU time of the PostgreSQL server processes
// serving a pgCluster's database (same host only): with cpuMeter's figure,
// the whole cost of an order on PostgreSQL.
type backendCPU struct {
	c     *pgCluster
	start map[int]time.Duration
}

func (c *pgCluster) startBackendCPU(b *testing.B) *backendCPU {
	return &backendCPU{c: c, start: c.backendCPU(b)}
}

// backendCPU returns the CPU time of each server process connected to the
// cluster's database, by pid.
func (c *pgCluster) backendCPU(b *testing.B) map[int]time.Duration {
	rows, err := c.pool.Query(context.Background(),
		`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[int]time.Duration{}
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			b.Fatal(err)
		}
		if d, err := procstat.CPU(pid); err == nil { // a backend that ended meanwhile is left out
			out[pid] = d
		}
	}
	return out
}

// report adds the backends' CPU microseconds per order; a backend that
// connected during the run counts from its start.
func (m *backendCPU) report(b *testing.B, orders int64) {
	var sum time.Duration
	for pid, d := range m.c.backendCPU(b) {
		sum += d - m.start[pid]
	}
	if orders > 0 {
		b.ReportMetric(float64(sum.Microseconds())/float64(orders), "db-cpu-µs/order")
	}
}
