package cli

import (
	"io"
	"net/http"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkEdgeObservability measures the edge's throughput and p99
// through the in-process stack (edge and inventory over loopback HTTP and
// gRPC), GET /api/inventory/{sku} from 8 concurrent clients, with
// observability off (no tracing, no service metrics, no log lines) and on
// (tracing sampled at 10% into an exporter, metrics, JSON logs sampled at
// 10% plus every error and slow request). Compare req/s and p99-ms, and
// cpu-µs/req (the stack's CPU per request, which load from other processes
// on the machine does not distort):
//
//	go test -run '^$' -bench BenchmarkEdgeObservability -benchtime 4000x -count 3 ./cmd/portico/internal/cli/
func BenchmarkEdgeObservability(b *testing.B) {
	tenth := 0.1
	for _, bc := range []struct {
		name string
		so   stackOptions
	}{
		{"off", stackOptions{bench: true, off: true}},
		{"on", stackOptions{bench: true, ratio: &tenth, logRate: &tenth}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := startStack(b, bc.so)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			get := func() time.Duration {
				req, _ := http.NewRequest("GET", s.url+"/api/inventory/keyboard-001", nil)
				req.Header.Set("Authorization", "Bearer demo-read-token")
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return 0
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("status %d", resp.StatusCode)
				}
				return time.Since(start)
			}
			for range 200 { // warm connections and caches
				get()
			}
			const clients = 8
			work := make(chan struct{})
			lat := make([][]time.Duration, clients)
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu0 := cpuTime()
			start := time.Now()
			for c := range clients {
				wg.Go(func() {
					for range work {
						lat[c] = append(lat[c], get())
					}
				})
			}
			for range b.N {
				work <- struct{}{}
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			cpu := cpuTime() - cpu0
			b.StopTimer()
			all := slices.Concat(lat...)
			slices.Sort(all)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
			// CPU per request, the whole stack's: the cost figure that a
			// machine shared with other work does not distort.
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
		})
	}
}

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
