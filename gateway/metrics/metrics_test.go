package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
		"portico_gateway_requests_total{code=,method=GET,route=/api/orders,status=200,upstream=order}": 1,
		"portico_gateway_requests_total{code=X,method=OTHER,route=/api/orders,status=418,upstream=}":   1,
		"portico_gateway_requests_total{code=,method=GET,route=unmatched,status=other,upstream=}":      1,
		"portico_gateway_upstream_errors_total{code=Unavailable,upstream=order}":                       1,
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
		"portico_gateway_requests_total{code=,method=POST,route=/api/orders,status=201,upstream=order}",
		"portico_gateway_requests_total{code=CIRCUIT_OPEN,method=POST,route=/api/orders,status=503,upstream=order}",
		"portico_gateway_requests_total{code=,method=GET,route=/api/inventory/{sku},status=200,upstream=inventory}",
		"portico_gateway_upstream_errors_total{code=Unavailable,upstream=inventory}",
	} {
		if v, ok := got[key]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", key, v, ok)
		}
	}
	if _, ok := got["portico_gateway_requests_total{code=NOT_FOUND,method=POST,route=/api/orders,status=404,upstream=order}"]; ok {
		t.Error("Init made a 4xx series; only 5xx problems are initialised")
	}
}
