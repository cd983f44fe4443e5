package ratelimit

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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
	benchDecisions(b, p, 64)
}

// TestPipelineBatch: one script run decides a batch in order, each
// request all or nothing as if alone: the same caller twice consumes
// twice, a refusal consumes nothing, and a call whose caller gave up
// before the batch left is dropped from it and consumes nothing.
func TestPipelineBatch(t *testing.T) {
	p, other := newPipeline(t, BanPolicy{})
	var sizes []int
	p.onSend = func(n int) { sizes = append(sizes, n) }
	group := Quota{Key: "group:orders", Limit: Limit{Rate: 3, Period: time.Hour}}
	alice := &Request{Quotas: []Quota{{Key: "caller:alice", Limit: Limit{Rate: 1, Period: time.Hour}}, group}}
	bob := &Request{Quotas: []Quota{{Key: "caller:bob", Limit: Limit{Rate: 5, Period: time.Hour}}, group}}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	calls := []*call{
		{ctx: context.Background(), req: alice}, // admitted: alice 0 left, group 2
		{ctx: gone, req: bob},                   // dropped
		{ctx: context.Background(), req: alice}, // refused by alice's quota: group untouched
		{ctx: context.Background(), req: bob},   // admitted: group 1
		{ctx: context.Background(), req: bob},   // admitted: group 0
		{ctx: context.Background(), req: bob},   // refused by the group: bob untouched (3 left)
	}
	for _, c := range calls {
		c.ready = make(chan struct{})
	}
	p.send(slices.Clone(calls))
	type want struct {
		allowed   bool
		denied    int
		remaining []int
	}
	for i, w := range []want{{true, -1, []int{0, 2}}, {}, {false, 0, []int{0, 2}}, {true, -1, []int{4, 1}}, {true, -1, []int{3, 0}}, {false, 1, []int{3, 0}}} {
		c := calls[i]
		<-c.ready
		if i == 1 {
			if !errors.Is(c.err, context.Canceled) {
				t.Errorf("call 1 (caller gone): err %v, want context.Canceled", c.err)
			}
			continue
		}
		if c.err != nil || c.d.Allowed != w.allowed || c.d.Denied != w.denied ||
			c.d.Results[0].Remaining != w.remaining[0] || c.d.Results[1].Remaining != w.remaining[1] {
			t.Errorf("call %d: %+v, %v; want allowed %v, denied %d, remaining %v", i, c.d, c.err, w.allowed, w.denied, w.remaining)
		}
	}
	if len(sizes) != 1 || sizes[0] != 5 {
		t.Errorf("script runs of %v decisions, want one of 5", sizes)
	}
	if d := allow(t, other, bob); d.Allowed || d.Denied != 1 || d.Results[0].Remaining != 3 {
		t.Errorf("bob after the batch, from another edge: %+v, want refused by the group with 3 of his own left", d)
	}
}

// TestPipelineCoalesces: decisions that queue while a batch is in flight
// leave together in the next one.
func TestPipelineCoalesces(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	url, c, prefix := redistest.Shared(t)
	_ = url
	store, _ := NewRedis(c, prefix, BanPolicy{})
	p, err := NewPipeline(store, c, 1, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first, release := make(chan struct{}), make(chan struct{})
	sizes := make(chan int, 16)
	var once sync.Once
	p.onSend = func(n int) {
		sizes <- n
		once.Do(func() { // hold the first batch until the others queued
			close(first)
			<-release
		})
	}
	req := &Request{Quotas: []Quota{{Key: "global", Limit: Limit{Rate: 100, Period: time.Hour}}}}
	const queued = 8
	errs := make(chan error, queued+1)
	go func() { _, err := p.Allow(context.Background(), req); errs <- err }()
	<-first // the lone worker holds a batch of one
	for range queued {
		go func() { _, err := p.Allow(context.Background(), req); errs <- err }()
	}
	if !waitUntil(func() bool { return len(p.calls) == queued }) {
		t.Fatalf("%d decisions queued, want %d", len(p.calls), queued)
	}
	close(release)
	for range queued + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if a, b := <-sizes, <-sizes; a != 1 || b != queued {
		t.Errorf("batches of %d then %d, want 1 then %d", a, b, queued)
	}
	if d := allow(t, store, req); d.Results[0].Remaining != 100-queued-2 {
		t.Errorf("remaining %d, want %d: every decision counted once", d.Results[0].Remaining, 100-queued-2)
	}
}

// waitUntil polls cond for up to five seconds.
func waitUntil(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestPipelineTimeout: a Redis that accepts but never answers fails each
// waiting decision within the batch timeout, or the caller's shorter
// deadline, and nothing is left running.
func TestPipelineTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() { // a server that reads and never answers
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, conn); conn.Close() }()
		}
	}()
	c := redis.NewClient(&redis.Options{Addr: lis.Addr().String(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	store, _ := NewRedis(c, "rl:", BanPolicy{})
	p, err := NewPipeline(store, c, 0, 0, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	req := &Request{Quotas: []Quota{{Key: "k", Limit: Limit{Rate: 1}}}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, timeout := context.Background(), 5*time.Second
			if i%2 == 1 { // a caller with a shorter deadline of its own
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				timeout = 2 * time.Second
			}
			start := time.Now()
			if _, err := p.Allow(ctx, req); err == nil {
				t.Errorf("decision %d from a Redis that never answers: nil error", i)
			}
			if took := time.Since(start); took > timeout {
				t.Errorf("decision %d failed after %s, want within %s", i, took, timeout)
			}
		}()
	}
	wg.Wait()
	p.Close()
	c.Close()
	lis.Close()
}

// TestPipelineRedisKilled: Redis killed, every decision fails (the
// Failover then decides by the outage policy); none hangs.
func TestPipelineRedisKilled(t *testing.T) {
	srv := redistest.Private(t)
	c := srv.Client(t)
	store, _ := NewRedis(c, "rl:", BanPolicy{})
	p, err := NewPipeline(store, c, 0, 0, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req := &Request{Quotas: []Quota{{Key: "k", Limit: Limit{Rate: 100}}}}
	if d := allow(t, p, req); !d.Allowed {
		t.Fatalf("before the kill: %+v", d)
	}
	srv.Kill()
	errs := make(chan error, 16)
	for range 16 {
		go func() { _, err := p.Allow(context.Background(), req); errs <- err }()
	}
	for range 16 {
		select {
		case err := <-errs:
			if err == nil {
				t.Error("decision after the kill: nil error")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a decision hung after Redis was killed")
		}
	}
}

// TestPipelineBatchBans: within one batch a caller is refused, banned by
// its refusals, and then refused as banned; another caller is not.
func TestPipelineBatchBans(t *testing.T) {
	p, other := newPipeline(t, BanPolicy{Threshold: 2, Window: time.Minute, Duration: time.Hour})
	mallory := &Request{Quotas: []Quota{{Key: "caller:mallory", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "mallory"}
	alice := &Request{Quotas: []Quota{{Key: "caller:alice", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "alice"}
	reqs := []*Request{mallory, mallory, alice, mallory, mallory, mallory}
	calls := make([]*call, len(reqs))
	for i, r := range reqs {
		calls[i] = &call{ctx: context.Background(), req: r, ready: make(chan struct{})}
	}
	p.send(slices.Clone(calls))
	got := ""
	for _, c := range calls {
		<-c.ready
		switch {
		case c.err != nil:
			t.Fatal(c.err)
		case c.d.Allowed:
			got += "ok "
		case c.d.Banned:
			got += "banned "
		default:
			got += "refused "
		}
	}
	if want := "ok refused ok refused banned banned "; got != want {
		t.Errorf("decisions %q, want %q", got, want)
	}
	if d := allow(t, other, mallory); !d.Banned || d.RetryAfter < 59*time.Minute {
		t.Errorf("mallory from another edge: %+v, want banned for about an hour", d)
	}
}

func TestNewPipelineRejects(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	store, _ := NewRedis(c, "rl:", BanPolicy{})
	for _, tt := range []struct {
		name           string
		workers, batch int
		timeout        time.Duration
	}{
		{"negative workers", -1, 0, 0},
		{"negative batch", 0, -1, 0},
		{"negative timeout", 0, 0, -time.Second},
		{"batch over the bound", 0, MaxPipelineBatch + 1, 0},
	} {
		if p, err := NewPipeline(store, store.client, tt.workers, tt.batch, tt.timeout); err == nil {
			p.Close()
			t.Errorf("%s: NewPipeline = nil error", tt.name)
		}
	}
}
