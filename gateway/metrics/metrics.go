package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"

	"github.com/portico-gateway/portico/internal/procmetrics"
)

// Metrics holds the edge's collectors.
type Metrics struct {
	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	inFlight       *prometheus.GaugeVec
	upstreamErrors *prometheus.CounterVec
}

// New registers the edge's collectors with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_requests_total",
			Help: "HTTP requests answered by the edge, by route template, method, upstream, status and problem code.",
		}, []string{"route", "method", "upstream", "status", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                        "portico_gateway_request_duration_seconds",
			Help:                        "Time from request to answer at the edge.",
			Buckets:                     procmetrics.Buckets,
			NativeHistogramBucketFactor: procmetrics.NativeBucketFactor,
		}, []string{"route", "method", "upstream", "status"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "portico_gateway_requests_in_flight",
			Help: "API requests being answered, by route template.",
		}, []string{"route"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_upstream_errors_total",
			Help: "Failed upstream calls, by upstream and gRPC code.",
		}, []string{"upstream", "code"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight, m.upstreamErrors} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Answer is one answered request.
type Answer struct {
	Route, Method, Upstream string
	Status                  int
	Code                    string // the problem code; "" for a success
	Duration                time.Duration
	// TraceID, when set, becomes the latency sample's exemplar (a
	// sampled trace to jump to).
	TraceID string
}

// Request records one answered request.
func (m *Metrics) Request(a Answer) {
	method, status := normalize(a.Method), statusLabel(a.Status)
	m.requests.WithLabelValues(a.Route, method, a.Upstream, status, a.Code).Inc()
	h := m.duration.WithLabelValues(a.Route, method, a.Upstream, status)
	if a.TraceID != "" {
		h.(prometheus.ExemplarObserver).ObserveWithExemplar(a.Duration.Seconds(), prometheus.Labels{"trace_id": a.TraceID})
		return
	}
	h.Observe(a.Duration.Seconds())
}

// InFlight counts a request to route as in flight until done is called.
func (m *Metrics) InFlight(route string) (done func()) {
	g := m.inFlight.WithLabelValues(route)
	g.Inc()
	return g.Dec
}

// UpstreamError records one failed upstream call.
func (m *Metrics) UpstreamError(upstream string, code codes.Code) {
	m.upstreamErrors.WithLabelValues(upstream, code.String()).Inc()
}

// Reload counts one config reload: applied, or rejected when err is set.
// Route is one route the edge serves, for Init.
type Route struct{ Route, Method, Upstream string }

// Init creates at zero, for every route: its success series, one series
// per 5xx problem code in problems (code -> HTTP status), its latency and
// in-flight series; and for every upstream of them, its error series for
// every gRPC code. Call it once at start.
func (m *Metrics) Init(routes []Route, problems map[string]int) {
	ups := map[string]bool{}
	for _, r := range routes {
		method := normalize(r.Method)
		ok := "200"
		if r.Method == http.MethodPost {
			ok = "201"
		}
		m.requests.WithLabelValues(r.Route, method, r.Upstream, ok, "")
		m.duration.WithLabelValues(r.Route, method, r.Upstream, ok)
		for code, status := range problems {
			if status >= 500 {
				m.requests.WithLabelValues(r.Route, method, r.Upstream, strconv.Itoa(status), code)
			}
		}
		m.inFlight.WithLabelValues(r.Route)
		ups[r.Upstream] = true
	}
	for u := range ups {
		for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
			m.upstreamErrors.WithLabelValues(u, c.String())
		}
	}
}

func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status)
}

func normalize(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}
