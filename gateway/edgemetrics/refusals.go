package edgemetrics

import "github.com/prometheus/client_golang/prometheus"

// refusals are the edge's own refusals before any upstream call, by why.
type refusals struct {
	rateLimited  *prometheus.CounterVec
	authFailures *prometheus.CounterVec
}

func newRefusals() refusals {
	return refusals{
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_rate_limited_total",
			Help: "Requests refused by a rate limit (429), by the refusing layer: caller, global, failed_auth, ban, or a route group's name.",
		}, []string{"layer"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_auth_failures_total",
			Help: "Requests refused by authentication (401, or 400 for malformed credentials) or authorisation (403 FORBIDDEN), by problem code.",
		}, []string{"reason"}),
	}
}

func (r refusals) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.rateLimited, r.authFailures}
}

// RateLimited counts one request refused by layer.
func (m *Metrics) RateLimited(layer string) { m.rateLimited.WithLabelValues(layer).Inc() }

// AuthFailure counts one request refused for reason, its problem code.
func (m *Metrics) AuthFailure(reason string) { m.authFailures.WithLabelValues(reason).Inc() }

// InitRefusals creates at zero the series of every layer and reason given
// (the configured route groups come and go with reloads; a series once
// created stays).
func (m *Metrics) InitRefusals(layers, reasons []string) {
	for _, l := range layers {
		m.rateLimited.WithLabelValues(l)
	}
	for _, r := range reasons {
		m.authFailures.WithLabelValues(r)
	}
}
