package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync/atomic"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"github.com/portico-gateway/portico/gateway/apiref"
	"github.com/portico-gateway/portico/gateway/auth"
	"github.com/portico-gateway/portico/gateway/config"
	"github.com/portico-gateway/portico/gateway/health"
	"github.com/portico-gateway/portico/gateway/problem"
	"github.com/portico-gateway/portico/gateway/route"
)

// snapshot is everything the edge builds from one Config: the runtime
// objects a request uses, all immutable once built. The Server holds the
// live one in an atomic pointer; a request takes it once, at its start, and
// uses only it, so a reload never changes a request halfway. A component
// that other config builds (a limiter, an authenticator kind, in-flight
// caps) joins hot reload by being a field here, set in build.
type snapshot struct {
	cfg       config.Config
	version   Version
	auth      Authenticator
	policy    *auth.Policy
	cors      *cors
	table     *route.Table
	endpoints map[*route.Route]*endpoint
	mux       *runtime.ServeMux
	direct    directCalls // the routes served by their handler, not through mux (direct.go)
	upstreams map[string]*upstreamConn
	health    *health.Checker
	shed      *shedder // load shedding, the pipeline's first step
	clients   clients  // finds a request's client address (limits.clients), for the per-client cap
	maxBody   int64    // the largest body any route accepts: the most read before routing
	limits    *limiter // rate limits; nil without a limits section
	identity  *signer  // signs upstream calls' identity; nil without an identity section
	tls       *edgeTLS // new connections' TLS; nil for plaintext HTTP
	// openAPI is the document /openapi.json serves when auth.policy is
	// set: Server.openAPI with each operation's roles under this policy
	// (documentPolicy). nil means Server.openAPI as is.
	openAPI []byte
	// openAPIServed is openAPI as /openapi.json serves it, compressed
	// once when the snapshot is built; nil when openAPI is.
	openAPIServed *apiref.File
	// nonces is the signed requests' nonce store, from nonceSet: the
	// stores of Server.nonces this snapshot holds until it drains.
	nonces   auth.NonceStore
	nonceSet *nonceSet
	// tickets issues and redeems stream tickets (tickets.go); replaced
	// when the identity keys rotate, as its keys derive from them.
	tickets atomic.Pointer[auth.Tickets]
	// staleShared is the Redis tier of stale copies; nil without Redis.
	staleShared *staleShared

	// refs counts the requests using the snapshot, plus one while it is
	// the live one. At zero it is drained: its upstream references are
	// released, closing connections no later snapshot shares.
	refs atomic.Int64
}

// build turns cfg (validated, defaults applied) into a snapshot: the one
// place config becomes runtime objects. It is a function of cfg and the
// Server's fixed options; prev (nil at start) only lends the upstream
// connections whose settings are unchanged, so breaker, ejection and
// connection state survive a reload. prev is never changed. On error
// everything new is closed again.
func (s *Server) build(ctx context.Context, cfg config.Config, prev *snapshot) (_ *snapshot, err error) {
	sn := &snapshot{cfg: cfg, version: versionOf(cfg), upstreams: map[string]*upstreamConn{}}
	sn.refs.Store(1)
	sn.nonceSet = s.nonces.next(cfg)
	sn.nonces = sn.nonceSet.store
	defer func() {
		if err != nil {
			sn.releaseUpstreams(s)
		}
	}()
	if sn.table, sn.endpoints, err = buildRoutes(cfg, s.o.registrations); err != nil {
		return nil, err
	}
	sn.clients, sn.maxBody = newClients(cfg.Limits.Clients), maxBodyOf(sn.endpoints)
	if err = s.buildAccess(sn); err != nil {
		return nil, err
	}
	s.documentLoaded(cfg, sn)
	if sn.openAPI != nil {
		if sn.openAPIServed, err = apiref.Document(sn.openAPI); err != nil {
			return nil, fmt.Errorf("gateway: /openapi.json: %w", err)
		}
	}
	if sn.identity, err = s.signerFor(cfg, prev); err != nil {
		return nil, fmt.Errorf("gateway: identity: %w", err)
	}
	sn.tickets.Store(s.ticketsFor(sn, sn.identity.keys()))
	if sn.tls, err = s.tlsFor(cfg, prev); err != nil {
		return nil, fmt.Errorf("gateway: tls: %w", err)
	}
	var deps []health.Dependency
	for _, up := range cfg.Upstreams {
		uc, err := s.upstreamFor(ctx, up, prev)
		if err != nil {
			return nil, err
		}
		sn.upstreams[up.Name] = uc
		deps = append(deps, health.Dependency{Name: up.Name, Service: up.HealthService, Conn: uc.probe, Usable: uc.awaitReady})
	}
	capture := &muxCapture{}
	sn.mux = s.newMux(capture)
	for _, reg := range builtIn(cfg, s.o.registrations) {
		if err := reg.register(ctx, sn.mux, captureConn{sn.upstreams[reg.upstream].cc}); err != nil {
			return nil, fmt.Errorf("gateway: register %s: %w", reg.service, err)
		}
	}
	if err := registerLoaded(cfg, sn); err != nil {
		return nil, err
	}
	sn.direct = captureDirect(ctx, sn.mux, capture, sn.table.Routes())
	// One checker per snapshot: its reports (reused for
	// health.DefaultMaxAge, one round at a time) follow this config's
	// upstreams, and a reload starts afresh.
	sn.health = health.NewChecker("api-gateway", deps, cfg.Health.Timeout, health.WithMaxAge(s.o.healthMaxAge))
	var prevShed *shedder
	if prev != nil {
		prevShed = prev.shed
	}
	if sn.shed, err = newShedder(cfg.Shed, cfg.Problems.TypeBase, sn.table, s.shedTotal, s.log, prevShed); err != nil {
		return nil, err
	}
	var prevLimits *limiter
	if prev != nil {
		prevLimits = prev.limits
	}
	if sn.limits, err = newLimiter(cfg, sn.table.Routes(), s.log, s.o.limitClock, prevLimits, s.o.redisProbed); err != nil {
		return nil, err
	}
	if sn.staleShared, err = staleSharedFor(cfg, prev); err != nil {
		return nil, err
	}
	s.metrics.Init(knownRoutes(sn.endpoints), problem.Catalogue())
	s.metrics.InitStale(staleRoutes(sn.endpoints), staleReasons)
	s.metrics.InitRefusals(limitLayers(cfg.Limits), authReasons)
	return sn, nil
}

// upstreamFor returns prev's connection to up when its settings are the
// same (retained), else dials a new one.
func (s *Server) upstreamFor(ctx context.Context, up config.UpstreamConfig, prev *snapshot) (*upstreamConn, error) {
	if prev != nil {
		if old, ok := prev.upstreams[up.Name]; ok && sameConn(old.cfg, up) {
			old.refs.Add(1)
			return old, nil
		}
	}
	cc, err := s.o.dial(ctx, up)
	if err != nil {
		return nil, fmt.Errorf("gateway: dial upstream %s: %w", up.Name, err)
	}
	p, err := newProbe(ctx, up)
	if err != nil {
		_ = s.closeConn(cc)
		return nil, fmt.Errorf("gateway: dial upstream %s for /health: %w", up.Name, err)
	}
	// Start connecting now, so the first request after a reload does not
	// pay for it (grpc-go connects lazily otherwise).
	cc.Connect()
	uc := &upstreamConn{cfg: up, cc: cc, probe: p}
	uc.refs.Store(1)
	return uc, nil
}

// sameConn reports whether a connection dialled for a serves b unchanged:
// everything but Timeout (the edge's route deadline, not the chain's) is
// equal. A changed address list is a new connection: its instances and
// their state start afresh, and the old one drains.
func sameConn(a, b config.UpstreamConfig) bool {
	a.Timeout, b.Timeout = 0, 0
	a.Services, b.Services = nil, nil // what is served, not how it is dialled
	a.Descriptors, b.Descriptors = "", ""
	a.Reflection, b.Reflection = false, false
	return reflect.DeepEqual(a, b)
}

// upstreamConn is one upstream's API connection (through the DialFunc)
// and /health's probe, shared by every snapshot whose upstream settings
// are the same. refs counts those snapshots; the last to drain closes it.
type upstreamConn struct {
	cfg   config.UpstreamConfig
	cc    *grpc.ClientConn
	probe *probe
	refs  atomic.Int64
}

// acquire returns the live snapshot with a reference the caller must
// release. It never returns a drained snapshot while one is live: a
// snapshot retired between the load and the increment is skipped for the
// new live one. After Close there is none; the closed one is returned and
// its calls fail cleanly.
func (s *Server) acquire() *snapshot {
	for {
		sn := s.snap.Load()
		for n := sn.refs.Load(); n > 0; n = sn.refs.Load() {
			if sn.refs.CompareAndSwap(n, n+1) {
				return sn
			}
		}
		if s.snap.Load() == sn { // closed
			sn.refs.Add(1)
			return sn
		}
	}
}

// release drops one reference; the last one releases the upstreams.
func (sn *snapshot) release(s *Server) {
	if sn.refs.Add(-1) == 0 {
		sn.releaseUpstreams(s)
	}
}

// releaseUpstreams drops the snapshot's reference to each upstream
// connection and nonce store and closes those no other snapshot holds.
func (sn *snapshot) releaseUpstreams(s *Server) {
	errs := []error{sn.limits.close(), s.nonces.release(sn.nonceSet), sn.staleShared.release()}
	for _, uc := range sn.upstreams {
		if uc.refs.Add(-1) == 0 {
			errs = append(errs, s.closeConn(uc.cc), uc.probe.close())
			s.log.Debug("upstream connection closed", "upstream", uc.cfg.Name)
		}
	}
	if err := errors.Join(errs...); err != nil && !errors.Is(err, os.ErrClosed) {
		s.log.Debug("closing upstream connections", "err", err.Error())
	}
}

// closeConn closes an API connection through its owner: the Upstreams set
// when the edge was built WithUpstreams (it also stops the chain's DNS
// refresher), else the connection itself.
func (s *Server) closeConn(cc *grpc.ClientConn) error {
	if s.o.upstreams != nil {
		return s.o.upstreams.release(cc)
	}
	return cc.Close()
}
