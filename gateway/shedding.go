package gateway

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/route"
	"github.com/portico-gateway/portico/gateway/shed"
	"github.com/portico-gateway/portico/gateway/timeout"
	"github.com/portico-gateway/portico/internal/traceid"
)

// edgeScope labels the edge's own cap in metrics and logs; a route group's
// cap is labelled with the group's name.
const edgeScope = "edge"

// shedLogEvery spaces the "shedding load" lines: one line per interval
// counts the refusals since the last, so an overload cannot make logging
// its own bottleneck.
const shedLogEvery = time.Second

// shedder is the pipeline's first step, load shedding (ShedConfig). It
// is built from the config alone and holds no per-request state beyond its
// limiters' counters.
type shedder struct {
	edge       *shed.Limiter // nil: no cap
	groups     map[*route.Route]*shedScope
	table      *route.Table
	wait       time.Duration
	retryAfter int    // whole seconds
	typeBase   string // problems.type_base of the refusals
	edgeScope  *shedScope
	log        *slog.Logger
	lastLog    atomic.Int64 // unix nanoseconds of the last "shedding load" line
	unlogged   atomic.Int64 // refusals since that line
}

// shedScope is one cap: the edge's or a route group's.
type shedScope struct {
	name    string
	lim     *shed.Limiter
	shed    prometheus.Counter
	queue   int
	refusal *refusal // its 503, built once
}

// scopes are sh's caps: the edge's first, then each group's once.
func (sh *shedder) scopes() []*shedScope {
	if sh == nil {
		return nil
	}
	var out []*shedScope
	if sh.edgeScope != nil {
		out = append(out, sh.edgeScope)
	}
	seen := map[*shedScope]bool{}
	for _, g := range sh.groups {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// scope returns sh's cap named name, or nil.
func (sh *shedder) scope(name string) *shedScope {
	for _, sc := range sh.scopes() {
		if sc.name == name {
			return sc
		}
	}
	return nil
}

// shedTotal is portico_gateway_shed_total, registered once per Server.
func newShedTotal(reg prometheus.Registerer) (*prometheus.CounterVec, error) {
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "portico_gateway_shed_total",
		Help: "Requests refused with 503 OVERLOADED by an in-flight cap, by scope (edge or route group).",
	}, []string{"scope"})
	return total, reg.Register(total)
}

// shedHold is what an admitted request holds; release gives it back.
type shedHold struct{ edge, group *shed.Limiter }

func (h shedHold) release() {
	if h.group != nil {
		h.group.Release()
	}
	if h.edge != nil {
		h.edge.Release()
	}
}

// newShedder builds the shedder of cfg (defaults applied) over the route
// table. total counts refusals by scope (portico_gateway_shed_total); the
// requests each cap holds are GET /admin/limits's (the requests in flight
// are portico_gateway_requests_in_flight{route}). A scope of prev (the
// previous snapshot's shedder, nil at start) with the same name, cap and
// queue lends its limiter, so the requests it holds still count after a
// reload.
func newShedder(cfg config.ShedConfig, typeBase string, table *route.Table, total *prometheus.CounterVec, log *slog.Logger, prev *shedder) (*shedder, error) {
	queue := cfg.MaxQueue
	if cfg.MaxWait <= 0 {
		queue = 0
	}
	sh := &shedder{table: table, wait: cfg.MaxWait, retryAfter: wholeSeconds(cfg.RetryAfter), typeBase: typeBase, log: log,
		groups: map[*route.Route]*shedScope{}}
	scope := func(name string, n int) (*shedScope, error) {
		rf := newRefusal(name, sh.retryAfter, typeBase)
		if old := prev.scope(name); old != nil && old.lim.Max() == n && old.queue == queue {
			return &shedScope{name: name, lim: old.lim, shed: old.shed, queue: queue, refusal: rf}, nil
		}
		lim, err := shed.New(n, queue)
		if err != nil {
			return nil, err
		}
		return &shedScope{name: name, lim: lim, shed: total.WithLabelValues(name), queue: queue, refusal: rf}, nil
	}
	var err error
	if cfg.MaxInFlight > 0 {
		if sh.edgeScope, err = scope(edgeScope, cfg.MaxInFlight); err != nil {
			return nil, err
		}
		sh.edge = sh.edgeScope.lim
	}
	selected, err := groupRoutes("shed.groups", cfg.Groups, shedGroupParts, table.Routes())
	if err != nil {
		return nil, err
	}
	scopes := make([]*shedScope, len(cfg.Groups))
	for i, gc := range cfg.Groups {
		if scopes[i], err = scope(gc.Name, gc.MaxInFlight); err != nil {
			return nil, err
		}
	}
	for rt, i := range selected {
		sh.groups[rt] = scopes[i]
	}
	return sh, nil
}

// full is the cheap refusal of an overload: the scope (the edge's cap, or
// the request's route group's) that is full now, when nobody waits for a
// slot, else nil. It runs before anything else looks at the request and
// takes nothing: it reads no body, logs no line and, on the cheap path,
// allocates nothing. A request it lets through takes its slots later, in
// admit, once its body and caller are in hand.
func (sh *shedder) full(r *http.Request) *shedScope {
	if sh.wait > 0 || !isAPIPath(r.URL.Path) {
		return nil
	}
	if sh.edge != nil && sh.edge.InFlight() >= sh.edge.Max() {
		return sh.edgeScope
	}
	if len(sh.groups) > 0 {
		if rt, _ := sh.table.Match(r.Method, r.URL.Path); rt != nil {
			if g := sh.groups[rt]; g != nil && g.lim.InFlight() >= g.lim.Max() {
				return g
			}
		}
	}
	return nil
}

// admit takes the request's slots, the edge's and its route group's (rt's,
// when rt is not nil), or returns the scope that refused it, its slots
// given back. It runs when the edge can work on the request: its body is
// read and its caller authenticated, so a slow client never holds a slot.
func (sh *shedder) admit(r *http.Request, rt *route.Route) (shedHold, *shedScope) {
	var h shedHold
	if sh.edge != nil {
		if !sh.acquire(r, sh.edge) {
			return shedHold{}, sh.edgeScope
		}
		h.edge = sh.edge
	}
	if g := sh.groups[rt]; g != nil && rt != nil {
		if !sh.acquire(r, g.lim) {
			h.release()
			return shedHold{}, g
		}
		h.group = g.lim
	}
	return h, nil
}

// acquire takes a slot of lim, waiting up to the configured wait but never
// beyond the client's own Grpc-Timeout.
func (sh *shedder) acquire(r *http.Request, lim *shed.Limiter) bool {
	if lim.TryAcquire() {
		return true
	}
	if sh.wait <= 0 {
		return false
	}
	wait := sh.wait
	if v := r.Header.Get("Grpc-Timeout"); v != "" {
		if d, err := timeout.ParseTimeout(v); err == nil {
			wait = min(wait, d)
		}
	}
	return lim.Acquire(r.Context(), wait) == nil
}

// refuse answers 503 OVERLOADED with Retry-After (the scope's refusal,
// built once) before the request has a trace id or an exchange (full's
// refusal), and counts it.
func (sh *shedder) refuse(w http.ResponseWriter, r *http.Request, sc *shedScope) {
	traceID := refusalTraceID(r) // a refusal starts no span: an id is enough
	w.Header()[traceHeader] = []string{traceID}
	if len(r.TransferEncoding) > 0 || !r.ProtoAtLeast(1, 1) {
		closeAfter(w) // the unread body's framing is not to be trusted (closeAfter)
	}
	if path := r.URL.EscapedPath(); !sc.refusal.write(w, path, traceID) {
		p := problem.New(problem.CodeOverloaded, overloadDetail(sc.name))
		p.Instance, p.TraceID, p.RetryAfter = path, traceID, sh.retryAfter
		p.Rebase(sh.typeBase)
		p.Write(w)
	}
	sh.count(sc, traceID)
}

// overloaded is admit's refusal, 503 OVERLOADED with Retry-After, from
// within the pipeline (the request's trace id and access line); counted
// as refuse's.
func (sh *shedder) overloaded(sc *shedScope, traceID string) *problem.Problem {
	sh.count(sc, traceID)
	p := problem.New(problem.CodeOverloaded, overloadDetail(sc.name))
	p.RetryAfter = sh.retryAfter
	return p
}

// count counts a refusal by sc and logs at most one line per
// shedLogEvery.
func (sh *shedder) count(sc *shedScope, traceID string) {
	sc.shed.Inc()
	sh.unlogged.Add(1)
	now := time.Now().UnixNano()
	if last := sh.lastLog.Load(); now-last >= int64(shedLogEvery) && sh.lastLog.CompareAndSwap(last, now) {
		sh.log.Warn("shedding load", "scope", sc.name, "shed", sh.unlogged.Swap(0),
			"maxInFlight", sc.lim.Max(), "traceId", traceID)
	}
}

// refusalTraceID is requestTraceID without canonicalising the header
// names each time (the keys below are canonical already).
func refusalTraceID(r *http.Request) string {
	one := func(vs []string) string {
		if len(vs) == 1 {
			return vs[0]
		}
		return ""
	}
	if id, ok := traceid.Choose(one(r.Header[traceHeader]), one(r.Header["Traceparent"])); ok {
		return id
	}
	return traceid.New()
}

func isAPIPath(p string) bool { return p == "/api" || strings.HasPrefix(p, "/api/") }

// wholeSeconds rounds d up to whole seconds, at least 1 (Retry-After takes
// whole seconds, RFC 9110 section 10.2.3).
func wholeSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
