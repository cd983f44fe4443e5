package ratelimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"
)

func newLocal(t testing.TB, opts ...LocalOption) *Local {
	t.Helper()
	l, err := NewLocal(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func allow(t testing.TB, s Store, req *Request) Decision {
	t.Helper()
	d, err := s.Allow(context.Background(), req)
	if err != nil {
		t.Fatalf("Allow(%+v) = %v", req, err)
	}
	return d
}

// TestLocalGCRA: 12 a second with a burst of 12 admits 12 at once, refuses
// the 13th with the time the next one takes to come back, and admits one
// more every 1/12 s.
func TestLocalGCRA(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLocal(t)
		req := &Request{Quotas: []Quota{{Key: "alice", Limit: Limit{Rate: 12}}}}
		for i := range 12 {
			d := allow(t, l, req)
			if !d.Allowed || d.Results[0].Remaining != 11-i {
				t.Fatalf("request %d: %+v, want allowed with %d remaining", i+1, d, 11-i)
			}
		}
		d := allow(t, l, req)
		if d.Allowed || d.Denied != 0 || d.RetryAfter != time.Second/12 || d.Results[0].Remaining != 0 {
			t.Fatalf("13th: %+v, want refused by quota 0, retry after %s", d, time.Second/12)
		}
		if want := 12 * (time.Second / 12); d.Results[0].ResetAfter != want {
			t.Errorf("13th ResetAfter = %s, want %s", d.Results[0].ResetAfter, want)
		}
		time.Sleep(time.Second / 12)
		if d := allow(t, l, req); !d.Allowed || d.Results[0].Remaining != 0 {
			t.Fatalf("after 1/12 s: %+v, want allowed with 0 remaining", d)
		}
		if d := allow(t, l, req); d.Allowed {
			t.Fatalf("right after: %+v, want refused", d)
		}
		time.Sleep(time.Second)
		if d := allow(t, l, req); !d.Allowed || d.Results[0].Remaining != 11 {
			t.Fatalf("after 1s: %+v, want a full bucket again", d)
		}
	})
}

func TestLocalBurst(t *testing.T) {
	tests := []struct {
		name  string
		limit Limit
		want  int // admitted at once
	}{
		{"burst defaults to rate", Limit{Rate: 5}, 5},
		{"explicit burst", Limit{Rate: 10, Burst: 3}, 3},
		{"burst above rate", Limit{Rate: 1, Period: time.Minute, Burst: 7}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLocal(t)
				req := &Request{Quotas: []Quota{{Key: "k", Limit: tt.limit}}}
				n := 0
				for allow(t, l, req).Allowed {
					n++
				}
				if n != tt.want {
					t.Errorf("%+v admitted %d at once, want %d", tt.limit, n, tt.want)
				}
			})
		})
	}
}

// TestLocalAllOrNothing: a request refused by one quota consumes nothing
// of the others.
func TestLocalAllOrNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLocal(t)
		caller := Quota{Key: "caller:alice", Limit: Limit{Rate: 10, Period: time.Minute}}
		group := Quota{Key: "group:orders", Limit: Limit{Rate: 2, Period: time.Minute}}
		both := &Request{Quotas: []Quota{caller, group}}
		for range 2 {
			if d := allow(t, l, both); !d.Allowed {
				t.Fatalf("%+v, want allowed", d)
			}
		}
		for range 5 {
			d := allow(t, l, both)
			if d.Allowed || d.Denied != 1 {
				t.Fatalf("%+v, want refused by the group", d)
			}
			if d.Results[0].Remaining != 8 {
				t.Fatalf("caller remaining = %d after refusals, want 8 (refusals consume nothing)", d.Results[0].Remaining)
			}
		}
		d := allow(t, l, &Request{Quotas: []Quota{caller}})
		if !d.Allowed || d.Results[0].Remaining != 7 {
			t.Fatalf("caller alone: %+v, want allowed with 7 remaining", d)
		}
	})
}

func TestLocalBans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLocal(t, WithBans(BanPolicy{Threshold: 3, Window: time.Minute, Duration: 10 * time.Minute}))
		req := &Request{Quotas: []Quota{{Key: "q", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "mallory"}
		if d := allow(t, l, req); !d.Allowed {
			t.Fatalf("first: %+v", d)
		}
		for i := range 3 {
			if d := allow(t, l, req); d.Allowed || d.Banned {
				t.Fatalf("refusal %d: %+v, want refused, not banned", i+1, d)
			}
		}
		d := allow(t, l, req)
		if !d.Banned || d.RetryAfter != 10*time.Minute {
			t.Fatalf("4th refusal: %+v, want banned for 10m", d)
		}
		other := &Request{Quotas: []Quota{{Key: "q2", Limit: Limit{Rate: 1}}}, Caller: "mallory"}
		if d := allow(t, l, other); !d.Banned || d.Allowed {
			t.Fatalf("banned caller on another quota: %+v, want banned", d)
		}
		if d := allow(t, l, &Request{Quotas: other.Quotas, Caller: "alice"}); !d.Allowed {
			t.Fatalf("another caller: %+v, want allowed", d)
		}
		time.Sleep(10 * time.Minute)
		if d := allow(t, l, other); !d.Allowed {
			t.Fatalf("after the ban: %+v, want allowed", d)
		}
	})
}

// TestLocalBoundedMemory: a flood of distinct keys keeps the key count at
// the bound and the heap flat, and a limited caller keeps its state.
func TestLocalBoundedMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxKeys = 1024
		l := newLocal(t, WithMaxKeys(maxKeys), WithBans(BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Minute}))
		hot := &Request{Quotas: []Quota{{Key: "hot", Limit: Limit{Rate: 1, Period: time.Hour}}}}
		allow(t, l, hot)
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n := 50 * maxKeys // keys, each decided twice
		if testing.Short() {
			n = 10 * maxKeys
		}
		for i := range n {
			// Each flood key is refused once (so it is counted towards a
			// ban too) but its bucket is nearly full again at once.
			k := "flood:" + strconv.Itoa(i)
			allow(t, l, &Request{Quotas: []Quota{{Key: k, Limit: Limit{Rate: 1000, Burst: 1}}}, Caller: k})
			allow(t, l, &Request{Quotas: []Quota{{Key: k, Limit: Limit{Rate: 1000, Burst: 1}}}, Caller: k})
			if i%1000 == 0 {
				allow(t, l, hot)
			}
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		if got := l.Len(); got > 3*maxKeys {
			t.Errorf("Len() = %d after %d distinct keys, want at most %d", got, n, 3*maxKeys)
		}
		if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4<<20 {
			t.Errorf("heap grew by %d bytes over %d distinct keys, want bounded (< 4 MiB)", grew, n)
		}
		if d := allow(t, l, hot); d.Allowed {
			t.Errorf("the limited caller's state was evicted: %+v", d)
		}
	})
}

func TestLimitValidate(t *testing.T) {
	tests := []struct {
		l  Limit
		ok bool
	}{
		{Limit{Rate: 1}, true},
		{Limit{Rate: 12, Period: time.Second, Burst: 12}, true},
		{Limit{}, false},
		{Limit{Rate: -1}, false},
		{Limit{Rate: 1, Period: -time.Second}, false},
		{Limit{Rate: 1, Burst: -1}, false},
		{Limit{Rate: 2, Period: time.Nanosecond}, false},
		{Limit{Rate: 1, Period: 24 * time.Hour, Burst: 1 << 20}, false}, // T*Burst overflows
		{Limit{Rate: 1, Period: 24 * time.Hour, Burst: 1 << 14}, true},
	}
	for _, tt := range tests {
		if err := tt.l.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", tt.l, err, tt.ok)
		}
	}
}

func TestTooManyQuotas(t *testing.T) {
	l := newLocal(t)
	qs := make([]Quota, MaxQuotas+1)
	for i := range qs {
		qs[i] = Quota{Key: fmt.Sprint(i), Limit: Limit{Rate: 1}}
	}
	if _, err := l.Allow(context.Background(), &Request{Quotas: qs}); err == nil {
		t.Error("Allow with too many quotas = nil error")
	}
}

// BenchmarkLocal is one decision on known keys: one quota; the three
// layers (caller, route group, global) with bans on, as a bare Request;
// and the edge's hot path (edge), the same three layers as the edge builds
// them: the route group's and the global quota prepared once, the
// caller's from its plan's prepared quota on the caller's key (hashed per
// decision), and the time the request arrived passed in (the edge has read
// the clock already).
func BenchmarkLocal(b *testing.B) {
	huge := Limit{Rate: 1e9}
	three := []Quota{{Key: "caller:alice", Limit: huge}, {Key: "group:orders", Limit: huge}, {Key: "global", Limit: huge}}
	for _, bc := range []struct {
		name string
		req  *Request
	}{
		{"one-quota", &Request{Quotas: three[:1]}},
		{"three-quotas-bans", &Request{Quotas: three, Caller: "alice"}},
		{"edge", &Request{Quotas: []Quota{Quota{Limit: huge}.Prepare().For("caller:alice"), three[1].Prepare(), three[2].Prepare()}, Caller: "alice", Now: time.Now()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := newLocal(b, WithBans(BanPolicy{Threshold: 1000, Window: time.Minute, Duration: time.Minute}))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if d, _ := l.Allow(ctx, bc.req); !d.Allowed {
					b.Fatal("refused")
				}
			}
		})
	}
}

// BenchmarkLocalParallel is BenchmarkLocal from every P, on distinct callers.
func BenchmarkLocalParallel(b *testing.B) {
	l := newLocal(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{Quotas: []Quota{
			{Key: "caller:" + strconv.Itoa(int(time.Now().UnixNano()%1000)), Limit: Limit{Rate: 1e9}},
			{Key: "global", Limit: Limit{Rate: 1e9}},
		}}
		ctx := context.Background()
		for pb.Next() {
			l.Allow(ctx, req)
		}
	})
}

// TestBucketPer: the division by multiplication equals the division, at
// the edges of each quotient and for intervals from 1 ns to an hour.
func TestBucketPer(t *testing.T) {
	for _, lim := range []Limit{{Rate: 1e9}, {Rate: 3}, {Rate: 7, Period: time.Hour, Burst: 1000}, {Rate: 12}, {Rate: 1, Period: 24 * time.Hour, Burst: 1 << 14}} {
		b := bucketOf(lim.withDefaults(), true)
		for _, x := range []int64{0, 1, b.interval - 1, b.interval, b.interval + 1, 2*b.interval - 1, b.tau - 1, b.tau, b.tau / 3, b.tau/2 + 1} {
			if x < 0 {
				continue
			}
			if got, want := b.per(x), x/b.interval; got != want {
				t.Errorf("%+v: per(%d) = %d, want %d", lim, x, got, want)
			}
		}
		for range 1000 {
			x := rand.Int64N(b.tau + 1)
			if got, want := b.per(x), x/b.interval; got != want {
				t.Fatalf("%+v: per(%d) = %d, want %d", lim, x, got, want)
			}
		}
		if got := b.per(-b.interval); got != 0 {
			t.Errorf("%+v: per(-interval) = %d, want 0", lim, got)
		}
	}
}

// TestLocalRequestNow: a Request's Now is the decision's time, whatever
// the store's clock says, also before the store was built; a fresh key is
// a full bucket at any time.
func TestLocalRequestNow(t *testing.T) {
	start := time.Now()
	l := newLocal(t, WithClock(func() time.Time { return start }),
		WithBans(BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Hour}))
	q := []Quota{{Key: "caller:alice", Limit: Limit{Rate: 2, Period: time.Minute}}}
	before := &Request{Quotas: q, Caller: "alice", Now: start.Add(-time.Hour)}
	for i := range 2 {
		if d := allow(t, l, before); !d.Allowed || d.Results[0].Remaining != 1-i {
			t.Fatalf("request %d an hour before the store: %+v, want allowed with %d left", i+1, d, 1-i)
		}
	}
	if d := allow(t, l, before); d.Allowed || d.RetryAfter != 30*time.Second {
		t.Fatalf("3rd: %+v, want refused for 30s", d)
	}
	later := &Request{Quotas: q, Caller: "alice", Now: start.Add(-time.Hour + time.Minute)}
	if d := allow(t, l, later); !d.Allowed || d.Results[0].Remaining != 1 {
		t.Fatalf("a minute later (by Now, the store's clock stood still): %+v, want allowed with 1 left", d)
	}
}

// TestLocalBanCheckSkipped: while no ban is recorded the check costs
// nothing; an ended ban is removed when met, which makes it free again.
func TestLocalBanCheckSkipped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLocal(t, WithBans(BanPolicy{Threshold: 1, Window: time.Minute, Duration: time.Minute}))
		req := &Request{Quotas: []Quota{{Key: "q", Limit: Limit{Rate: 1, Period: time.Hour}}}, Caller: "mallory"}
		allow(t, l, req)
		allow(t, l, req) // refusal 1
		if d := allow(t, l, req); !d.Banned || l.live.Load() != 1 {
			t.Fatalf("%+v, %d bans recorded; want banned, 1", d, l.live.Load())
		}
		time.Sleep(time.Minute)
		d := allow(t, l, &Request{Quotas: []Quota{{Key: "q2", Limit: Limit{Rate: 1}}}, Caller: "mallory"})
		if !d.Allowed || l.live.Load() != 0 {
			t.Fatalf("after the ban: %+v, %d bans recorded; want allowed, 0", d, l.live.Load())
		}
	})
}

// TestShardCollision: two keys of one 64-bit hash keep two buckets, and
// evicting one keeps the other.
func TestShardCollision(t *testing.T) {
	s := &shard{tats: map[uint64]*entry{}}
	s.insert(42, "a", 100, 10, 0)
	s.insert(42, "b", 200, 10, 0)
	s.insert(42, "a", 150, 10, 0)
	if a, b := s.find(42, "a"), s.find(42, "b"); a == nil || b == nil || a.tat != 150 || b.tat != 200 || s.keys != 2 {
		t.Fatalf("find a, b = %+v, %+v with %d keys; want tats 150, 200 and 2 keys", a, b, s.keys)
	}
	s.evict(0) // both are ahead of now: the head of the chain goes
	if s.keys != 1 || (s.find(42, "a") == nil) == (s.find(42, "b") == nil) {
		t.Fatalf("after one eviction: %d keys, a %v, b %v; want exactly one left", s.keys, s.find(42, "a"), s.find(42, "b"))
	}
}
