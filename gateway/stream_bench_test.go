package gateway

import (
	"bufio"
	"slices"
	"testing"
	"time"
)

// BenchmarkStreamDisconnect measures how long a client's hang-up takes to
// cancel the upstream stream: each iteration opens an SSE watch, reads its
// first event, hangs up and waits for the stub order service's stream
// context to end. It reports the p50 and p99 of those times.
//
//	go test -run '^$' -bench StreamDisconnect -benchtime 200x ./gateway/
func BenchmarkStreamDisconnect(b *testing.B) {
	h := newHarness(b, setup{})
	started, stopped := make(chan struct{}, 1), make(chan time.Time, 1)
	h.order.watchOrder = blockAfter(started, stopped)
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		resp, cancel := h.openStream("/api/orders/ord-1:watch", aliceToken, "text/event-stream")
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		<-started
		hungUp := time.Now()
		cancel()
		lat = append(lat, (<-stopped).Sub(hungUp))
		resp.Body.Close()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
