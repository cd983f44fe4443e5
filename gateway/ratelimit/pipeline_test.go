package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/portico-gateway/portico/internal/redistest"
)

func newPipeline(t testing.TB, bans BanPolicy) (*Pipeline, *Redis) {
	t.Helper()
	url, c, prefix := redistest.Shared(t)
	store, err := NewRedis(c, prefix, bans)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewRedis((&redistest.Server{URL: url}).Client(t), prefix, bans)
	p, err := NewPipeline(store, c, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, other
}

// TestPipelineExact: decisions sent together from many goroutines, and
// from a second edge without a pipeline, still share one exact quota.
func TestPipelineExact(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	p, other := newPipeline(t, BanPolicy{})
	req := &Request{Quotas: []Quota{
		{Key: "caller:alice", Limit: Limit{Rate: 100, Period: time.Hour}},
		{Key: "global", Limit: Limit{Rate: 1000, Period: time.Hour}},
	}}
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s Store = p
			if g%4 == 0 {
				s = other
			}
			for range 10 {
				d, err := s.Allow(context.Background(), req)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := admitted.Load(); got != 100 {
		t.Errorf("200 decisions on a quota of 100: %d admitted, want exactly 100", got)
	}
	d, _ := other.Allow(context.Background(), &Request{Quotas: req.Quotas[1:]})
	if d.Results[0].Remaining != 1000-100-1 {
		t.Errorf("global remaining %d, want %d: refusals by the caller quota consumed global", d.Results[0].Remaining, 1000-101)
	}
	p.Close()
}

// BenchmarkRedisPipeline is BenchmarkRedis through a Pipeline.
func BenchmarkRedisPipeline(b *testing.B) {
	p, _ := newPipeline(b, BanPolicy{Threshold: 1000, Window: time.Minute, Duration: time.Minute})
	huge := Limit{Rate: 1e9}
	b.SetParallelism(64)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{Quotas: []Quota{{Key: "caller:" + redistest.Random(), Limit: huge},
			{Key: "group:reads", Limit: huge}, {Key: "global", Limit: huge}}, Caller: "c"}
		ctx := context.Background()
		for pb.Next() {
			if _, err := p.Allow(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}
