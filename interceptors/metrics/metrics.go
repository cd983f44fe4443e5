package metrics

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/interceptors/balance"
	"github.com/portico-gateway/portico/interceptors/breaker"
	"github.com/portico-gateway/portico/interceptors/bulkhead"
	"github.com/portico-gateway/portico/interceptors/retry"
)

// Compile-time interface guards.
var (
	_ retry.Observer    = (*Prometheus)(nil)
	_ breaker.Observer  = (*Prometheus)(nil)
	_ bulkhead.Observer = (*Prometheus)(nil)
	_ balance.Observer  = (*Prometheus)(nil)
)

// Prometheus records the chain's events as Prometheus metrics.
type Prometheus struct {
	retries         *prometheus.CounterVec
	budgetExhausted *prometheus.CounterVec
	breakerState    *prometheus.GaugeVec
	transitions     *prometheus.CounterVec
	rejections      *prometheus.CounterVec
	inFlight        *prometheus.GaugeVec
	ejections       *prometheus.CounterVec
	ejected         *prometheus.GaugeVec

	inFlightByUpstream sync.Map // upstream -> prometheus.Gauge
}

// New creates the metrics and registers them on reg, typically a
// *prometheus.Registry owned by the process.
func New(reg prometheus.Registerer) (*Prometheus, error) {
	if reg == nil {
		return nil, errors.New("metrics: nil registerer")
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "portico", Subsystem: "upstream", Name: name, Help: help}, labels)
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "portico", Subsystem: "upstream", Name: name, Help: help}, labels)
	}
	p := &Prometheus{
		retries:         counter("retries_total", "Retries started, first attempts not counted.", "upstream"),
		budgetExhausted: counter("retry_budget_exhausted_total", "Retries refused by the retry budget.", "upstream"),
		breakerState:    gauge("breaker_state", "Circuit breaker state: 1 for the state the breaker is in (closed, half-open or open), 0 for the others.", "breaker", "state"),
		transitions:     counter("breaker_transitions_total", "Circuit breaker state transitions.", "breaker", "from", "to"),
		rejections:      counter("bulkhead_rejections_total", "Calls rejected by the bulkhead (OVERLOADED).", "upstream"),
		inFlight:        gauge("in_flight", "Calls holding a bulkhead slot.", "upstream"),
		ejections:       counter("ejections_total", "Addresses ejected for consecutive failures.", "upstream"),
		ejected:         gauge("ejected", "Addresses currently ejected.", "upstream"),
	}
	for _, c := range []prometheus.Collector{p.retries, p.budgetExhausted, p.breakerState, p.transitions, p.rejections, p.inFlight, p.ejections, p.ejected} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Retried counts a retry.
func (p *Prometheus) Retried(upstream string) { p.retries.WithLabelValues(upstream).Inc() }

// RetryBudgetExhausted counts a retry the budget refused.
func (p *Prometheus) RetryBudgetExhausted(upstream string) {
	p.budgetExhausted.WithLabelValues(upstream).Inc()
}

// StateChange records a breaker transition and its new state.
func (p *Prometheus) StateChange(name string, from, to breaker.State) {
	p.transitions.WithLabelValues(name, from.String(), to.String()).Inc()
	p.setState(name, to)
}

// states are a breaker's states, each a series of breaker_state.
var states = []breaker.State{breaker.StateClosed, breaker.StateHalfOpen, breaker.StateOpen}

// setState sets the breaker's state series: 1 for the state it is in, 0
// for the others (one series per state, as kube-state-metrics shows a
// phase, rather than a number to decode).
func (p *Prometheus) setState(name string, in breaker.State) {
	for _, s := range states {
		v := 0.0
		if s == in {
			v = 1
		}
		p.breakerState.WithLabelValues(name, s.String()).Set(v)
	}
}

// Overloaded counts a bulkhead rejection.
func (p *Prometheus) Overloaded(upstream string) { p.rejections.WithLabelValues(upstream).Inc() }

// InFlight adds delta to the upstream's in-flight gauge.
func (p *Prometheus) InFlight(upstream string, delta int) {
	g, ok := p.inFlightByUpstream.Load(upstream)
	if !ok {
		g, _ = p.inFlightByUpstream.LoadOrStore(upstream, p.inFlight.WithLabelValues(upstream))
	}
	g.(prometheus.Gauge).Add(float64(delta))
}

// Ejected counts an ejection.
func (p *Prometheus) Ejected(upstream, _ string) {
	p.ejections.WithLabelValues(upstream).Inc()
	p.ejected.WithLabelValues(upstream).Inc()
}

// Unejected records an address's return.
func (p *Prometheus) Unejected(upstream, _ string) { p.ejected.WithLabelValues(upstream).Dec() }

// transitions are the breaker's possible state changes.
var transitions = [][2]breaker.State{
	{breaker.StateClosed, breaker.StateOpen},
	{breaker.StateOpen, breaker.StateHalfOpen},
	{breaker.StateHalfOpen, breaker.StateClosed},
	{breaker.StateHalfOpen, breaker.StateOpen},
}

// Init creates every series of each upstream (a breaker is named after its
// upstream) at zero, breakers closed, so a dashboard shows 0 before the
// first event rather than no data. Call it once at start with every
// upstream the process knows; a series added to Prometheus belongs here
// too.
func (p *Prometheus) Init(upstreams ...string) {
	for _, u := range upstreams {
		p.retries.WithLabelValues(u)
		p.budgetExhausted.WithLabelValues(u)
		p.setState(u, breaker.StateClosed)
		for _, t := range transitions {
			p.transitions.WithLabelValues(u, t[0].String(), t[1].String())
		}
		p.rejections.WithLabelValues(u)
		p.inFlight.WithLabelValues(u)
		p.ejections.WithLabelValues(u)
		p.ejected.WithLabelValues(u)
	}
}
