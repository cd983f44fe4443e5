package trend

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/portico-gateway/portico/gateway/edgemetrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestQuantile(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		bs   []bucket
		want float64
	}{
		{"empty", nil, 0},
		{"no observations", []bucket{{0.1, 0}, {inf, 0}}, 0},
		{"all in the first bucket", []bucket{{0.1, 100}, {inf, 100}}, 0.099},
		{"linear in the second", []bucket{{0.1, 0}, {0.2, 100}, {inf, 100}}, 0.199},
		{"in +Inf: the highest finite bound", []bucket{{0.1, 0}, {0.2, 0}, {inf, 10}}, 0.2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := quantile(0.99, tc.bs); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("quantile = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRing(t *testing.T) {
	r := newRing[int](3)
	for i := range 5 {
		r.Append(i)
	}
	if r.Len() != 3 || r.At(0) != 2 || r.At(2) != 4 {
		t.Fatalf("ring holds %d values from %d to %d, want 3 from 2 to 4", r.Len(), r.At(0), r.At(r.Len()-1))
	}
}

// edge records answers into the edge's real metrics.
type edge struct {
	reg *prometheus.Registry
	m   *edgemetrics.Metrics
}

func newEdge(t *testing.T) edge {
	reg := prometheus.NewRegistry()
	m, err := edgemetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return edge{reg, m}
}

func (e edge) answer(n int, upstream string, status int, d time.Duration) {
	for range n {
		e.m.Request(edgemetrics.Answer{Route: "/api/x", Method: "GET", Upstream: upstream, Status: status, Duration: d})
	}
}

func TestSampleAndView(t *testing.T) {
	e := newEdge(t)
	r := New(e.reg)
	t0 := time.Unix(1_700_000_000, 0)
	e.answer(1, "inventory", 200, time.Millisecond) // before the first sample: not in any point
	r.Sample(t0)
	e.answer(90, "inventory", 200, 20*time.Millisecond)
	e.answer(10, "inventory", 503, 20*time.Millisecond)
	e.answer(5, "", 404, time.Millisecond) // no upstream: not recorded
	e.m.RateLimited("caller")
	r.Sample(t0.Add(Step))

	h := r.View(t0.Add(Step), 15*time.Minute)
	if len(h.Upstreams) != 1 || h.Upstreams[0].Name != "inventory" {
		t.Fatalf("upstreams = %+v, want inventory alone", h.Upstreams)
	}
	u := h.Upstreams[0]
	if len(u.Recent) != 1 {
		t.Fatalf("recent = %+v, want one point", u.Recent)
	}
	p := u.Recent[0]
	if p.Rate != 10 || math.Abs(float64(p.ErrorRatio)-0.1) > 1e-6 || p.P99 <= 0.01 || p.P99 > 0.025 {
		t.Errorf("point = %+v, want rate 10/s, error ratio 0.1, p99 in (10ms, 25ms]", p)
	}
	if u.Summary.Requests != 100 || h.Limited["caller"] != 1 || h.Offset != "" || len(u.Previous) != 0 {
		t.Errorf("summary %+v, limited %v, offset %q, previous %v; want 100 requests, 1 caller refusal, no previous", u.Summary, h.Limited, h.Offset, u.Previous)
	}
}

func TestViewPreviousHourAndDay(t *testing.T) {
	e := newEdge(t)
	r := New(e.reg)
	t0 := time.Unix(1_700_000_000, 0)
	e.answer(1, "order", 200, time.Millisecond)
	for i := range 25*360 + 1 { // 25 hours of samples; traffic only in the first 10 minutes
		if i < 60 {
			e.answer(10, "order", 200, time.Millisecond)
		}
		r.Sample(t0.Add(time.Duration(i) * Step))
	}
	for _, tc := range []struct {
		at         time.Duration
		offset     string
		wantBusy   bool // the previous window falls in the first 10 minutes
		wantPoints int
	}{
		{30 * time.Minute, "", false, 0},
		{time.Hour + 10*time.Minute, "1h0m0s", true, 30},
		{24*time.Hour + 10*time.Minute, "24h0m0s", true, 30},
	} {
		h := r.View(t0.Add(tc.at), 5*time.Minute)
		u := h.Upstreams[0]
		if h.Offset != tc.offset || len(u.Previous) != tc.wantPoints || tc.wantBusy && u.Previous[0].Rate == 0 {
			t.Errorf("at %v: offset %q with %d previous points (%+v), want %q with %d", tc.at, h.Offset, len(u.Previous), u.Previous, tc.offset, tc.wantPoints)
		}
	}
	if n := r.points["order"].Len(); n != Keep {
		t.Errorf("kept %d points, want the bound %d", n, Keep)
	}
}

func TestMaxUpstreams(t *testing.T) {
	e := newEdge(t)
	r := New(e.reg)
	names := make([]string, MaxUpstreams+5)
	for i := range names {
		names[i] = "up" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		e.answer(1, names[i], 200, time.Millisecond)
	}
	t0 := time.Unix(1_700_000_000, 0)
	r.Sample(t0)
	r.Sample(t0.Add(Step))
	if n := len(r.View(t0.Add(Step), time.Minute).Upstreams); n != MaxUpstreams {
		t.Errorf("recorded %d upstreams, want the bound %d", n, MaxUpstreams)
	}
}

func TestRecordSamplesEveryStepUntilCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEdge(t)
		e.answer(1, "payment", 200, time.Millisecond)
		r := New(e.reg)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); r.Record(ctx) }()
		time.Sleep(3*Step + time.Second)
		synctest.Wait()
		if n := len(r.View(time.Now(), time.Hour).Upstreams[0].Recent); n != 3 {
			t.Errorf("%d points after 3 steps, want 3", n)
		}
		cancel()
		<-done
	})
}

func TestTripsAndLimitedAreLive(t *testing.T) {
	e := newEdge(t)
	trans := prometheus.NewCounterVec(prometheus.CounterOpts{Name: tripsName}, []string{"breaker", "from", "to"})
	e.reg.MustRegister(trans)
	r := New(e.reg)
	t0 := time.Unix(1_700_000_000, 0)
	r.Sample(t0)
	trans.WithLabelValues("inventory", "closed", "open").Inc()
	trans.WithLabelValues("inventory", "half-open", "open").Inc()
	trans.WithLabelValues("inventory", "open", "half-open").Inc()
	e.m.RateLimited("failed_auth")
	e.m.InFlightRefused(edgemetrics.CapCaller)
	h := r.View(t0.Add(time.Second), time.Minute) // before the next sample
	if h.Trips["inventory"] != 2 || h.Limited["failed_auth"] != 1 || h.Limited["in_flight_per_caller"] != 1 || h.Limited["in_flight_per_client"] != 0 {
		t.Errorf("trips %v, limited %v; want inventory opened twice, one failed_auth and one in_flight_per_caller refusal", h.Trips, h.Limited)
	}
}
