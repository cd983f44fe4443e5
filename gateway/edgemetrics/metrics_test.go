package edgemetrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
)

// counters returns "name{k=v,...}" -> value for every counter in reg.
func counters(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if m.GetCounter() == nil {
				continue
			}
			key := mf.GetName() + "{"
			for i, l := range m.GetLabel() {
				if i > 0 {
					key += ","
				}
				key += l.GetName() + "=" + l.GetValue()
			}
			out[key+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Request(Answer{Route: "/api/orders", Method: "GET", Upstream: "order", Status: 200, Duration: time.Millisecond})
	m.Request(Answer{Route: "/api/orders", Method: "BREW", Status: 418, Code: "X", Duration: time.Millisecond})
	m.Request(Answer{Route: "unmatched", Method: "GET", Status: 99, Duration: time.Millisecond, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"})
	m.UpstreamError("order", codes.Unavailable)
	got := counters(t, reg)
	for key, want := range map[string]float64{
		"portico_gateway_requests_total{code=200,method=GET,problem=,route=/api/orders,upstream=order}": 1,
		"portico_gateway_requests_total{code=418,method=OTHER,problem=X,route=/api/orders,upstream=}":   1,
		"portico_gateway_requests_total{code=other,method=GET,problem=,route=unmatched,upstream=}":      1,
		"portico_gateway_upstream_errors_total{grpc_code=Unavailable,upstream=order}":                   1,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (all: %v)", key, got[key], want, got)
		}
	}
	if _, err := New(reg); err == nil {
		t.Error("registering twice = nil error")
	}
}

// TestInit: every series a dashboard reads exists at zero before any
// request, for every route and upstream given.
func TestInit(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Init([]Route{{"/api/orders", "POST", "order"}, {"/api/inventory/{sku}", "GET", "inventory"}},
		map[string]int{"CIRCUIT_OPEN": 503, "NOT_FOUND": 404})
	got := counters(t, reg)
	for _, key := range []string{
		"portico_gateway_requests_total{code=201,method=POST,problem=,route=/api/orders,upstream=order}",
		"portico_gateway_requests_total{code=503,method=POST,problem=CIRCUIT_OPEN,route=/api/orders,upstream=order}",
		"portico_gateway_requests_total{code=200,method=GET,problem=,route=/api/inventory/{sku},upstream=inventory}",
		"portico_gateway_upstream_errors_total{grpc_code=Unavailable,upstream=inventory}",
	} {
		if v, ok := got[key]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", key, v, ok)
		}
	}
	if _, ok := got["portico_gateway_requests_total{code=404,method=POST,problem=NOT_FOUND,route=/api/orders,upstream=order}"]; ok {
		t.Error("Init made a 4xx series; only 5xx problems are initialised")
	}
}

// TestBound: a route's success goes to the series Init bound (200, or 201
// for a POST), with its latency; a second Init keeps the first's routes
// bound; an answer Init did not bind still counts, by lookup.
func TestBound(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Init([]Route{{Route: "/api/orders", Method: "POST", Upstream: "order"}}, nil)
	m.Init([]Route{{Route: "/api/orders/{id}", Method: "GET", Upstream: "order"}}, nil)
	for _, a := range []Answer{
		{Route: "/api/orders", Method: "POST", Upstream: "order", Status: 201},
		{Route: "/api/orders/{id}", Method: "GET", Upstream: "order", Status: 200, TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{Route: "/api/orders/{id}", Method: "GET", Upstream: "order", Status: 404, Code: "NOT_FOUND"},
	} {
		a.Duration = time.Millisecond
		m.Request(a)
	}
	got := counters(t, reg)
	for key, want := range map[string]float64{
		"portico_gateway_requests_total{code=201,method=POST,problem=,route=/api/orders,upstream=order}":              1,
		"portico_gateway_requests_total{code=200,method=GET,problem=,route=/api/orders/{id},upstream=order}":          1,
		"portico_gateway_requests_total{code=404,method=GET,problem=NOT_FOUND,route=/api/orders/{id},upstream=order}": 1,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "portico_gateway_request_duration_seconds" {
			continue
		}
		for _, h := range mf.GetMetric() {
			if n := h.GetHistogram().GetSampleCount(); n != 1 {
				t.Errorf("latency %v has %d samples, want 1", h.GetLabel(), n)
			}
		}
	}
}

// TestInFlight: a route Init bound and one it did not both count while
// in flight and return to zero on Dec.
func TestInFlight(t *testing.T) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	m.Init([]Route{{Route: "/api/inventory/{sku}", Method: "GET", Upstream: "inventory"}}, nil)
	for _, route := range []string{"/api/inventory/{sku}", "/api/unbound"} {
		t.Run(route, func(t *testing.T) {
			value := func() float64 {
				var d dto.Metric
				if err := m.inFlight.WithLabelValues(route).Write(&d); err != nil {
					t.Fatal(err)
				}
				return d.GetGauge().GetValue()
			}
			a, b := m.InFlight(route), m.InFlight(route)
			if got := value(); got != 2 {
				t.Errorf("in flight after two InFlight(%q) = %v, want 2", route, got)
			}
			a.Dec()
			b.Dec()
			if got := value(); got != 0 {
				t.Errorf("in flight after both Dec = %v, want 0", got)
			}
		})
	}
}

func BenchmarkInFlight(b *testing.B) {
	m, err := New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	m.Init([]Route{{Route: "/api/inventory/{sku}", Method: "GET", Upstream: "inventory"}}, nil)
	b.ReportAllocs()
	for b.Loop() {
		m.InFlight("/api/inventory/{sku}").Dec()
	}
}
