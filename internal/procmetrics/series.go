package procmetrics

import (
	"sync/atomic"

	mw "github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// knownCodes is the number of gRPC codes (OK to Unauthenticated) whose
// handled series a method caches; a call with any other code resolves
// its series by label.
const knownCodes = codes.Unauthenticated + 1

// series are one method's resolved series, so that a call updates them
// without hashing labels. A series the provider creates only when a call
// needs it (msg_received at the first success, handled at the first call
// with each code, the latency at the end of the first call) is resolved
// then too, so the same series exist, created at the same moments.
// Concurrent first calls may both resolve a series: the vec returns the
// same child to both.
type series struct {
	labels        [3]string // grpc_type, grpc_service, grpc_method
	started, sent prometheus.ExemplarAdder
	received      atomic.Pointer[prometheus.ExemplarAdder]
	latency       atomic.Pointer[prometheus.ExemplarObserver]
	handled       [knownCodes]atomic.Pointer[prometheus.ExemplarAdder]
}

// newSeries resolves the series a call creates before it is made:
// started, then msg_sent.
func newSeries(v vecs, fullMethod string) *series {
	meta := mw.NewClientCallMeta(fullMethod, nil, nil)
	s := &series{labels: [3]string{string(meta.Typ), meta.Service, meta.Method}}
	s.started = v.started.WithLabelValues(s.labels[:]...).(prometheus.ExemplarAdder)
	s.sent = v.sent.WithLabelValues(s.labels[:]...).(prometheus.ExemplarAdder)
	return s
}

// resolve returns *p, first storing create() there if p is empty.
func resolve[T any](p *atomic.Pointer[T], create func() T) T {
	if v := p.Load(); v != nil {
		return *v
	}
	v := create()
	p.Store(&v)
	return v
}

func (s *series) receivedCounter(v *prometheus.CounterVec) prometheus.ExemplarAdder {
	return resolve(&s.received, func() prometheus.ExemplarAdder {
		return v.WithLabelValues(s.labels[:]...).(prometheus.ExemplarAdder)
	})
}

func (s *series) latencyObserver(v *prometheus.HistogramVec) prometheus.ExemplarObserver {
	return resolve(&s.latency, func() prometheus.ExemplarObserver {
		return v.WithLabelValues(s.labels[:]...).(prometheus.ExemplarObserver)
	})
}

func (s *series) handledCounter(v *prometheus.CounterVec, code codes.Code) prometheus.ExemplarAdder {
	byLabel := func() prometheus.ExemplarAdder {
		return v.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], code.String()).(prometheus.ExemplarAdder)
	}
	if code >= knownCodes {
		return byLabel()
	}
	return resolve(&s.handled[code], byLabel)
}
