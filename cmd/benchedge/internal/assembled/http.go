package assembled

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
)

// inFlight answers 503 OVERLOADED when maxInFlight requests are in
// flight; what it lets through is marked Cache-Control: no-store.
func inFlight(mux *runtime.ServeMux, next http.Handler) http.Handler {
	sem := make(chan struct{}, maxInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
		default:
			writeProblem(w, r, http.StatusServiceUnavailable, "OVERLOADED", "The gateway is at its limit of requests in flight.")
			return
		}
		defer func() { <-sem }()
		w.Header().Set("Cache-Control", "no-store") // answers hold callers' data (RFC 9111 §5.2.2.5)
		next.ServeHTTP(w, r)
	})
}

// instrument is promhttp's handler instrumentation: requests in flight,
// a duration histogram and a counter by code and method.
func instrument(reg *prometheus.Registry, next http.Handler) http.Handler {
	inflight := prometheus.NewGauge(prometheus.GaugeOpts{Name: "http_requests_in_flight", Help: "Requests being served."})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "http_request_duration_seconds",
		Help: "Request latency.", Buckets: prometheus.DefBuckets}, []string{"code", "method"})
	total := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "http_requests_total", Help: "Requests served."},
		[]string{"code", "method"})
	reg.MustRegister(inflight, duration, total)
	return promhttp.InstrumentHandlerInFlight(inflight,
		promhttp.InstrumentHandlerDuration(duration, promhttp.InstrumentHandlerCounter(total, next)))
}

// recorder remembers the status and the bytes of an answer.
type recorder struct {
	http.ResponseWriter
	status, bytes int
}

func (rw *recorder) WriteHeader(code int) {
	if rw.status == 0 {
		rw.status = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.status == 0 {
		rw.status = http.StatusOK
	}
	n, err := rw.ResponseWriter.Write(b)
	rw.bytes += n
	return n, err
}

func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// accessLog writes one JSON line per request with log/slog.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &recorder{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rw.status), slog.Int("bytes", rw.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("trace_id", trace.SpanContextFromContext(r.Context()).TraceID().String()),
			slog.String("remote", r.RemoteAddr), slog.String("user_agent", r.UserAgent()))
	})
}
