package gateway

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/gateway/config"
)

// The API listener holds at most http.max_connections client connections
// (config.HTTPConfig.MaxConnections), counted from accept to close across
// every front and generation, retired ones included, since each holds a
// descriptor until it closes. At the cap:
//
//   - when a connection is idle (StateIdle: kept alive between requests),
//     the accept loop accepts and then closes the one idle longest, as
//     nginx does: Server.Shutdown closes idle connections the same way,
//     and a client's transport retries an idempotent request that meets
//     the close (RFC 9112 section 9.3.1);
//   - otherwise it stops calling Accept until a connection closes or
//     goes idle, as HAProxy's maxconn and netutil.LimitListener do: new
//     connections wait in the kernel's listen backlog, and past it the
//     kernel refuses them. One WARN line per shedLogEvery counts the
//     pauses.
//
// A connection closed to make room is chosen under mu while ConnState
// still says idle; one that turns active after that (its next request
// read meanwhile) is closed all the same, the race Shutdown has too. The
// admin listener is not capped: operators must reach it at the cap.

// connLimit counts the API's connections and enforces the cap. One per
// Server: it outlives reloads, which set its cap (setMax).
type connLimit struct {
	mu      sync.Mutex
	max     int // -1: no cap
	open    int // accepted and not yet closed
	closing int // of open: idle ones closed to make room, not gone yet
	conns   map[net.Conn]*connEntry
	idle    idleList      // the idle ones, longest idle first
	wake    chan struct{} // closed at the next change; nil: nobody waits
	paused  int           // times accepting paused at the cap, since start

	m        connMetrics
	log      *slog.Logger
	lastLog  atomic.Int64 // unix nanoseconds of the last pause line
	unlogged atomic.Int64 // pauses since that line
}

// connEntry is one connection net/http serves, by ConnState.
type connEntry struct {
	conn       net.Conn
	state      http.ConnState
	prev, next *connEntry // in connLimit.idle while listed
	listed     bool       // in connLimit.idle: idle and not closing
	closing    bool       // closed to make room
}

// idleList is a list of connEntry threaded through the entries
// themselves, so that a request's two ConnState calls (active, idle)
// allocate nothing. Under connLimit.mu.
type idleList struct {
	front, back *connEntry
	n           int
}

func (q *idleList) Len() int { return q.n }

func (q *idleList) pushBack(e *connEntry) {
	e.prev, e.next, e.listed = q.back, nil, true
	if q.back != nil {
		q.back.next = e
	} else {
		q.front = e
	}
	q.back = e
	q.n++
}

func (q *idleList) remove(e *connEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		q.front = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		q.back = e.prev
	}
	e.prev, e.next, e.listed = nil, nil, false
	q.n--
}

// connMetrics are the cap's series.
type connMetrics struct {
	open, max, pausedNow prometheus.Gauge
	closed, paused       prometheus.Counter
}

func newConnLimit(reg prometheus.Registerer, log *slog.Logger) (*connLimit, error) {
	m := connMetrics{
		open: prometheus.NewGauge(prometheus.GaugeOpts{Name: "portico_gateway_connections_open",
			Help: "Client connections the API listener holds now (the admin listener's are not counted)."}),
		max: prometheus.NewGauge(prometheus.GaugeOpts{Name: "portico_gateway_connections_max",
			Help: "The API listener's connection cap in effect (http.max_connections, or its default from the open-file limit); -1 for no cap."}),
		closed: prometheus.NewCounter(prometheus.CounterOpts{Name: "portico_gateway_connections_idle_closed_total",
			Help: "Idle keep-alive connections closed to make room for a new one at http.max_connections."}),
		paused: prometheus.NewCounter(prometheus.CounterOpts{Name: "portico_gateway_accept_paused_total",
			Help: "Times the API listener stopped accepting at http.max_connections with no idle connection to close."}),
		pausedNow: prometheus.NewGauge(prometheus.GaugeOpts{Name: "portico_gateway_accept_paused",
			Help: "1 while the API listener is not accepting, at http.max_connections with no idle connection to close; else 0."}),
	}
	for _, c := range []prometheus.Collector{m.open, m.max, m.closed, m.paused, m.pausedNow} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.max.Set(-1)
	return &connLimit{max: -1, conns: map[net.Conn]*connEntry{}, m: m, log: log}, nil
}

// connCap is the cap configured as max (http.max_connections): 0 is the
// default from the open-file limit, read now.
func connCap(max int) int {
	if max == 0 {
		return config.DefaultMaxConnections(openFileLimit())
	}
	return max
}

// limit is the cap in effect (-1: none).
func (l *connLimit) limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// setMax makes n the cap (-1: none). A raised cap resumes a paused
// accept loop; a lowered one closes idle connections as new ones arrive.
func (l *connLimit) setMax(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.max = n
	l.m.max.Set(float64(n))
	l.notify()
}

// await returns once one more connection fits, counting idle connections
// as room; false once quit is closed (the front's listener closed).
func (l *connLimit) await(quit <-chan struct{}) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	paused := false
	defer l.resume(&paused)
	for l.max >= 0 && l.open-l.closing-l.idle.Len() >= l.max {
		if !paused {
			paused = true
			l.pause(l.open)
		}
		if !l.wait(quit) {
			return false
		}
	}
	return true
}

// admit counts a connection just accepted and returns the idle ones the
// caller must close to make room for it. When they turned active since
// await, it waits for room; false (the connection uncounted) once quit is
// closed.
func (l *connLimit) admit(quit <-chan struct{}) ([]net.Conn, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open++
	l.m.open.Inc()
	var out []net.Conn
	paused := false
	defer l.resume(&paused)
	for l.max >= 0 && l.open-l.closing > l.max {
		if c := l.evict(); c != nil {
			out = append(out, c)
			continue
		}
		if !paused {
			paused = true
			l.pause(l.open - 1) // the one just accepted waits, unserved
		}
		if !l.wait(quit) {
			l.gone()
			return out, false
		}
	}
	return out, true
}

// evict takes the connection idle longest out of the idle list, marked
// closing; nil when none is idle. Under mu.
func (l *connLimit) evict() net.Conn {
	for e := l.idle.front; e != nil; e = l.idle.front {
		l.idle.remove(e)
		if e.state != http.StateIdle { // never: leaving idle unlists it
			continue
		}
		e.closing = true
		l.closing++
		l.m.closed.Inc()
		return e.conn
	}
	return nil
}

// track follows c's state (http.Server.ConnState).
func (l *connLimit) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.notify()
	e := l.conns[c]
	if e == nil {
		if st == http.StateNew {
			l.conns[c] = &connEntry{conn: c, state: st}
		}
		return
	}
	e.state = st
	switch st {
	case http.StateIdle:
		if !e.listed && !e.closing {
			l.idle.pushBack(e)
		}
	case http.StateActive:
		l.unlist(e)
	case http.StateClosed, http.StateHijacked:
		l.unlist(e)
		delete(l.conns, c)
		if e.closing {
			l.closing--
		}
		l.gone()
	}
}

// release uncounts an accepted connection closed before net/http saw it.
func (l *connLimit) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone()
	l.notify()
}

func (l *connLimit) gone() {
	l.open--
	l.m.open.Dec()
}

func (l *connLimit) unlist(e *connEntry) {
	if e.listed {
		l.idle.remove(e)
	}
}

// wait unlocks mu until the next change or quit; false on quit. It
// returns with mu held.
func (l *connLimit) wait(quit <-chan struct{}) bool {
	if l.wake == nil {
		l.wake = make(chan struct{})
	}
	w := l.wake
	l.mu.Unlock()
	defer l.mu.Lock()
	select {
	case <-w:
		return true
	case <-quit:
		return false
	}
}

// notify wakes the waiters, if any. Under mu; a change nobody waits for
// costs nothing.
func (l *connLimit) notify() {
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
}

// pause counts a pause at the cap, with serving connections open, and
// logs at most one line per shedLogEvery. Under mu, so an overload writes
// one line a second at most, like the shedder's.
func (l *connLimit) pause(serving int) {
	l.paused++
	l.m.paused.Inc()
	l.m.pausedNow.Set(1)
	l.unlogged.Add(1)
	now := time.Now().UnixNano()
	if last := l.lastLog.Load(); now-last >= int64(shedLogEvery) && l.lastLog.CompareAndSwap(last, now) {
		l.log.Warn("connection cap reached; accepting paused until a connection closes or goes idle",
			"maxConnections", l.max, "open", serving, "pausesSinceLastLine", l.unlogged.Swap(0), "pausesTotal", l.paused)
	}
}

// resume clears the paused gauge when the caller had paused. Under mu.
func (l *connLimit) resume(paused *bool) {
	if *paused {
		l.m.pausedNow.Set(0)
	}
}
