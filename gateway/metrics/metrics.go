package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// Metrics holds the edge's collectors.
type Metrics struct {
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	upstreamErrors *prometheus.CounterVec
}

// New registers the edge's collectors with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_requests_total",
			Help: "HTTP requests answered by the edge, by route, method and status class.",
		}, []string{"route", "method", "class"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "portico_gateway_request_duration_seconds",
			Help:    "Time from request to answer at the edge.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_upstream_errors_total",
			Help: "Failed upstream calls, by upstream and gRPC code.",
		}, []string{"upstream", "code"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.upstreamErrors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Request records one answered request.
func (m *Metrics) Request(route, method string, status int, d time.Duration) {
	method = normalize(method)
	m.requests.WithLabelValues(route, method, class(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(d.Seconds())
}

// UpstreamError records one failed upstream call.
func (m *Metrics) UpstreamError(upstream string, code codes.Code) {
	m.upstreamErrors.WithLabelValues(upstream, code.String()).Inc()
}

func class(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

func normalize(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}
