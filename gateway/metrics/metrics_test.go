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
	m.Request("/api/orders", "GET", 200, time.Millisecond)
	m.Request("/api/orders", "BREW", 418, time.Millisecond)
	m.Request("unmatched", "GET", 99, time.Millisecond)
	m.UpstreamError("order", codes.Unavailable)
	got := counters(t, reg)
	for key, want := range map[string]float64{
		"portico_gateway_requests_total{class=2xx,method=GET,route=/api/orders}":   1,
		"portico_gateway_requests_total{class=4xx,method=OTHER,route=/api/orders}": 1,
		"portico_gateway_requests_total{class=other,method=GET,route=unmatched}":   1,
		"portico_gateway_upstream_errors_total{code=Unavailable,upstream=order}":   1,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (all: %v)", key, got[key], want, got)
		}
	}
	if _, err := New(reg); err == nil {
		t.Error("registering twice = nil error")
	}
}
