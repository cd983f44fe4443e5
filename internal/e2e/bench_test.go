package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"

	inventoryv1 "github.com/portico-gateway/portico/gen/portico/inventory/v1"
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
		Item:       &inventoryv1.Item{Sku: "keyboard-001", Available: 1 << 40},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"available"}},
	})
	if err != nil {
		b.Fatalf("UpdateItem: %v", err)
	}
	var lat latencies
	var n, failed atomic.Int64
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
}
