package edgemetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// refusals are the edge's own refusals before any upstream call, by why.
type refusals struct {
	rateLimited     *prometheus.CounterVec
	authFailures    *prometheus.CounterVec
	inFlightRefused *prometheus.CounterVec
}

// The in-flight caps a request may be refused by (InFlightRefused).
const (
	CapClient = "client" // shed.max_in_flight_per_client
	CapCaller = "caller" // shed.max_in_flight_per_caller
)

func newRefusals() refusals {
	inFlight := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "portico_gateway_in_flight_refused_total",
		Help: "Requests refused with 429 TOO_MANY_IN_FLIGHT, by the cap: client (shed.max_in_flight_per_client) or caller (shed.max_in_flight_per_caller).",
	}, []string{"cap"})
	inFlight.WithLabelValues(CapClient)
	inFlight.WithLabelValues(CapCaller)
	return refusals{inFlightRefused: inFlight,
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
	return []prometheus.Collector{r.rateLimited, r.authFailures, r.inFlightRefused}
}

// RateLimited counts one request refused by layer.
func (m *Metrics) RateLimited(layer string) { m.rateLimited.WithLabelValues(layer).Inc() }

// InFlightRefused counts one request refused by an in-flight cap:
// CapClient or CapCaller.
func (m *Metrics) InFlightRefused(cap string) { m.inFlightRefused.WithLabelValues(cap).Inc() }

// InFlightRefusals returns the requests refused by cap since start.
func (m *Metrics) InFlightRefusals(cap string) int64 {
	var d dto.Metric
	_ = m.inFlightRefused.WithLabelValues(cap).Write(&d)
	return int64(d.GetCounter().GetValue())
}

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
