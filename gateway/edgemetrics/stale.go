package edgemetrics

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

// InitStale creates at zero the stale-answer series of every route and
// reason given (routes come and go with reloads; a series once created
// stays).
func (m *Metrics) InitStale(routes, reasons []string) {
	for _, r := range routes {
		for _, why := range reasons {
			m.staleAnswers.WithLabelValues(r, why)
		}
	}
}
