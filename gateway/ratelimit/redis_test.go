package ratelimit

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portico-gateway/portico/internal/redistest"
)

func newRedis(t testing.TB, bans BanPolicy) (*Redis, *Redis) {
	t.Helper()
	url, c1, prefix := redistest.Shared(t)
	_ = url
	c2 := (&redistest.Server{URL: url}).Client(t)
	a, err := NewRedis(c1, prefix, bans)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRedis(c2, prefix, bans)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestRedisOneQuotaForTwoEdges: two stores on two connections (two edges)
// alternating enforce one quota, not two.
func TestRedisOneQuotaForTwoEdges(t *testing.T) {
	a, b := newRedis(t, BanPolicy{})
	req := &Request{Quotas: []Quota{{Key: "caller:alice", Limit: Limit{Rate: 5, Period: time.Minute}}}}
	admitted := 0
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = b
		}
		d := allow(t, s, req)
		if d.Allowed {
			admitted++
			if d.Results[0].Remaining != 5-admitted {
				t.Errorf("request %d: remaining %d, want %d", i+1, d.Results[0].Remaining, 5-admitted)
			}
		} else if d.Denied != 0 || d.RetryAfter <= 0 || d.RetryAfter > 12*time.Second {
			t.Errorf("request %d: %+v, want refused by quota 0 with a retry within 12s", i+1, d)
		}
	}
	if admitted != 5 {
		t.Errorf("two edges admitted %d, want 5 (one quota)", admitted)
	}
}

func TestRedisAllOrNothing(t *testing.T) {
	a, _ := newRedis(t, BanPolicy{})
	caller := Quota{Key: "caller:alice", Limit: Limit{Rate: 10, Period: time.Minute}}
	group := Quota{Key: "group:orders", Limit: Limit{Rate: 2, Period: time.Minute}}
	both := &Request{Quotas: []Quota{caller, group}}
	for range 2 {
		if d := allow(t, a, both); !d.Allowed {
			t.Fatalf("%+v, want allowed", d)
		}
	}
	for range 3 {
		d := allow(t, a, both)
		if d.Allowed || d.Denied != 1 || d.Results[0].Remaining != 8 {
			t.Fatalf("%+v, want refused by the group with the caller's 8 left untouched", d)
		}
	}
	if d := allow(t, a, &Request{Quotas: []Quota{caller}}); !d.Allowed || d.Results[0].Remaining != 7 {
		t.Fatalf("caller alone: %+v, want allowed with 7 remaining", d)
	}
}

func TestRedisNoQuotas(t *testing.T) {
	a, _ := newRedis(t, BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Minute})
	if d := allow(t, a, &Request{Caller: "alice"}); !d.Allowed {
		t.Errorf("no quotas: %+v, want allowed", d)
	}
}

func TestRedisBans(t *testing.T) {
	a, b := newRedis(t, BanPolicy{Threshold: 2, Window: time.Minute, Duration: time.Hour})
	req := &Request{Quotas: []Quota{{Key: "q", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "mallory"}
	allow(t, a, req)
	for i := range 2 {
		if d := allow(t, b, req); d.Allowed || d.Banned {
			t.Fatalf("refusal %d: %+v, want refused, not banned", i+1, d)
		}
	}
	if d := allow(t, a, req); !d.Banned || d.RetryAfter < 59*time.Minute {
		t.Fatalf("3rd refusal: %+v, want banned for an hour", d)
	}
	other := &Request{Quotas: []Quota{{Key: "fresh", Limit: Limit{Rate: 100}}}, Caller: "mallory"}
	if d := allow(t, b, other); !d.Banned {
		t.Fatalf("banned caller through the other edge: %+v, want banned", d)
	}
}

// TestFailover: Redis killed mid-test. Decisions move to the local store
// (each edge alone), known bans stay enforced, the breaker spares Redis
// calls, and the other policies admit everything or refuse.
func TestFailover(t *testing.T) {
	srv := redistest.Private(t)
	shared, err := NewRedis(srv.Client(t), "rl:", BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	local := newLocal(t, WithBans(BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Hour}))
	changes := make(chan bool, 4)
	f, err := NewFailover(shared, local, FailoverSettings{Timeout: 200 * time.Millisecond, CoolDown: time.Hour,
		OnChange: func(d bool) { changes <- d }})
	if err != nil {
		t.Fatal(err)
	}
	quota := Quota{Key: "caller:alice", Limit: Limit{Rate: 3, Period: time.Hour}}
	alice := &Request{Quotas: []Quota{quota}, Caller: "alice"}
	mallory := &Request{Quotas: []Quota{{Key: "caller:mallory", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "mallory"}
	if d := allow(t, f, alice); !d.Allowed || d.Results[0].Remaining != 2 {
		t.Fatalf("through Redis: %+v", d)
	}
	for range 3 {
		allow(t, f, mallory)
	}
	if d := allow(t, f, mallory); !d.Banned {
		t.Fatalf("mallory: %+v, want banned through Redis", d)
	}
	srv.Kill()
	for range DefaultFailures {
		allow(t, f, alice) // these fail in Redis, then decide locally
	}
	select {
	case d := <-changes:
		if !d || !f.Degraded() {
			t.Fatalf("OnChange(%v), Degraded() = %v; want true", d, f.Degraded())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Redis killed: the failover never reported degraded")
	}
	// The local store admitted the two above; its quota of 3 has one left.
	if d := allow(t, f, alice); !d.Allowed {
		t.Errorf("local fallback: %+v, want allowed", d)
	}
	if d := allow(t, f, alice); d.Allowed || d.Denied != 0 {
		t.Errorf("local fallback over quota: %+v, want refused", d)
	}
	if d := allow(t, f, mallory); !d.Banned {
		t.Errorf("known ban during the outage: %+v, want banned", d)
	}

	for _, tt := range []struct {
		outage  Outage
		allowed bool
		err     error
	}{{OutageOpen, true, nil}, {OutageClosed, false, ErrUnavailable}} {
		f, err := NewFailover(shared, newLocal(t), FailoverSettings{Timeout: 100 * time.Millisecond, Outage: tt.outage})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			d, err := f.Allow(context.Background(), alice)
			if d.Allowed != tt.allowed || !errors.Is(err, tt.err) {
				t.Errorf("outage %s: %+v, %v; want allowed %v, %v", tt.outage, d, err, tt.allowed, tt.err)
			}
		}
	}
}

// BenchmarkRedis is decisions per second from one edge against the shared
// Redis: three quotas and bans per decision, one round trip each, from
// many goroutines (the edge's concurrent requests) over the client's pool.
func BenchmarkRedis(b *testing.B) {
	a, _ := newRedis(b, BanPolicy{Threshold: 1000, Window: time.Minute, Duration: time.Minute})
	benchDecisions(b, a, 32)
}

// benchDecisions runs b.N decisions of three huge quotas through s from
// parallelism goroutines per CPU, each its own caller, and reports them
// per second.
func benchDecisions(b *testing.B, s Store, parallelism int) {
	huge := Limit{Rate: 1e9}
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{Quotas: []Quota{{Key: "caller:" + redistest.Random(), Limit: huge},
			{Key: "group:reads", Limit: huge}, {Key: "global", Limit: huge}}, Caller: "c"}
		ctx := context.Background()
		for pb.Next() {
			if _, err := s.Allow(ctx, req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
}

// flaky is a Redis store that fails every decision while down is set: an
// outage, with the server itself reachable for the test to flush.
type flaky struct {
	*Redis
	down atomic.Bool
}

func (f *flaky) Allow(ctx context.Context, req *Request) (Decision, error) {
	if f.down.Load() {
		return Decision{Denied: -1}, errors.New("flaky: down")
	}
	return f.Redis.Allow(ctx, req)
}

// TestFailoverReassertsBans: a ban the edge held through an outage is
// written back when Redis comes back empty, before the first decision
// made there again: the banned caller stays banned, on this edge and on
// another that never saw the ban.
func TestFailoverReassertsBans(t *testing.T) {
	srv := redistest.Private(t)
	c := srv.Client(t)
	bans := BanPolicy{Threshold: 1, Window: time.Minute, Duration: 10 * time.Minute}
	store, err := NewRedis(c, "rl:", bans)
	if err != nil {
		t.Fatal(err)
	}
	shared := &flaky{Redis: store}
	changes := make(chan bool, 4)
	f, err := NewFailover(shared, newLocal(t, WithBans(bans)), FailoverSettings{Timeout: time.Second, Failures: 1,
		CoolDown: time.Millisecond, Outage: OutageOpen, OnChange: func(d bool) { changes <- d }})
	if err != nil {
		t.Fatal(err)
	}
	mallory := &Request{Quotas: []Quota{{Key: "caller:mallory", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "mallory"}
	for range 3 {
		allow(t, f, mallory)
	}
	if d := allow(t, f, mallory); !d.Banned {
		t.Fatalf("mallory: %+v, want banned through Redis", d)
	}
	shared.down.Store(true)
	allow(t, f, mallory)
	if d := <-changes; !d {
		t.Fatal("the outage was not reported")
	}
	if err := c.FlushAll(context.Background()).Err(); err != nil { // Redis comes back empty
		t.Fatal(err)
	}
	shared.down.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	var d Decision
	for f.Degraded() && time.Now().Before(deadline) { // the breaker's trial call, once its cool-down of 1ms is over
		d = allow(t, f, mallory)
	}
	if f.Degraded() || !d.Banned {
		t.Fatalf("after the outage: degraded %v, first decision %+v; want recovered and banned", f.Degraded(), d)
	}
	other, _ := NewRedis(c, "rl:", bans)
	if d, err := other.Allow(context.Background(), mallory); err != nil || !d.Banned || d.RetryAfter < 9*time.Minute {
		t.Errorf("another edge after the outage: %+v, %v; want banned for about 10m", d, err)
	}
}
