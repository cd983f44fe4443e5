package order

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// reconcileMetrics are the reconciler's series; every method is safe on a
// nil receiver (no metrics).
type reconcileMetrics struct {
	rounds   *prometheus.CounterVec
	settled  prometheus.Counter
	pendingN prometheus.Gauge
	oldest   prometheus.Gauge
	backing  prometheus.Gauge
	accepted prometheus.Gauge
}

// newReconcileMetrics registers the reconciler's series on reg, each at
// zero.
func newReconcileMetrics(reg prometheus.Registerer) (*reconcileMetrics, error) {
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "portico", Subsystem: "order_reconcile", Name: name, Help: help}
	}
	m := &reconcileMetrics{
		rounds:   prometheus.NewCounterVec(prometheus.CounterOpts(opts("rounds_total", "Reconciler rounds, by result (ok or error).")), []string{"result"}),
		settled:  prometheus.NewCounter(prometheus.CounterOpts(opts("settled_total", "PENDING orders the reconciler settled."))),
		pendingN: prometheus.NewGauge(prometheus.GaugeOpts(opts("pending", "PENDING orders old enough for the reconciler, at its last round."))),
		oldest:   prometheus.NewGauge(prometheus.GaugeOpts(opts("oldest_pending_seconds", "Age of the oldest PENDING order at the last round; 0 when none."))),
		backing:  prometheus.NewGauge(prometheus.GaugeOpts(opts("backing_off", "PENDING orders the reconciler has given up on for now (backing off)."))),
		accepted: prometheus.NewGauge(prometheus.GaugeOpts(opts("accepted", "ACCEPTED orders waiting for inventory at the start of the last round (at most 100 counted)."))),
	}
	for _, c := range []prometheus.Collector{m.rounds, m.settled, m.pendingN, m.oldest, m.backing, m.accepted} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.rounds.WithLabelValues("ok")
	m.rounds.WithLabelValues("error")
	return m, nil
}

func (m *reconcileMetrics) round(settled int, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.rounds.WithLabelValues(result).Inc()
	m.settled.Add(float64(settled))
}

func (m *reconcileMetrics) pending(recs []*Record, now time.Time, backingOff int) {
	if m == nil {
		return
	}
	oldest := 0.0
	for _, r := range recs {
		if age := now.Sub(r.Order.GetCreateTime().AsTime()).Seconds(); age > oldest {
			oldest = age
		}
	}
	m.pendingN.Set(float64(len(recs)))
	m.oldest.Set(oldest)
	m.backing.Set(float64(backingOff))
}

// waitingAccepted records how many ACCEPTED orders a round found.
func (m *reconcileMetrics) waitingAccepted(n int) {
	if m == nil {
		return
	}
	m.accepted.Set(float64(n))
}
