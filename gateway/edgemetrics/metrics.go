package edgemetrics

import (
	"net/http"
	"strconv"
	"sync/atomic"
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
	staleAnswers   *prometheus.CounterVec
	refusals
	// ok holds the success series of every route Init saw, bound once
	// (WithLabelValues at start, not per request); replaced whole by Init.
	ok atomic.Pointer[map[okKey]okSeries]
	// inFlightBound is each Init route's in-flight gauge, bound so that
	// InFlight does no label lookup.
	inFlightBound atomic.Pointer[map[string]prometheus.Gauge]
}

// okKey names a route's success series.
type okKey struct {
	route, method, upstream string
	status                  int
}

// okSeries are a route's success counter and latency, bound.
type okSeries struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// New registers the edge's collectors with reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_requests_total",
			Help: "HTTP requests answered by the edge, by route template, method, upstream, HTTP status code and problem code.",
		}, []string{"route", "method", "upstream", "code", "problem"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                        "portico_gateway_request_duration_seconds",
			Help:                        "Time from request to answer at the edge.",
			Buckets:                     procmetrics.Buckets,
			NativeHistogramBucketFactor: procmetrics.NativeBucketFactor,
		}, []string{"route", "method", "upstream", "code"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "portico_gateway_requests_in_flight",
			Help: "API requests being answered, by route template.",
		}, []string{"route"}),
		upstreamErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "portico_gateway_upstream_errors_total",
			Help: "Failed upstream calls, by upstream and gRPC code.",
		}, []string{"upstream", "grpc_code"}),
	}
	m.refusals, m.staleAnswers = newRefusals(), newStaleAnswers()
	for _, c := range append([]prometheus.Collector{m.requests, m.duration, m.inFlight, m.upstreamErrors, m.staleAnswers}, m.refusals.collectors()...) {
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

// Request records one answered request: through the series Init bound
// for a route's success, else by label lookup.
func (m *Metrics) Request(a Answer) {
	var c prometheus.Counter
	var h prometheus.Observer
	if b, ok := m.bound(a); ok {
		c, h = b.requests, b.duration
	} else {
		method, status := normalize(a.Method), statusLabel(a.Status)
		c = m.requests.WithLabelValues(a.Route, method, a.Upstream, status, a.Code)
		h = m.duration.WithLabelValues(a.Route, method, a.Upstream, status)
	}
	c.Inc()
	if a.TraceID != "" {
		h.(prometheus.ExemplarObserver).ObserveWithExemplar(a.Duration.Seconds(), prometheus.Labels{"trace_id": a.TraceID})
		return
	}
	h.Observe(a.Duration.Seconds())
}

func (m *Metrics) bound(a Answer) (okSeries, bool) {
	if a.Code != "" {
		return okSeries{}, false
	}
	ok := m.ok.Load()
	if ok == nil {
		return okSeries{}, false
	}
	b, found := (*ok)[okKey{a.Route, a.Method, a.Upstream, a.Status}]
	return b, found
}

// InFlight counts a request to route as in flight until the caller calls
// Dec on the gauge it returns (a gauge, not a func: no closure to allocate).
func (m *Metrics) InFlight(route string) prometheus.Gauge {
	g, ok := prometheus.Gauge(nil), false
	if gs := m.inFlightBound.Load(); gs != nil {
		g, ok = (*gs)[route]
	}
	if !ok {
		g = m.inFlight.WithLabelValues(route)
	}
	g.Inc()
	return g
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
// every gRPC code. It binds each route's success series for Request. Call
// it at start and with each new set of routes, never concurrently.
func (m *Metrics) Init(routes []Route, problems map[string]int) {
	ups := map[string]bool{}
	bound := map[okKey]okSeries{}
	if prev := m.ok.Load(); prev != nil {
		for k, v := range *prev {
			bound[k] = v
		}
	}
	inFlight := map[string]prometheus.Gauge{}
	if prev := m.inFlightBound.Load(); prev != nil {
		for k, v := range *prev {
			inFlight[k] = v
		}
	}
	for _, r := range routes {
		method := normalize(r.Method)
		status := http.StatusOK
		if r.Method == http.MethodPost {
			status = http.StatusCreated
		}
		ok := statusLabel(status)
		bound[okKey{r.Route, r.Method, r.Upstream, status}] = okSeries{
			requests: m.requests.WithLabelValues(r.Route, method, r.Upstream, ok, ""),
			duration: m.duration.WithLabelValues(r.Route, method, r.Upstream, ok),
		}
		for code, status := range problems {
			if status >= 500 {
				m.requests.WithLabelValues(r.Route, method, r.Upstream, strconv.Itoa(status), code)
			}
		}
		inFlight[r.Route] = m.inFlight.WithLabelValues(r.Route)
		ups[r.Upstream] = true
	}
	for u := range ups {
		for c := codes.Canceled; c <= codes.Unauthenticated; c++ {
			m.upstreamErrors.WithLabelValues(u, c.String())
		}
	}
	m.ok.Store(&bound)
	m.inFlightBound.Store(&inFlight)
}

func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return statusLabels[status-100]
}

// statusLabels are the labels of statuses 100 to 599, made once.
var statusLabels = func() (out [500]string) {
	for i := range out {
		out[i] = strconv.Itoa(100 + i)
	}
	return out
}()

func normalize(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}
