package metrics

import "github.com/prometheus/client_golang/prometheus"

func newStaleAnswers() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "portico_gateway_stale_answers_total",
		Help: "GET answers served from a kept copy because the upstream failed (stale-if-error), by route template and reason: unreachable, unavailable, circuit-open, overloaded or timeout.",
	}, []string{"route", "reason"})
}

// StaleAnswer counts one answer served stale on route for reason.
func (m *Metrics) StaleAnswer(route, reason string) {
	m.staleAnswers.WithLabelValues(route, reason).Inc()
}
