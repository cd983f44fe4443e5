package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/metrics"
)

// value returns the value of the series name{labels}, or -1 when absent.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if matches(m, labels) {
				if m.GetCounter() != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}

func matches(m *dto.Metric, labels map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := labels[lp.GetName()]; ok && v == lp.GetValue() {
			n++
		}
	}
	return n == len(labels)
}

func TestPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	inv := map[string]string{"upstream": "inventory"}
	m.Retried("inventory")
	m.Retried("inventory")
	m.RetryBudgetExhausted("inventory")
	m.StateChange("inventory", breaker.StateClosed, breaker.StateOpen)
	m.Overloaded("inventory")
	m.InFlight("inventory", 1)
	m.InFlight("inventory", 1)
	m.InFlight("inventory", -1)
	m.Ejected("inventory", "10.0.0.7:1")
	m.Ejected("inventory", "10.0.0.8:1")
	m.Unejected("inventory", "10.0.0.7:1")

	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"portico_upstream_retries_total", inv, 2},
		{"portico_upstream_retry_budget_exhausted_total", inv, 1},
		{"portico_upstream_breaker_state", map[string]string{"breaker": "inventory", "state": "open"}, 1},
		{"portico_upstream_breaker_state", map[string]string{"breaker": "inventory", "state": "closed"}, 0},
		{"portico_upstream_breaker_state", map[string]string{"breaker": "inventory", "state": "half-open"}, 0},
		{"portico_upstream_breaker_transitions_total", map[string]string{"breaker": "inventory", "from": "closed", "to": "open"}, 1},
		{"portico_upstream_bulkhead_rejections_total", inv, 1},
		{"portico_upstream_in_flight", inv, 1},
		{"portico_upstream_ejections_total", inv, 2},
		{"portico_upstream_ejected", inv, 1},
	}
	for _, tt := range tests {
		if got := value(t, reg, tt.name, tt.labels); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
}

// TestBreakerStatePerState: the breaker state is one series per state,
// 1 for the current one and 0 for the others, from Init (closed) through
// every transition, so {state="open"} == 1 reads "open" without knowing
// a numeric code.
func TestBreakerStatePerState(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Init("order")
	steps := []struct {
		name     string
		from, to breaker.State
	}{
		{"after Init", breaker.StateClosed, breaker.StateClosed},
		{"opened", breaker.StateClosed, breaker.StateOpen},
		{"probing", breaker.StateOpen, breaker.StateHalfOpen},
		{"closed again", breaker.StateHalfOpen, breaker.StateClosed},
	}
	for _, st := range steps {
		if st.from != st.to {
			m.StateChange("order", st.from, st.to)
		}
		for _, s := range []breaker.State{breaker.StateClosed, breaker.StateHalfOpen, breaker.StateOpen} {
			want := 0.0
			if s == st.to {
				want = 1
			}
			labels := map[string]string{"breaker": "order", "state": s.String()}
			if got := value(t, reg, "portico_upstream_breaker_state", labels); got != want {
				t.Errorf("%s: portico_upstream_breaker_state%v = %v, want %v", st.name, labels, got, want)
			}
		}
	}
}

func TestNewRefusesNilAndDuplicates(t *testing.T) {
	if _, err := metrics.New(nil); err == nil {
		t.Error("New(nil) = nil error, want one")
	}
	reg := prometheus.NewRegistry()
	if _, err := metrics.New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.New(reg); err == nil {
		t.Error("second New on one registry = nil error, want a duplicate registration error")
	}
}

func BenchmarkInFlight(b *testing.B) {
	m, _ := metrics.New(prometheus.NewRegistry())
	b.ReportAllocs()
	for b.Loop() {
		m.InFlight("inventory", 1)
		m.InFlight("inventory", -1)
	}
}
